/* SPDX-License-Identifier: MIT */
/*
 * gaptrace dump: print a trace's header, records and read statistics as
 * text, one record per line. For debugging and for tests; `report` is what
 * people read.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "gaptrace/format.h"

static struct {
	int stats_only;
	int strict;
	long limit;
	uint32_t type;
} opts;

static const char usage_text[] =
	"usage: gaptrace dump [options] TRACE\n"
	"\n"
	"Print every record of a trace, one per line.\n"
	"\n"
	"  -s, --stats        print only the header and read statistics\n"
	"  -t, --type NAME    only records of this type (kernel, api, memcpy, ...)\n"
	"  -n, --limit N      stop after N records\n"
	"      --strict       stop at the first corrupt frame (exit 1)\n"
	"  -h, --help         this text\n"
	"\n"
	"example:\n"
	"  gaptrace dump -t kernel -n 20 gaptrace-1234.gtrace\n";

static void log_problem(void *user, const gt_errinfo *ei)
{
	(void)user;
	fprintf(stderr, "gaptrace dump: warning: %s\n", ei->msg);
}

static const char *S(const gt_reader *r, uint32_t id)
{
	const char *s = id ? gt_reader_string(r, id) : NULL;
	return s ? s : "-";
}

static void print_record(const gt_reader *r, const gt_record *x)
{
	switch (x->type) {
	case GT_REC_STRING: printf("string id=%u \"%s\"\n", x->string.id, x->string.str); break;
	case GT_REC_DEVICE:
		printf("device id=%u name=\"%s\" sms=%u cc=%u.%u mem=%" PRIu64 "\n", x->device.id,
		       x->device.name, x->device.sm_count, x->device.cc_major, x->device.cc_minor,
		       x->device.global_mem_bytes);
		break;
	case GT_REC_CONTEXT:
		printf("context id=%u device=%u\n", x->context.id, x->context.device_id);
		break;
	case GT_REC_PROCESS:
		printf("process pid=%u ppid=%u exe=%s\n", x->process.pid, x->process.ppid,
		       S(r, x->process.exe_id));
		break;
	case GT_REC_THREAD:
		printf("thread tid=%u name=%s\n", x->thread.tid, S(r, x->thread.name_id));
		break;
	case GT_REC_CLOCK:
		printf("clock trace=%" PRIu64 " realtime=%" PRIu64 "\n", x->clock.trace_ns,
		       x->clock.realtime_ns);
		break;
	case GT_REC_KERNEL: {
		const gt_kernel *k = &x->kernel;
		printf("kernel %" PRIu64 " +%" PRIu64 " dev=%u ctx=%u stream=%u corr=%u grid=%ux%ux%u "
		       "block=%ux%ux%u regs=%u smem=%u+%u graph=%u name=%s\n",
		       k->start, k->end - k->start, k->device_id, k->context_id, k->stream_id,
		       k->correlation_id, k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y,
		       k->block_z, k->registers, k->static_smem, k->dynamic_smem, k->graph_id,
		       S(r, k->name_id));
		break;
	}
	case GT_REC_MEMCPY: {
		const gt_memcpy *m = &x->memcpy;
		printf("memcpy %" PRIu64 " +%" PRIu64 " %s %s->%s bytes=%" PRIu64
		       " dev=%u stream=%u corr=%u%s\n",
		       m->start, m->end - m->start, gt_copy_kind_name(m->copy_kind),
		       gt_mem_kind_name(m->src_kind), gt_mem_kind_name(m->dst_kind), m->bytes,
		       m->device_id, m->stream_id, m->correlation_id,
		       m->flags & GT_MFLAG_ASYNC ? " async" : "");
		break;
	}
	case GT_REC_MEMSET:
		printf("memset %" PRIu64 " +%" PRIu64 " bytes=%" PRIu64 " dev=%u stream=%u\n",
		       x->memset.start, x->memset.end - x->memset.start, x->memset.bytes,
		       x->memset.device_id, x->memset.stream_id);
		break;
	case GT_REC_SYNC:
		printf("sync %" PRIu64 " +%" PRIu64 " %s stream=%u corr=%u\n", x->sync.start,
		       x->sync.end - x->sync.start, gt_sync_type_name(x->sync.type), x->sync.stream_id,
		       x->sync.correlation_id);
		break;
	case GT_REC_API:
		printf("api %" PRIu64 " +%" PRIu64 " tid=%u corr=%u %s\n", x->api.start,
		       x->api.end - x->api.start, x->api.thread_id, x->api.correlation_id,
		       S(r, x->api.name_id));
		break;
	case GT_REC_NVTX:
		printf("nvtx %" PRIu64 " id=%" PRIu64 " flags=%u tid=%u %s\n", x->nvtx.ts, x->nvtx.id,
		       x->nvtx.flags, x->nvtx.thread_id, S(r, x->nvtx.name_id));
		break;
	case GT_REC_OVERHEAD:
		printf("overhead %" PRIu64 " +%" PRIu64 " kind=%u\n", x->overhead.start,
		       x->overhead.end - x->overhead.start, x->overhead.kind);
		break;
	case GT_REC_NVML:
		printf("nvml %" PRIu64 " dev=%u sm=%uMHz power=%umW util=%u%% reasons=0x%" PRIx64 "\n",
		       x->nvml.ts, x->nvml.device_id, x->nvml.sm_clock_mhz, x->nvml.power_mw,
		       x->nvml.gpu_util, x->nvml.clocks_event_reasons);
		break;
	case GT_REC_NVML_PROC:
		printf("nvml_proc %" PRIu64 " dev=%u pid=%u sm=%u%%\n", x->nvml_proc.ts,
		       x->nvml_proc.device_id, x->nvml_proc.pid, x->nvml_proc.sm_util);
		break;
	case GT_REC_LOSS:
		printf("loss %" PRIu64 "..%" PRIu64 " %s count=%" PRIu64 " bytes=%" PRIu64 " %s\n",
		       x->loss.start, x->loss.end, gt_loss_what_name(x->loss.what), x->loss.count,
		       x->loss.bytes, S(r, x->loss.reason_id));
		break;
	case GT_REC_NOTE:
		printf("note %" PRIu64 " code=%u %s\n", x->note.ts, x->note.code, S(r, x->note.text_id));
		break;
	default: printf("type %u\n", x->type); break;
	}
}

static uint32_t type_by_name(const char *s)
{
	for (uint32_t t = 1; t < GT_REC_TYPE_LIMIT; t++) {
		const char *n = gt_rec_type_name(t);
		if (n && !strcmp(n, s))
			return t;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option lo[] = {
		{"stats", no_argument, NULL, 's'}, {"type", required_argument, NULL, 't'},
		{"limit", required_argument, NULL, 'n'}, {"strict", no_argument, NULL, 1},
		{"help", no_argument, NULL, 'h'}, {0},
	};
	int c, ret = 1;
	gt_reader *r = NULL;
	memset(&opts, 0, sizeof(opts));
	opts.limit = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "st:n:h", lo, NULL)) != -1) {
		switch (c) {
		case 's': opts.stats_only = 1; break;
		case 't':
			opts.type = type_by_name(optarg);
			if (!opts.type) {
				fprintf(stderr, "gaptrace dump: unknown record type '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n': opts.limit = strtol(optarg, NULL, 10); break;
		case 1: opts.strict = 1; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return 2;
	}
	gt_reader_opts ro = {.stop_on_corrupt = opts.strict};
	gt_errinfo ei = {0};
	r = gt_reader_open(argv[optind], &ro, &ei);
	if (!r) {
		fprintf(stderr, "gaptrace dump: %s: %s\n", argv[optind], ei.msg);
		goto out;
	}
	gt_reader_set_log(r, log_problem, NULL);
	const gt_stream_header *h = gt_reader_header(r);
	printf("# format %u.%u producer=%u pid=%u host=%s version=\"%s\" devices=%u cmd=\"%s\"\n",
	       h->major, h->minor, h->producer, h->pid, h->hostname, h->producer_version,
	       h->ndevices, h->cmdline);
	gt_record rec;
	long n = 0;
	int rc;
	while ((rc = gt_reader_next(r, &rec)) > 0) {
		if (opts.stats_only || (opts.type && rec.type != opts.type))
			continue;
		print_record(r, &rec);
		if (opts.limit >= 0 && ++n >= opts.limit)
			break;
	}
	const gt_reader_stats *st = gt_reader_get_stats(r);
	printf("# frames=%" PRIu64 " records=%" PRIu64 " bad_frames=%" PRIu64 " bad_bytes=%" PRIu64
	       " tail_bytes=%" PRIu64 " missing_frames=%" PRIu64 " bytes=%" PRIu64 "\n",
	       st->frames, st->records, st->bad_frames, st->bad_bytes, st->tail_bytes,
	       st->seq_missing, st->bytes);
	if (rc < 0) {
		fprintf(stderr, "gaptrace dump: %s: %s\n", argv[optind], gt_reader_error(r)->msg);
		goto out;
	}
	ret = 0;
out:
	gt_reader_close(r);
	return ret;
}
