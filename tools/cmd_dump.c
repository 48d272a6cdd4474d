/* SPDX-License-Identifier: MIT */
/*
 * gaptrace dump: print a trace's header, records and read statistics as
 * text, one record per line. For debugging and for tests; `report` is what
 * people read.
 *
 * `dump --hex` prints every byte of a trace annotated field by field. It is
 * written from format/FORMAT.md with the public header only (its own
 * little-endian, varint and codec helpers), so it is a second, independent
 * decoder; FORMAT.md's example dump is its output.
 *
 * Every string from the trace (string records, names, paths, the header's
 * host and command line) is printed escaped (gaptrace/termtext.h): a name
 * with a newline in it cannot forge a record line, nor an ESC drive the
 * terminal. --hex quotes bytes with its own \xNN (quote()).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "cli.h"
#include "cmds.h"
#include "gaptrace/report_mem.h"
#include "gaptrace/format.h"
#include "gaptrace/termtext.h"

static struct {
	int stats_only;
	int strict;
	int hex;
	long limit;
	uint32_t type;
} opts;

enum { OPT_STRICT = 1, OPT_HEX };

static const char *type_words(void);

static const gt_cli_opt dump_opts[] = {
	GT_OPT('s', "stats", NULL, "print only the header and read statistics"),
	GT_OPT('t', "type", "NAME", "only records of this type (kernel, api, memcpy, ...)",
	       .complete = GT_CLI_WORDS, .words_fn = type_words),
	GT_OPT('n', "limit", "N", "stop after N records (in all; 0: header and statistics)"),
	GT_OPT(OPT_STRICT, "strict", NULL, "stop at the first corrupt frame (exit 1)"),
	GT_OPT(OPT_HEX, "hex", NULL, "annotated hex dump of every byte (FORMAT.md's layout)"),
	{0},
};
static const gt_cli_group dump_group = {"options", NULL, dump_opts, 0};

static const gt_cli_opt dump_exits[] = {
	GT_ITEM("0", "every trace was read to its end"),
	GT_ITEM("1",
		"a trace could not be read (or, with --strict, had a corrupt frame), or the output "
		"could not be written"),
	GT_ITEM("2", "bad usage"),
	{0},
};

static const gt_cli_help dump_help = {
	.name = "dump",
	.summary = "print the records of a trace as text",
	.usage = {"[options] TRACE"},
	.text = "Print every record of a trace, one per line, for debugging and for tests "
		"(`gaptrace report` is what people read). TRACE is a .gtrace file or a trace "
		"directory (each of its traces in turn, after a '== path' line).",
	.groups = {&dump_group},
	.exits = dump_exits,
	.examples = {"gaptrace dump -t kernel -n 20 gaptrace-1234.gtrace"},
	.see_also = "recover report",
	.operands = GT_CLI_TRACE,
};

const gt_cli_help *cmd_dump_help(void)
{
	return &dump_help;
}

static void log_problem(void *user, const gt_errinfo *ei)
{
	gt_model_say_path("gaptrace dump: warning", user, ei->msg, 0); /* user: the path */
}

/* s escaped for the terminal, in the next of a few buffers that live until
 * the process ends (one record line quotes at most E of them). */
static const char *En(const char *s, size_t n)
{
	enum { E_SLOTS = 4 };
	static char *slot[E_SLOTS];
	static size_t cap[E_SLOTS], next;
	size_t need = n * GT_TERM_ESCAPE_MAX + 1, k = next++ % E_SLOTS;
	if (need > cap[k]) {
		char *p = realloc(slot[k], need);
		if (!p)
			return "(out of memory)";
		slot[k] = p, cap[k] = need;
	}
	gt_term_escape(slot[k], cap[k], s, n);
	return slot[k];
}

static const char *E(const char *s)
{
	return En(s, strlen(s));
}

/* String id's text from the trace, escaped; "-" for none. */
static const char *S(const gt_reader *r, uint32_t id)
{
	const char *s = id ? gt_reader_string(r, id) : NULL;
	return s ? E(s) : "-";
}

/* A GPM percentage (hundredths) as "42.50%", "-" when not read. */
static const char *pct(char *buf, size_t cap, uint32_t v)
{
	if (v == UINT32_MAX)
		return "-";
	snprintf(buf, cap, "%u.%02u%%", v / 100, v % 100);
	return buf;
}

/* A GPM rate in bytes/s, "-" when not read. */
static const char *rate(char *buf, size_t cap, uint64_t v)
{
	if (v == UINT64_MAX)
		return "-";
	snprintf(buf, cap, "%" PRIu64, v);
	return buf;
}

