/* SPDX-License-Identifier: MIT */
/* `gaptrace collector`'s live analysis: see live_cli.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/live.h"
#include "gaptrace/metrics_http.h"
#include "gaptrace/metrics_textfile.h"
#include "live_cli.h"

_Static_assert((int)GT_LIVE_HEADER == (int)GT_TAP_HEADER &&
		       (int)GT_LIVE_FRAME == (int)GT_TAP_FRAME &&
		       (int)GT_LIVE_END == (int)GT_TAP_END,
	       "the live analysis reads the collector's tap");

struct gt_cli_live {
	gt_live *live;
	gt_collector *coll;
	gt_cli_live_opts o;
	gt_http_server *http;
	pthread_mutex_t coll_lock; /* coll: set and cleared by the main thread,
				      read by the server, live and loop threads */
	char endpoint[300];
	int textfile_failed; /* said once */
};

static void node_read(gt_collector *c, gt_live_node *nd);

/* The node's figures from the collector (thread-safe calls). */
static void node_of(gt_cli_live *g, gt_live_node *nd)
{
	memset(nd, 0, sizeof(*nd));
	pthread_mutex_lock(&g->coll_lock);
	if (g->coll)
		node_read(g->coll, nd);
	pthread_mutex_unlock(&g->coll_lock);
}

/* The figures of a collector alive now (node_of holds coll_lock). */
static void node_read(gt_collector *c, gt_live_node *nd)
{
	gt_collector_stats st;
	gt_collector_get_stats(c, &st);
	nd->conn_records_lost = st.records_lost;
	size_t n = gt_collector_peers(c, NULL, 0);
	gt_peer_info *pi = n ? calloc(n, sizeof(*pi)) : NULL;
	if (!pi)
		return;
	n = gt_collector_peers(c, pi, n);
	for (size_t i = 0; i < n; i++) {
		if (pi[i].state == GT_PEER_ARMED)
			nd->armed++;
		else if (pi[i].state == GT_PEER_DORMANT)
			nd->dormant++;
	}
	free(pi);
}

/* The exposition, for /metrics and the textfile (gt_metrics_render_fn). */
static int render(void *user, int openmetrics, gt_mbuf *body)
{
	gt_cli_live *g = user;
	gt_live_node nd;
	node_of(g, &nd);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return GT_ERR_NOMEM;
	int rc = gt_live_write_metrics(g->live, f, openmetrics, &nd);
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0)
		rc = gt_mbuf_append(body, buf, len);
	free(buf);
	return rc < 0 ? GT_ERR_NOMEM : 0;
}

/* After each window: the textfile, when asked for. */
static void on_window(void *user, uint64_t seq)
{
	(void)seq;
	gt_cli_live *g = user;
	if (!g->o.textfile_dir)
		return;
	gt_errinfo ei = {0};
	if (gt_textfile_write(g->o.textfile_dir, "gaptrace.prom", render, g, &ei) < 0) {
		if (!g->textfile_failed++ && g->o.log)
			g->o.log(g->o.log_user, GT_LOG_ERROR, ei.msg);
	} else if (g->textfile_failed) {
		g->textfile_failed = 0;
		if (g->o.log)
			g->o.log(g->o.log_user, GT_LOG_INFO, "textfile written again");
	}
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
	pthread_mutex_init(&g->coll_lock, NULL);
	gt_live_opts lo = {.window_ns = o->window_ns,
			   .watermark_ns = o->watermark_ns,
			   .max_wait_ns = o->max_wait_ns,
			   .mark_period_ns = o->mark_period_ns,
			   .trace_dir = o->trace_dir,
			   .log = live_log,
			   .log_user = g,
			   .on_window = on_window,
			   .window_user = g};
	g->live = gt_live_new(&lo);
	if (!g->live) {
		snprintf(why, cap, "cannot start the live analysis (out of memory)");
		free(g);
		return NULL;
	}
	if (o->metrics_addr) {
		gt_http_opts ho = {.addr = o->metrics_addr,
				   .render = render,
				   .user = g,
				   .log = o->log,
				   .log_user = o->log_user};
		gt_errinfo ei = {0};
		g->http = gt_http_start(&ho, &ei);
		if (!g->http) {
			snprintf(why, cap, "%s", ei.msg);
			gt_live_free(g->live);
			free(g);
			return NULL;
		}
		gt_http_addr ad;
		if (gt_http_parse_addr(o->metrics_addr, &ad, &ei) == 0)
			snprintf(g->endpoint, sizeof(g->endpoint), "%s%s%s:%d", ad.v6 ? "[" : "",
				 ad.host[0] ? ad.host : "*", ad.v6 ? "]" : "",
				 gt_http_port(g->http));
	}
	co->live_mark_ns = o->mark_period_ns;
	co->tap = gt_live_tap;
	co->tap_user = g->live;
	co->control_ext = control_ext;
	co->control_user = g;
	return g;
}

void gt_cli_live_attach(gt_cli_live *g, gt_collector *c)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->coll_lock);
	g->coll = c;
	pthread_mutex_unlock(&g->coll_lock);
}

const char *gt_cli_live_endpoint(const gt_cli_live *g)
{
	return g && g->http ? g->endpoint : NULL;
}

void gt_cli_live_stop(gt_cli_live *g)
{
	if (!g)
		return;
	gt_http_stop(g->http);
	gt_cli_live_attach(g, NULL);
	gt_live_free(g->live);
	pthread_mutex_destroy(&g->coll_lock);
	free(g);
}
