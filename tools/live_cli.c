/* SPDX-License-Identifier: MIT */
/* `gaptrace collector`'s live analysis: see live_cli.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/live.h"
#include "live_cli.h"

_Static_assert((int)GT_LIVE_HEADER == (int)GT_TAP_HEADER &&
		       (int)GT_LIVE_FRAME == (int)GT_TAP_FRAME &&
		       (int)GT_LIVE_END == (int)GT_TAP_END,
	       "the live analysis reads the collector's tap");

struct gt_cli_live {
	gt_live *live;
	gt_collector *coll;
	gt_cli_live_opts o;
};

/* The node's figures from the collector (thread-safe calls). */
static void node_of(gt_cli_live *g, gt_live_node *nd)
{
	memset(nd, 0, sizeof(*nd));
	if (!g->coll)
		return;
	gt_collector_stats st;
	gt_collector_get_stats(g->coll, &st);
	nd->conn_records_lost = st.records_lost;
	nd->frames_unwritten = st.frames_unwritten;
	nd->peers_refused = st.peers_refused;
	size_t n = gt_collector_peers(g->coll, NULL, 0);
	gt_peer_info *pi = n ? calloc(n, sizeof(*pi)) : NULL;
	if (!pi)
		return;
	n = gt_collector_peers(g->coll, pi, n);
	for (size_t i = 0; i < n; i++) {
		if (pi[i].state == GT_PEER_ARMED)
			nd->armed++;
		else if (pi[i].state == GT_PEER_DORMANT)
			nd->dormant++;
	}
	free(pi);
}

static char *control_ext(void *user, const char *line)
{
	gt_cli_live *g = user;
	gt_live_node nd;
	node_of(g, &nd);
	return gt_live_control(g->live, line, &nd);
}

static void live_log(void *user, int level, const char *msg)
{
	gt_cli_live *g = user;
	if (g->o.log)
		g->o.log(g->o.log_user, level, msg);
}

gt_cli_live *gt_cli_live_start(const gt_cli_live_opts *o, gt_collector_opts *co, char *why,
			       size_t cap)
{
	gt_cli_live *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	g->o = *o;
	gt_live_opts lo = {.window_ns = o->window_ns,
			   .watermark_ns = o->watermark_ns,
			   .trace_dir = o->trace_dir,
			   .log = live_log,
			   .log_user = g};
	g->live = gt_live_new(&lo);
	if (!g->live) {
		snprintf(why, cap, "cannot start the live analysis (out of memory)");
		free(g);
		return NULL;
	}
	co->tap = gt_live_tap;
	co->tap_user = g->live;
	co->control_ext = control_ext;
	co->control_user = g;
	return g;
}

void gt_cli_live_attach(gt_cli_live *g, gt_collector *c)
{
	if (g)
		g->coll = c;
}

const char *gt_cli_live_endpoint(const gt_cli_live *g)
{
	(void)g;
	return NULL;
}

void gt_cli_live_stop(gt_cli_live *g)
{
	if (!g)
		return;
	g->coll = NULL;
	gt_live_free(g->live);
	free(g);
}