static void print_gpm(const gt_gpm *g)
{
	char b[12][32];
	printf("gpm %" PRIu64 " +%" PRIu64 " dev=%u sm=%s occ=%s tensor=%s fp16=%s fp32=%s "
	       "fp64=%s dram=%s pcie_rx=%s pcie_tx=%s nvlink_rx=%s nvlink_tx=%s pcie_link=%s\n",
	       g->start, g->end - g->start, g->device_id, pct(b[0], 32, g->sm_util),
	       pct(b[1], 32, g->sm_occupancy), pct(b[2], 32, g->tensor_util),
	       pct(b[3], 32, g->fp16_util), pct(b[4], 32, g->fp32_util),
	       pct(b[5], 32, g->fp64_util), pct(b[6], 32, g->dram_bw_util),
	       rate(b[7], 32, g->pcie_rx_bps), rate(b[8], 32, g->pcie_tx_bps),
	       rate(b[9], 32, g->nvlink_rx_bps), rate(b[10], 32, g->nvlink_tx_bps),
	       rate(b[11], 32, g->pcie_link_bps));
}

static const char *const stack_triggers[] = {"?", "wait", "resume", "sampled"};

static void print_frame(const gt_reader *r, const gt_frame *f)
{
	if (f->kind == GT_FRAME_NATIVE)
		printf("frame stack=%u #%u native pc=0x%" PRIx64 "\n", f->stack_id, f->index,
		       f->pc);
	else
		printf("frame stack=%u #%u python %s:%u %s\n", f->stack_id, f->index,
		       S(r, f->file_id), f->line, S(r, f->func_id));
}

/* The 1.4 host-stack records. */
static void print_stack_record(const gt_reader *r, const gt_record *x)
{
	switch (x->type) {
	case GT_REC_STACK:
		printf("stack id=%u frames=%u flags=0x%x\n", x->stack.id, x->stack.nframes,
		       x->stack.flags);
		break;
	case GT_REC_FRAME: print_frame(r, &x->frame); break;
	case GT_REC_STACK_SAMPLE: {
		const gt_stack_sample *s = &x->stack_sample;
		printf("stack_sample %" PRIu64 " +%" PRIu64 " tid=%u corr=%u stack=%u %s cbid=%u "
		       "domain=%u\n",
		       s->ts, s->dur, s->thread_id, s->correlation_id, s->stack_id,
		       stack_triggers[s->trigger < 4 ? s->trigger : 0], s->cbid, s->domain);
		break;
	}
	default: {
		const gt_module *m = &x->module;
		printf("module %" PRIu64 " 0x%" PRIx64 "-0x%" PRIx64 " off=0x%" PRIx64
		       " size=%" PRIu64 " mtime_ns=%" PRIu64 " build_id=",
		       m->ts, m->start, m->end, m->offset, m->file_size, m->file_mtime_ns);
		for (uint32_t i = 0; i < m->build_id_len && i < GT_BUILD_ID_MAX; i++)
			printf("%02x", m->build_id[i]);
		printf(" %s\n", S(r, m->path_id));
		break;
	}
	}
}

/* The NCCL profiler plugin's records (format 1.7). */
static void print_nccl_record(const gt_reader *r, const gt_record *x)
{
	if (x->type == GT_REC_NCCL_COLL) {
		const gt_nccl_coll *c = &x->nccl_coll;
		printf("nccl_coll %" PRIu64 " +%" PRIu64 " comm=%016" PRIx64 " seq=%" PRIu64
		       " rank=%u/%u %s bytes=%" PRIu64 " count=%" PRIu64
		       " type=%s algo=%s proto=%s root=%u ch=%u warps=%u tid=%u v%u\n",
		       c->start, c->end - c->start, c->comm_hash, c->seq, c->rank, c->nranks,
		       S(r, c->func_id), c->bytes, c->count, S(r, c->datatype_id), S(r, c->algo_id),
		       S(r, c->proto_id), c->root, c->nchannels, c->nwarps, c->thread_id,
		       c->version);
		return;
	}
	const gt_nccl_p2p *p = &x->nccl_p2p;
	printf("nccl_p2p %" PRIu64 " +%" PRIu64 " comm=%016" PRIx64 " rank=%u/%u %s peer=%u"
	       " bytes=%" PRIu64 " count=%" PRIu64 " type=%s ch=%u tid=%u v%u\n",
	       p->start, p->end - p->start, p->comm_hash, p->rank, p->nranks, S(r, p->func_id),
	       p->peer, p->bytes, p->count, S(r, p->datatype_id), p->nchannels, p->thread_id,
	       p->version);
}

static void print_record(const gt_reader *r, const gt_record *x)
{
	switch (x->type) {
	case GT_REC_STRING:
		printf("string id=%u \"%s\"\n", x->string.id, En(x->string.str, x->string.len));
		break;
	case GT_REC_DEVICE:
		printf("device id=%u name=\"%s\" sms=%u cc=%u.%u mem=%" PRIu64 "\n", x->device.id,
		       E(x->device.name), x->device.sm_count, x->device.cc_major,
		       x->device.cc_minor, x->device.global_mem_bytes);
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
	case GT_REC_MARK:
		printf("mark ts=%" PRIu64 " through=%" PRIu64 "\n", x->mark.ts, x->mark.through);
		break;
	case GT_REC_KERNEL: {
		const gt_kernel *k = &x->kernel;
		printf("kernel %" PRIu64 " +%" PRIu64
		       " dev=%u ctx=%u stream=%u corr=%u grid=%ux%ux%u "
		       "block=%ux%ux%u regs=%u smem=%u+%u graph=%u",
		       k->start, k->end - k->start, k->device_id, k->context_id, k->stream_id,
		       k->correlation_id, k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y,
		       k->block_z, k->registers, k->static_smem, k->dynamic_smem, k->graph_id);
		/* the latency timestamps, as signed offsets from the start */
		if (k->queued)
			printf(" queued=%+" PRId64, (int64_t)(k->queued - k->start));
		if (k->submitted)
			printf(" submitted=%+" PRId64, (int64_t)(k->submitted - k->start));
		printf(" name=%s\n", S(r, k->name_id));
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
		       x->sync.end - x->sync.start, gt_sync_type_name(x->sync.type),
		       x->sync.stream_id, x->sync.correlation_id);
		break;
	case GT_REC_API:
		printf("api %" PRIu64 " +%" PRIu64 " tid=%u corr=%u %s\n", x->api.start,
		       x->api.end - x->api.start, x->api.thread_id, x->api.correlation_id,
		       S(r, x->api.name_id));
		break;
	case GT_REC_NVTX:
		printf("nvtx %" PRIu64 " id=%" PRIu64 " flags=%u tid=%u %s\n", x->nvtx.ts,
		       x->nvtx.id, x->nvtx.flags, x->nvtx.thread_id, S(r, x->nvtx.name_id));
		break;
	case GT_REC_OVERHEAD:
		printf("overhead %" PRIu64 " +%" PRIu64 " kind=%u\n", x->overhead.start,
		       x->overhead.end - x->overhead.start, x->overhead.kind);
		break;
	case GT_REC_NVML:
		printf("nvml %" PRIu64 " dev=%u sm=%uMHz power=%umW util=%u%% reasons=0x%" PRIx64
		       "\n",
		       x->nvml.ts, x->nvml.device_id, x->nvml.sm_clock_mhz, x->nvml.power_mw,
		       x->nvml.gpu_util, x->nvml.clocks_event_reasons);
		break;
	case GT_REC_NVML_PROC:
		printf("nvml_proc %" PRIu64 " dev=%u pid=%u sm=%u%%\n", x->nvml_proc.ts,
		       x->nvml_proc.device_id, x->nvml_proc.pid, x->nvml_proc.sm_util);
		break;
	case GT_REC_GPM: print_gpm(&x->gpm); break;
	case GT_REC_STACK:
	case GT_REC_FRAME:
	case GT_REC_STACK_SAMPLE:
	case GT_REC_MODULE: print_stack_record(r, x); break;
	case GT_REC_NCCL_COLL:
	case GT_REC_NCCL_P2P: print_nccl_record(r, x); break;
	case GT_REC_LOSS:
		printf("loss %" PRIu64 "..%" PRIu64 " %s count=%" PRIu64 " bytes=%" PRIu64 " %s\n",
		       x->loss.start, x->loss.end, gt_loss_what_name(x->loss.what), x->loss.count,
		       x->loss.bytes, S(r, x->loss.reason_id));
		break;
	case GT_REC_NOTE:
		printf("note %" PRIu64 " code=%u %s\n", x->note.ts, x->note.code,
		       S(r, x->note.text_id));
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

/* ------------------------------------------------------------ --hex */

/*
 * Layout of a line: offset (8 hex digits), two spaces, up to 16 bytes as
 * "xx " (48 columns), a space, the annotation. Longer fields continue on
 * lines without an annotation. FORMAT.md's example and its test rely on it.
 */
static const uint8_t *hx_base; /* offsets are printed relative to this */
static uint64_t hx_bias;       /* plus this */

static void hx(const uint8_t *p, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void hx(const uint8_t *p, size_t n, const char *fmt, ...)
{
	char note[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	size_t i = 0;
	do {
		size_t k = n - i < 16 ? n - i : 16;
		printf("%08" PRIx64 "  ", (uint64_t)(p + i - hx_base) + hx_bias);
		for (size_t j = 0; j < 16; j++)
			j < k ? printf("%02x ", p[i + j]) : printf("   ");
		printf(" %s\n", i == 0 ? note : "");
		i += k;
	} while (i < n);
}

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* LEB128 per FORMAT.md: at most 10 bytes, the 10th 0 or 1. @return its
 * length, 0 when malformed or cut. */
static size_t varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < 10 && p + i < end; i++) {
		if (i == 9 && p[i] > 1)
			return 0;
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80)
			return i + 1;
	}
	return 0;
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* REL per FORMAT.md: 0 is 0; else z = e - 1 if e <= z0, e otherwise, where
 * z0 = zigzag(-ref); v = ref + unzigzag(z). */
static uint64_t rel_decode(uint64_t e, uint64_t ref)
{
	if (e == 0)
		return 0;
	uint64_t neg = 0 - ref, z0 = (neg << 1) ^ (0 - (neg >> 63));
	uint64_t z = e <= z0 ? e - 1 : e;
	return ref + unzigzag(z);
}

/* A printable, quoted copy of n bytes (cut at 60). */
static const char *quote(const uint8_t *p, size_t n)
{
	static char q[256];
	size_t o = 0;
	q[o++] = '"';
	for (size_t i = 0; i < n && o < 200; i++) {
		if (i == 60) {
			o += (size_t)snprintf(q + o, sizeof(q) - o, "...");
			break;
		}
		if (isprint(p[i]) && p[i] != '"' && p[i] != '\\')
			q[o++] = (char)p[i];
		else
			o += (size_t)snprintf(q + o, sizeof(q) - o, "\\x%02x", p[i]);
	}
	q[o++] = '"';
	q[o] = 0;
	return q;
}

static const char *const codec_names[] = {"CONST", "PLAIN", "DELTA", "REL", "BYTES"};

static const char *codec_name(unsigned c)
{
	return c < 5 ? codec_names[c] : "unknown codec";
}

/* One block at p (its end at most end). @return the end of the block, or
 * NULL when it does not parse (the rest is dumped raw by the caller). */
static const uint8_t *hx_block(const uint8_t *p, const uint8_t *end)
{
	uint64_t rows, blen;
	if (end - p < 2)
		return NULL;
	unsigned type = p[0], ncols = p[1];
	const char *tn = gt_rec_type_name(type);
	hx(p, 1, "block: record type %u (%s)", type, tn ? tn : "unknown: skipped by length");
	hx(p + 1, 1, "  columns: %u", ncols);
	p += 2;
	size_t n = varint(p, end, &rows);
	if (!n)
		return NULL;
	hx(p, n, "  rows: %" PRIu64 " (varint)", rows);
	p += n;
	n = varint(p, end, &blen);
	if (!n || blen > (uint64_t)(end - p - n))
		return NULL;
	hx(p, n, "  body length: %" PRIu64 " bytes (varint)", blen);
	p += n;
	const uint8_t *bend = p + blen;
	if (!tn || (uint64_t)ncols * 6 > blen) {
		if (blen)
			hx(p, blen, "  body, not decoded");
		return bend;
	}
	const uint8_t *d = p, *c = p + 6 * ncols;
	uint32_t len[256];
	for (unsigned i = 0; i < ncols; i++) {
		len[i] = le32(d + 6 * i + 2);
		const char *cn = gt_rec_col_name(type, i, NULL);
		if (d[6 * i] == 3)
			hx(d + 6 * i, 6, "  column %u %s: REL to column %u, %u bytes", i,
			   cn ? cn : "(unknown)", d[6 * i + 1], len[i]);
		else
			hx(d + 6 * i, 6, "  column %u %s: %s, %u bytes", i, cn ? cn : "(unknown)",
			   codec_name(d[6 * i]), len[i]);
	}
	/* values of every column, kept for REL references (small blocks only;
	 * rows comes from the input: rows * ncols must not wrap) */
	uint64_t *vals =
		rows <= (1u << 20) / (ncols ? ncols : 1) ? calloc(rows * ncols + 1, 8) : NULL;
	for (unsigned i = 0; i < ncols; i++) {
		const char *cn = gt_rec_col_name(type, i, NULL);
		unsigned codec = d[6 * i], ref = d[6 * i + 1];
		const uint8_t *q = c, *qe = c + len[i];
		if (len[i] > (size_t)(bend - c)) {
			free(vals);
			return NULL;
		}
		c = qe;
		if (!cn || codec > 4) {
			if (len[i])
				hx(q, len[i], "  column %u: not decoded", i);
			continue;
		}
		uint64_t v, prev = 0;
		if (codec == 0) {
			n = varint(q, qe, &v);
			if (!n)
				goto raw;
			hx(q, n, "  %s: every row = %" PRIu64, cn, v);
			for (uint64_t r = 0; vals && r < rows; r++)
				vals[i * rows + r] = v;
			continue;
		}
		for (uint64_t r = 0; r < rows && q < qe; r++) {
			n = varint(q, qe, &v);
			if (!n)
				goto raw;
			if (codec == 4) {
				if (v > (uint64_t)(qe - q - n))
					goto raw;
				hx(q, n, "  %s[%" PRIu64 "]: length %" PRIu64, cn, r, v);
				if (v)
					hx(q + n, v, "    %s", quote(q + n, v));
				q += n + v;
				continue;
			}
			uint64_t x = v;
			if (codec == 2) {
				x = prev + unzigzag(v);
				prev = x;
				hx(q, n, "  %s[%" PRIu64 "]: %+" PRId64 " -> %" PRIu64, cn, r,
				   (int64_t)unzigzag(v), x);
			} else if (codec == 3 && vals && ref < i) {
				x = rel_decode(v, vals[ref * rows + r]);
				hx(q, n,
				   "  %s[%" PRIu64 "]: code %" PRIu64 " -> %" PRIu64
				   " (%s %+" PRId64 ")",
				   cn, r, v, x, gt_rec_col_name(type, ref, NULL),
				   (int64_t)(x - vals[ref * rows + r]));
			} else {
				hx(q, n, "  %s[%" PRIu64 "]: %" PRIu64, cn, r, v);
			}
			if (vals)
				vals[i * rows + r] = x;
			q += n;
		}
		continue;
	raw:
		if (qe > q)
			hx(q, (size_t)(qe - q), "  %s: malformed", cn);
	}
	if (c < bend)
		hx(c, (size_t)(bend - c), "  (bytes after the columns)");
	free(vals);
	return bend;
}

static void hx_payload(const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		const uint8_t *q = hx_block(p, end);
		if (!q) {
			hx(p, (size_t)(end - p), "malformed block: rest of the payload");
			return;
		}
		p = q;
	}
}

/* The value of a device field (tag 16) of the stream header: n bytes at v,
 * its fixed part length first. */
static void hx_device(const uint8_t *v, unsigned n)
{
	unsigned df = le16(v);
	hx(v, 2, "  device fixed part length %u", df);
	static const char *const dn[] = {"id",
					 "cc_major",
					 "cc_minor",
					 "sm_count",
					 "core_clock_khz",
					 "mem_clock_khz",
					 "mem_bus_width_bits",
					 "global_mem_bytes (u64)",
					 "l2_bytes",
					 "max_threads_per_sm",
					 "max_blocks_per_sm",
					 "max_regs_per_sm",
					 "max_regs_per_block",
					 "max_smem_per_sm",
					 "max_smem_per_block",
					 "max_threads_per_block",
					 "warp_size",
					 "pci_domain",
					 "pci_bus",
					 "pci_device"};
	const uint8_t *e = v + 2;
	if (df >= 100) {
		hx(e, 4, "  %s %u", dn[0], le32(e));
		hx(e + 4, 16, "  uuid");
		unsigned o = 20;
		for (unsigned i = 1; i < 20; i++) {
			if (i == 7) {
				hx(e + o, 8, "  %s %" PRIu64, dn[i], le64(e + o));
				o += 8;
			} else {
				hx(e + o, 4, "  %s %u", dn[i], le32(e + o));
				o += 4;
			}
		}
		if (df > 100)
			hx(e + 100, df - 100, "  device fields of a newer minor");
	} else if (df) {
		hx(e, df, "  device fields (short)");
	}
	if (n - 2 - df)
		hx(e + df, n - 2 - df, "  name %s", quote(e + df, n - 2 - df));
}

/* The stream header, hl bytes at p: prefix, fixed fields, TLV fields, CRC. */
static void hx_stream_header(const uint8_t *p, int hl)
{
	hx(p, 8, "stream magic \\x89 G T R \\r \\n \\x1a \\n");
	hx(p + 8, 2, "major version %u", le16(p + 8));
	hx(p + 10, 2, "minor version %u", le16(p + 10));
	hx(p + 12, 2, "oldest compatible major %u", le16(p + 12));
	hx(p + 14, 2, "flags (reserved, 0)");
	hx(p + 16, 4, "header length %u (everything up to and with the CRC)", le32(p + 16));
	uint32_t fixed = le32(p + 20);
	hx(p + 20, 4, "fixed part length %u", fixed);
	const uint8_t *x = p + 24;
	if (fixed >= 48) {
		char kinds[256];
		gt_kinds_format(le32(x + 12), kinds, sizeof(kinds));
		hx(x, 4, "producer %u", le32(x));
		hx(x + 4, 4, "pid %u", le32(x + 4));
		hx(x + 8, 4, "ppid %u", le32(x + 8));
		hx(x + 12, 4, "kinds 0x%x (%s)", le32(x + 12), kinds);
		hx(x + 16, 8, "trace_ns %" PRIu64 " (trace clock)", le64(x + 16));
		hx(x + 24, 8, "realtime_ns %" PRIu64 " (CLOCK_REALTIME)", le64(x + 24));
		hx(x + 32, 8, "monotonic_ns %" PRIu64 " (CLOCK_MONOTONIC)", le64(x + 32));
		hx(x + 40, 4, "cupti_version %u", le32(x + 40));
		hx(x + 44, 4, "driver_version %u", le32(x + 44));
		if (fixed > 48)
			hx(x + 48, fixed - 48, "fixed fields of a newer minor");
	} else if (fixed) {
		hx(x, fixed, "fixed fields (short: an older writer)");
	}
	x += fixed;
	const uint8_t *hend = p + hl - 4;
	static const char *const tags[] = {NULL, "hostname", "cmdline", "producer_version",
					   "session"};
	while (x + 4 <= hend) {
		unsigned tag = le16(x), n = le16(x + 2);
		if (n > hend - x - 4)
			break;
		const char *tn = tag >= 1 && tag <= 4 ? tags[tag]
				 : tag == 16	      ? "device"
						      : "unknown";
		hx(x, 4, "field: tag %u (%s), %u bytes", tag, tn, n);
		const uint8_t *v = x + 4;
		if (tag == 16 && n >= 2 && le16(v) <= n - 2u)
			hx_device(v, n);
		else if (n)
			hx(v, n, "  %s", quote(v, n));
		x += 4 + n;
	}
	if (x < hend)
		hx(x, (size_t)(hend - x), "malformed header fields");
	uint32_t crc = gt_crc32c(0, p, (size_t)hl - 4);
	hx(hend, 4, "header CRC32C 0x%08x (%s)", le32(hend), crc == le32(hend) ? "ok" : "BAD");
}

/* One frame at p, the file ending at end: its header, then its payload
 * (decompressed when zstd). @return the next frame, or NULL to stop. */
static const uint8_t *hx_frame(const uint8_t *p, const uint8_t *end)
{
	if (end - p < 32 || le32(p) != 0x52465447u) {
		hx(p, (size_t)(end - p), "not a frame: %zu bytes to the end", (size_t)(end - p));
		return NULL;
	}
	uint32_t clen = le32(p + 4), rlen = le32(p + 8), fl = le16(p + 24);
	hx(p, 4, "frame magic \"GTFR\"");
	hx(p + 4, 4, "payload length %u", clen);
	hx(p + 8, 4, "payload length uncompressed %u", rlen);
	hx(p + 12, 4, "records %u", le32(p + 12));
	hx(p + 16, 8, "sequence number %" PRIu64, le64(p + 16));
	hx(p + 24, 2, "flags 0x%x (%s)", fl, fl & 1 ? "zstd" : "uncompressed");
	hx(p + 26, 2, "reserved, 0");
	const uint8_t *pl = p + 32;
	int cut = clen > (size_t)(end - pl);
	uint32_t c = gt_crc32c(gt_crc32c(0, p, 28), pl, cut ? 0 : clen);
	hx(p + 28, 4, "CRC32C of bytes 0..27 and the payload 0x%08x (%s)", le32(p + 28),
	   cut		       ? "cut"
	   : c == le32(p + 28) ? "ok"
			       : "BAD");
	if (cut) {
		hx(pl, (size_t)(end - pl), "payload, cut: the trace ends inside this frame");
		return NULL;
	}
	if (!(fl & 1)) {
		hx_payload(pl, pl + clen);
	} else {
		if (clen)
			hx(pl, clen, "zstd frame (RFC 8878), decompressed below");
		uint8_t *raw = rlen <= GT_FRAME_MAX_RAW ? malloc(rlen + 1) : NULL;
		size_t got = raw ? ZSTD_decompress(raw, rlen, pl, clen) : 0;
		if (raw && !ZSTD_isError(got) && got == rlen) {
			const uint8_t *sb = hx_base;
			uint64_t sbias = hx_bias;
			printf("          -- payload of the frame above after "
			       "decompression; "
			       "offsets from its start --\n");
			hx_base = raw;
			hx_bias = 0;
			hx_payload(raw, raw + rlen);
			hx_base = sb;
			hx_bias = sbias;
			printf("          -- end of the decompressed payload --\n");
		} else {
			printf("          -- payload does not decompress --\n");
		}
		free(raw);
	}
	return pl + clen;
}

/* Reads exactly n bytes at off into b. @return 0, -1 when it could not
 * (said on stderr). */
static int hx_pread(int fd, const char *path, uint64_t off, uint8_t *b, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = pread(fd, b + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			gt_model_say_path("gaptrace dump", path,
					  k < 0 ? strerror(errno) : "file shrank", 0);
			return -1;
		}
		got += (size_t)k;
	}
	return 0;
}

/* Reads n bytes at off into a new buffer. @return it, NULL when it could
 * not (said on stderr). */
static uint8_t *hx_read(int fd, const char *path, uint64_t off, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		fprintf(stderr, "gaptrace dump: out of memory\n");
	else if (hx_pread(fd, path, off, b, n) < 0) {
		free(b);
		b = NULL;
	}
	return b;
}

/* The n bytes at off that are not a header or a frame, under note, 64 KiB
 * at a time. @return 0, or 1 when they could not be read. */
static int hx_rest(int fd, const char *path, uint64_t off, uint64_t n, const char *note)
{
	for (uint64_t done = 0; done < n;) {
		size_t k = n - done < 65536 ? (size_t)(n - done) : 65536;
		uint8_t *b = hx_read(fd, path, off + done, k);
		if (!b)
			return 1;
		hx_base = b;
		hx_bias = off + done;
		hx(b, k, "%s", done ? "" : note);
		free(b);
		done += k;
	}
	return 0;
}

/* Annotated hex dump of one trace file: the stream header field by field,
 * then every frame and its records. The file is read one header or frame
 * at a time (a frame's payload is at most GT_FRAME_MAX_COMPRESSED, and
 * GT_FRAME_MAX_RAW decompressed), so memory stays bounded whatever the
 * file's size. @return 0, or 1 when it could not be read or has no
 * complete stream header. */
static int hex_dump(const char *path)
{
	gt_errinfo ei;
	struct stat st;
	int fd = gt_trace_file_open(path, &ei); /* regular files only; never blocks */
	if (fd < 0 || fstat(fd, &st) < 0) {
		gt_model_say_path("gaptrace dump", path, fd >= 0 ? strerror(errno) : ei.msg, 0);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	uint64_t size = (uint64_t)st.st_size, off;
	char note[160];
	int ret = 1;
	printf("offset    bytes                                            field\n");
	size_t n = size < GT_HEADER_MAX ? (size_t)size : GT_HEADER_MAX;
	uint8_t *b = hx_read(fd, path, 0, n);
	if (!b)
		goto out;
	int hl = gt_stream_header_peek_len(b, n);
	free(b);
	if (hl <= 0 || (uint64_t)hl > size) {
		snprintf(note, sizeof(note), "not a complete stream header (%s)",
			 gt_strerror(hl <= 0 ? hl : GT_ERR_TRUNCATED));
		hx_rest(fd, path, 0, size, note);
		goto out;
	}
	if (!(b = hx_read(fd, path, 0, (size_t)hl)))
		goto out;
	hx_base = b;
	hx_bias = 0;
	hx_stream_header(b, hl);
	free(b);
	for (off = (uint64_t)hl; off < size;) {
		uint8_t fh[32];
		uint64_t left = size - off;
		uint32_t clen = 0;
		if (left >= 32 && hx_pread(fd, path, off, fh, sizeof(fh)) < 0)
			goto out;
		if (left >= 32 && le32(fh) == 0x52465447u)
			clen = le32(fh + 4);
		if (left < 32 || le32(fh) != 0x52465447u || clen > GT_FRAME_MAX_COMPRESSED) {
			if (clen > GT_FRAME_MAX_COMPRESSED)
				snprintf(note, sizeof(note),
					 "not a frame: payload length %u is over the format's "
					 "limit; %" PRIu64 " bytes to the end",
					 clen, left);
			else
				snprintf(note, sizeof(note),
					 "not a frame: %" PRIu64 " bytes to the end", left);
			ret = hx_rest(fd, path, off, left, note);
			goto out;
		}
		n = (size_t)(32 + clen < left ? 32 + clen : left);
		if (!(b = hx_read(fd, path, off, n)))
			goto out;
		hx_base = b;
		hx_bias = off;
		const uint8_t *next = hx_frame(b, b + n);
		free(b);
		if (!next)
			break;
		off += n;
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

/* Dump one trace file. @return 0, or 1 when it could not be (fully) read. */
static int dump_one(const char *path, long *printed)
{
	gt_reader_opts ro = {.stop_on_corrupt = opts.strict};
	gt_errinfo ei = {0};
	gt_reader *r = gt_reader_open(path, &ro, &ei);
	if (!r) {
		gt_model_say_path("gaptrace dump", path, ei.msg, 0);
		return 1;
	}
	gt_reader_set_log(r, log_problem, (void *)path);
	const gt_stream_header *h = gt_reader_header(r);
	printf("# format %u.%u producer=%u pid=%u host=%s version=\"%s\" devices=%u cmd=\"%s\"\n",
	       h->major, h->minor, h->producer, h->pid, E(h->hostname), E(h->producer_version),
	       h->ndevices, E(h->cmdline));
	gt_record rec;
	int rc = 0;
	/* the limit is checked before reading: -n 0 prints (and reads) none */
	while (!(opts.limit >= 0 && *printed >= opts.limit) && (rc = gt_reader_next(r, &rec)) > 0) {
		if (opts.stats_only || (opts.type && rec.type != opts.type))
			continue;
		print_record(r, &rec);
		++*printed;
	}
	const gt_reader_stats *st = gt_reader_get_stats(r);
	if (st->dup_frames)
		printf("# DUPLICATES SKIPPED: %" PRIu64 " frames had been read already (frames "
		       "written twice, or a file appended to itself)\n",
		       st->dup_frames);
	if (st->backward_frames)
		printf("# OUT OF ORDER: %" PRIu64 " frames came after frames with higher sequence "
		       "numbers (two streams in one file?)\n",
		       st->backward_frames);
	printf("# frames=%" PRIu64 " records=%" PRIu64 " bad_frames=%" PRIu64 " bad_bytes=%" PRIu64
	       " tail_bytes=%" PRIu64 " missing_frames=%" PRIu64 " bytes=%" PRIu64
	       " dup_frames=%" PRIu64 " backward_frames=%" PRIu64 "\n",
	       st->frames, st->records, st->bad_frames, st->bad_bytes, st->tail_bytes,
	       st->seq_missing, st->bytes, st->dup_frames, st->backward_frames);
	int ret = 0;
	if (rc < 0) {
		gt_model_say_path("gaptrace dump", path, gt_reader_error(r)->msg, 0);
		ret = 1;
	}
	gt_reader_close(r);
	return ret;
}

/* The record type names, for the completion of --type. */
static const char *type_words(void)
{
	static char words[1024];
	size_t n = 0;
	words[0] = 0;
	for (uint32_t t = 1; t < GT_REC_TYPE_LIMIT && n < sizeof(words); t++)
		if (gt_rec_type_name(t))
			n += (size_t)snprintf(words + n, sizeof(words) - n, "%s%s", n ? " " : "",
					      gt_rec_type_name(t));
	return words;
}

/* "unknown record type 'x'; the types are: string, device, ..." */
static void unknown_type(const char *name)
{
	fprintf(stderr, "gaptrace dump: unknown record type '%s'; the types are:", name);
	const char *sep = " ";
	for (uint32_t t = 1; t < GT_REC_TYPE_LIMIT; t++) {
		const char *n = gt_rec_type_name(t);
		if (n) {
			fprintf(stderr, "%s%s", sep, n);
			sep = ", ";
		}
	}
	fputc('\n', stderr);
}

int cmd_dump(int argc, char **argv)
{
	gt_cli_parser p;
	int c, ret = 0;
	char **paths = NULL, *one[1];
	size_t npaths = 0;
	int listed = 0;
	uint64_t limit;
	memset(&opts, 0, sizeof(opts));
	opts.limit = -1;
	gt_cli_parser_init(&p, &dump_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case GT_CLI_HELP: return 0;
		case GT_CLI_BAD: return 2;
		case 's': opts.stats_only = 1; break;
		case 't':
			opts.type = type_by_name(optarg);
			if (!opts.type) {
				unknown_type(optarg);
				return 2;
			}
			break;
		case 'n':
			if (gt_cli_count(&p, 0, LONG_MAX, &limit) < 0)
				return 2;
			opts.limit = (long)limit;
			break;
		case OPT_STRICT: opts.strict = 1; break;
		case OPT_HEX: opts.hex = 1; break;
		}
	}
	if (optind != argc - 1)
		return gt_cli_usage(&dump_help,
				    optind == argc ? "no TRACE given" : "one TRACE wanted");
	/* a trace directory, as `report` takes: each of its traces in turn */
	const char *arg = argv[optind];
	struct stat sb;
	if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		gt_errinfo ei;
		if (gt_trace_dir_list(arg, &paths, &npaths, &ei) < 0) {
			fprintf(stderr, "gaptrace dump: %s\n", ei.msg);
			return 1;
		}
		if (!npaths) {
			gt_model_no_traces("gaptrace dump", arg, 0);
			free(paths);
			return 1;
		}
		listed = 1;
	} else {
		one[0] = argv[optind];
		paths = one;
		npaths = 1;
	}
	long printed = 0;
	for (size_t i = 0; i < npaths; i++) {
		if (listed)
			printf("%s== %s\n", i ? "\n" : "", E(paths[i]));
		int rc = opts.hex ? hex_dump(paths[i]) : dump_one(paths[i], &printed);
		if (rc)
			ret = rc;
		if (opts.limit >= 0 && printed >= opts.limit && !opts.hex)
			break;
	}
	if (listed)
		gt_trace_dir_free(paths, npaths);
	/* a result is only a result if it was written (a full disk, a closed pipe) */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "gaptrace dump: writing the output failed: %s\n", strerror(errno));
		ret = 1;
	}
	return ret;
}
