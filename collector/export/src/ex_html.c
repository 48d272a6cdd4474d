/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained file, inline CSS and SVG, no script.
 *
 * Design
 *   Everything shown comes from the analysis (and the diagnosis when this
 *   build has it), plus NVML samples and GPM readings read from the traces
 *   that hold them.
 *   The page size does not grow with the trace: time series are binned into
 *   a fixed number of columns, tables are capped at opts.top_rows.
 *
 *   Utilization over time: the chart has NCOL columns over the GPU's window.
 *   The gaps of 10 us or more (the analysis's cause columns,
 *   gt_analysis_cause_columns, made in its one sweep) are placed exactly: each
 *   gap's per-cause ns are spread over the columns it overlaps in proportion
 *   to the overlap (the analysis gives a gap's split, not where in the gap
 *   each cause lies). The rest of the idle time - shorter gaps, or gaps past
 *   the cap - is known only per utilization window (the analysis' series):
 *   each window's idle time minus its detailed gaps is spread over the
 *   window's columns in proportion to their time not covered by detailed
 *   gaps, and drawn as "short gaps" in light grey. What is left is busy.
 *   So each window's busy and idle add up exactly to the analysis' figures,
 *   long gaps sit where they happened, and nothing is invented.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex_internal.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/units.h"

/* Timeline geometry (SVG user units; the SVG scales to the page width). */
#define TL_W 960
#define TL_X0 52
#define TL_X1 944
#define AXIS_MAX_TICKS 64 /* ~8 wanted; the bound whatever the window */
#define TL_PLOT_H 150
#define TIP_COLS 10 /* columns per tooltip rectangle */

/* One color per id, for every mark and legend of the page: the idle causes
 * (gt_cause_name), the wall-time breakdown's parts (finding ids and the fixed
 * parts of gt_diag_part), "busy" and "short gaps". The findings' colors are
 * the color column of GT_FINDINGS (diagnosis.h), so a new finding comes with
 * one. A finding named like a cause (host_busy, sync_turnaround, launch_bound,
 * other_process) is that cause's time, so the cause has that finding's color;
 * transfer (transfer_bound), dependency (dependency_wait) and busy
 * (productive) share theirs too. Within one chart every id has a color of its
 * own; tests/export/check_export.py checks that each id has one color on the
 * whole page. */
#define BUSY_COLOR "#2f6fbd"
#define SHORT_COLOR "#e3e8ee"
#define FINDING_COLOR(name, id, claim, color) {#id, color},
static const struct {
	const char *id, *color;
} palette[] = {
	/* the finding ids, and so the idle causes named like one */
	GT_FINDINGS(FINDING_COLOR)
	/* the other idle causes */
	{"transfer", "#1b9aaa"},
	{"dependency", "#9a6700"},
	{"unknown", "#8c959f"},
	{"startup", "#c8d1da"},
	{"data_lost", "#57606a"},
	/* busy, and the fixed parts of the breakdown */
	{"busy", BUSY_COLOR},
	{"short gaps", SHORT_COLOR},
	{"productive", BUSY_COLOR},
	{"idle_other", "#c4b48c"},
	{"comm_exposed", "#d2a8ff"},
	/* the GPM chart's lines (ex_gpm_defs' track names) */
	{"SM active", "#0550ae"},
	{"SM occupancy", "#8250df"},
	{"tensor pipe", "#1a7f37"},
	{"DRAM bandwidth", "#bc4c00"},
};
#undef FINDING_COLOR
#define OTHER_COLOR "#afb8c1" /* an id the table does not know yet */

static const char *color_of(const char *id)
{
	for (size_t i = 0; i < sizeof(palette) / sizeof(palette[0]); i++)
		if (!strcmp(palette[i].id, id))
			return palette[i].color;
	return OTHER_COLOR;
}

static const char *const cause_help[GT_CAUSE_COUNT] = {
	"no thread was in CUDA: Python, data loading, I/O, logging",
	"the host returned from a synchronize and had not refilled the queue",
	"the feeding thread was inside launch calls, or launch latency",
	"the feeding thread was blocked in a copy (e.g. pageable memory)",
	"queued work waited on an event, another stream or another GPU",
	"another process used the GPU",
	"no evidence (no API records for the work)",
	"start-up: initialization before the program's work began, and its warm-up (set aside)",
	"unknown (data lost): the trace lost or could not read this time's records",
};

/* ------------------------------------------------------------ formatting */

static void fmt_count(char *b, size_t cap, uint64_t v)
{
	if (v < 100000)
		snprintf(b, cap, "%llu", (unsigned long long)v);
	else if (v < 100000000)
		snprintf(b, cap, "%.3gk", v / 1e3);
	else
		snprintf(b, cap, "%.3gM", v / 1e6);
}

static void put_dur(ex_out *o, double ns)
{
	char b[32];
	gt_fmt_ns(b, sizeof(b), ns);
	ex_puts(o, b);
}

static void put_pct(ex_out *o, double frac)
{
	ex_fixed(o, 100.0 * frac, frac < 0.1 ? 1 : 0, "-");
	ex_putc(o, '%');
}

/* A share as the text report prints it (one decimal, printf rounding). */
static void put_share(ex_out *o, double share)
{
	ex_printf(o, "%.1f%%", 100.0 * share);
}

/* A coordinate with one decimal. */
static void put_xy(ex_out *o, double x, double y)
{
	ex_fixed(o, x, 1, "0");
	ex_putc(o, ',');
	ex_fixed(o, y, 1, "0");
}

static void h(ex_out *o, const char *s)
{
	ex_html_cstr(o, s);
}

/* "nice" tick step for a span: 1, 2 or 5 times a power of ten, ~n ticks. */
static double nice_step(double span, int n)
{
	if (span <= 0)
		return 1;
	double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void tick_label(char *b, size_t cap, double ns, double step)
{
	if (step >= 1e9)
		snprintf(b, cap, "%.*f s", fmod(step, 1e9) ? 1 : 0, ns / 1e9);
	else if (step >= 1e6)
		snprintf(b, cap, "%.*f ms", fmod(step, 1e6) ? 1 : 0, ns / 1e6);
	else if (step >= 1e3)
		snprintf(b, cap, "%.*f us", fmod(step, 1e3) ? 1 : 0, ns / 1e3);
	else
		snprintf(b, cap, "%.0f ns", ns);
}

/* ------------------------------------------------------------ page parts */

static const char css[] =
	":root{--fg:#1f2328;--mut:#59636e;--bg:#fff;--card:#f6f8fa;--bd:#d1d9e0;--busy:" BUSY_COLOR
	"}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"
	"'Segoe UI',Roboto,'DejaVu Sans',Helvetica,Arial,sans-serif}\n"
	"main{max-width:1100px;margin:0 auto;padding:18px 22px 48px}\n"
	"h1{font-size:22px;margin:0}h2{font-size:18px;margin:30px 0 10px;padding-bottom:4px;"
	"border-bottom:1px solid var(--bd)}h3{font-size:15px;margin:22px 0 6px}\n"
	".sub{color:var(--mut);margin:2px 0 0}.mut{color:var(--mut)}.small{font-size:12px}\n"
	".kpis{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0 4px}\n"
	".kpi{background:var(--card);border:1px solid var(--bd);border-radius:6px;padding:5px 10px;"
	"min-width:112px}.kpi b{display:block;font-size:17px}.kpi "
	"span{color:var(--mut);font-size:12px}\n"
	"svg{display:block;width:100%;height:auto;overflow:visible}\n"
	"svg text{font:11px system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
	"fill:#59636e}svg .ax{stroke:#afb8c1;stroke-width:1}svg "
	".gr{stroke:#eaeef2;stroke-width:1}\n"
	"svg rect.tip{fill:transparent}svg rect.tip:hover{fill:rgba(0,0,0,.06)}\n"
	".row3{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:14px}\n"
	"figure{margin:6px 0 10px}figcaption{color:var(--mut);font-size:12px;margin:2px 0}\n"
	"table{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0}\n"
	"th,td{padding:3px 7px;border-bottom:1px solid #eaeef2;text-align:right;white-space:nowrap;"
	"vertical-align:top}th{background:var(--card);font-weight:600}\n"
	"td.l,th.l{text-align:left}td.name{text-align:left;white-space:normal;word-break:break-"
	"word;"
	"font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',monospace;"
	"font-size:12px}\n"
	".bar{display:inline-block;height:9px;background:var(--busy);vertical-align:middle;"
	"border-radius:1px;margin-right:4px}\n"
	".legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:4px 0}\n"
	".sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;"
	"vertical-align:-1px}\n"
	".finding{border:1px solid var(--bd);border-left:5px solid #8c959f;border-radius:6px;"
	"padding:8px 12px;margin:10px 0;background:#fff}\n"
	".finding.high{border-left-color:#d1242f}.finding.medium{border-left-color:#d4a72c}\n"
	".finding .t{font-weight:600;font-size:15px}.finding .fix{margin:4px 0 0}\n"
	".badge{display:inline-block;font-size:11px;border-radius:10px;padding:0 7px;"
	"background:var(--card);border:1px solid var(--bd);margin-right:6px;vertical-align:1px}\n"
	"details>summary{cursor:pointer;color:var(--mut)}ul.ev{margin:4px 0 0 18px;padding:0}\n"
	".warn{background:#fff8c5;border:1px solid #d4a72c66;border-radius:6px;padding:6px 10px}\n"
	"footer{margin-top:36px;color:var(--mut);font-size:12px}\n"
	"figure.wall figcaption{color:var(--fg);font-size:13px;margin:4px 0 6px}\n"
	"table.parts{width:auto;font-size:12px;margin-top:6px}table.parts td.l:last-child{"
	"white-space:normal;color:var(--mut)}\n";

/* A legend's color swatch of an id (its class and data-id let tests match it). */
static void swatch(ex_out *o, const char *id)
{
	LIT(o, "<i class=\"sw\" data-id=\"");
	h(o, id);
	LIT(o, "\" style=\"background:");
	ex_puts(o, color_of(id));
	LIT(o, "\"></i>");
}

static void legend_item(ex_out *o, const char *id, const char *label, const char *help)
{
	LIT(o, "<span title=\"");
	h(o, help);
	LIT(o, "\">");
	swatch(o, id);
	h(o, label);
	LIT(o, "</span>");
}

static void legend(ex_out *o, int with_busy)
{
	LIT(o, "<div class=\"legend\">");
	if (with_busy)
		legend_item(o, "busy", "busy", "some kernel, copy or memset was running");
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		legend_item(o, gt_cause_name(c), gt_cause_label(c), cause_help[c]);
	if (with_busy)
		legend_item(o, "short gaps", "short gaps",
			    "idle time in gaps shorter than the detail threshold");
	LIT(o, "</div>\n");
}

static void kpi(ex_out *o, const char *value, const char *label)
{
	LIT(o, "<div class=\"kpi\"><b>");
	h(o, value);
	LIT(o, "</b><span>");
	h(o, label);
	LIT(o, "</span></div>");
}

/* ------------------------------------------------------------ timeline */

typedef struct col {
	double busy;		      /* ns */
	double cause[GT_CAUSE_COUNT]; /* ns */
	double shortg;		      /* ns */
	/* NVML */
	double clk, pw;
	uint32_t nclk, npw, nthr, nsamp;
	/* GPM, the charted metrics (gpm_chart_m): value x ns, and ns */
	double gpm[4], gpmw[4];
} col;

/* The GPM metrics of the chart, in drawing order. */
static const int gpm_chart_m[4] = {GT_GPM_SM_ACTIVE, GT_GPM_SM_OCCUPANCY, GT_GPM_TENSOR,
				   GT_GPM_DRAM_BW};

static double overlap(double a0, double a1, double b0, double b1)
{
	double v = fmin(a1, b1) - fmax(a0, b0);
	return v > 0 ? v : 0;
}

/* The placed gaps of GPU gi into cols (idle ns by cause, det[]: ns the
 * placed gaps cover): the analysis's cause columns when it made them (every
 * gap >= 10 us, gt_export_analysis_opts), else its detailed gaps (the
 * caller chose the gap threshold, min_gap_ns, or another analysis). */
static void placed_gaps(const gt_analysis *a, size_t gi, col *cols, double *det)
{
	const gt_an_gpu *g = gt_analysis_gpu(a, gi);
	size_t nc = 0, ng = 0;
	const gt_an_column *pc = gt_analysis_cause_columns(a, gi, &nc);
	if (gt_analysis_get_opts(a)->cause_columns == NCOL) {
		for (size_t c = 0; c < nc && c < NCOL; c++) {
			for (int k = 0; k < GT_CAUSE_COUNT; k++)
				cols[c].cause[k] = pc[c].cause_ns[k];
			det[c] = pc[c].gap_ns;
		}
		return;
	}
	double t0 = (double)g->t0, span = (double)g->window_ns, cw = span / NCOL;
	const gt_an_gap *gaps = gt_analysis_gaps(a, gi, &ng);
	/* detailed gaps: exact position, cause split spread over the gap */
	for (size_t i = 0; i < ng; i++) {
		const gt_an_gap *p = &gaps[i];
		double s = (double)p->start, e = (double)p->end, len = e - s;
		if (len <= 0)
			continue;
		int c0 = ex_dtoi(floor((s - t0) / cw)), c1 = ex_dtoi(floor((e - t0) / cw));
		c0 = c0 < 0 ? 0 : c0;
		c1 = c1 >= NCOL ? NCOL - 1 : c1;
		for (int c = c0; c <= c1; c++) {
			double ov = overlap(s, e, t0 + c * cw, t0 + (c + 1) * cw);
			for (int k = 0; k < GT_CAUSE_COUNT; k++)
				cols[c].cause[k] += (double)p->cause_ns[k] * ov / len;
			det[c] += ov;
		}
	}
}

static void fill_cols(const gt_analysis *a, size_t gi, col *cols)
{
	const gt_an_gpu *g = gt_analysis_gpu(a, gi);
	double t0 = (double)g->t0, span = (double)g->window_ns, cw = span / NCOL;
	double det[NCOL] = {0};
	size_t ns = 0;
	const float *ser = gt_analysis_util_series(a, gi, &ns);
	placed_gaps(a, gi, cols, det);
	/* the rest of each utilization window's idle time (shorter gaps),
	 * spread over the window's time not covered by detailed gaps */
	double w = (double)g->util.window_ns;
	for (size_t i = 0; i < ns && w > 0; i++) {
		double ws = t0 + (double)i * w, we = i + 1 == ns ? (double)g->t1 : ws + w;
		if (we <= ws)
			continue;
		int c0 = ex_dtoi(floor((ws - t0) / cw)), c1 = ex_dtoi(ceil((we - t0) / cw) - 1);
		c0 = c0 < 0 ? 0 : c0;
		c1 = c1 >= NCOL ? NCOL - 1 : c1;
		double dw = 0, freew = 0;
		for (int c = c0; c <= c1; c++) {
			double ov = overlap(ws, we, t0 + c * cw, t0 + (c + 1) * cw);
			dw += det[c] * ov / cw;
			freew += ov - det[c] * ov / cw;
		}
		double rest = (1.0 - (double)ser[i]) * (we - ws) - dw;
		if (rest <= 0 || freew <= 0)
			continue;
		for (int c = c0; c <= c1; c++) {
			double ov = overlap(ws, we, t0 + c * cw, t0 + (c + 1) * cw);
			cols[c].shortg += rest * (ov - det[c] * ov / cw) / freew;
		}
	}
	for (int c = 0; c < NCOL; c++) {
		double b = cw - det[c] - cols[c].shortg;
		if (b < 0) {
			cols[c].shortg += b;
			b = 0;
		}
		if (cols[c].shortg < 0)
			cols[c].shortg = 0;
		cols[c].busy = b;
	}
}

/* A horizontal grid line across the timeline plot at y, with a label left
 * of the axis and optionally one right of the plot (colors NULL: default). */
static void grid_line(ex_out *o, double y, const char *left, const char *lcolor, const char *right,
		      const char *rcolor)
{
	LIT(o, "<line class=\"gr\" x1=\"52\" x2=\"944\" y1=\"");
	ex_fixed(o, y, 1, "0");
	LIT(o, "\" y2=\"");
	ex_fixed(o, y, 1, "0");
	LIT(o, "\"/><text x=\"46\" y=\"");
	ex_fixed(o, y + 4, 1, "0");
	LIT(o, "\" text-anchor=\"end\"");
	if (lcolor) { /* a style: the stylesheet's svg text rule beats a fill attribute */
		LIT(o, " style=\"fill:");
		ex_puts(o, lcolor);
		ex_putc(o, '"');
	}
	ex_putc(o, '>');
	h(o, left);
	LIT(o, "</text>");
	if (right) {
		LIT(o, "<text x=\"948\" y=\"");
		ex_fixed(o, y + 4, 1, "0");
		LIT(o, "\" style=\"fill:");
		ex_puts(o, rcolor ? rcolor : "#59636e");
		LIT(o, "\">");
		h(o, right);
		LIT(o, "</text>");
	}
	ex_putc(o, '\n');
}

/* Grid lines at 0 %, 100/steps %, ... 100 % of a plot from y0 (top) ph
 * high, labelled on the left. */
static void pct_grid(ex_out *o, double y0, double ph, int steps)
{
	for (int p = 0; p <= steps; p++) {
		char lab[16];
		snprintf(lab, sizeof(lab), "%d%%", p * 100 / steps);
		grid_line(o, y0 + ph * (1 - (double)p / steps), lab, NULL, NULL, NULL);
	}
}

/* One stacked layer: the area between lo[] and hi[] (fractions 0..1). */
static void area(ex_out *o, const double *lo, const double *hi, const char *id, double y0,
		 double ph)
{
	double cw = (double)(TL_X1 - TL_X0) / NCOL;
	int any = 0;
	for (int c = 0; c < NCOL && !any; c++)
		any = hi[c] - lo[c] > 1e-4;
	if (!any)
		return;
	LIT(o, "<path data-id=\"");
	h(o, id);
	LIT(o, "\" fill=\"");
	ex_puts(o, color_of(id));
	LIT(o, "\" d=\"M");
	for (int c = 0; c < NCOL; c++) {
		double y = y0 + ph * (1 - hi[c]);
		put_xy(o, TL_X0 + c * cw, y);
		ex_putc(o, 'L');
		put_xy(o, TL_X0 + (c + 1) * cw, y);
		ex_putc(o, 'L');
	}
	for (int c = NCOL - 1; c >= 0; c--) {
		double y = y0 + ph * (1 - lo[c]);
		put_xy(o, TL_X0 + (c + 1) * cw, y);
		ex_putc(o, 'L');
		put_xy(o, TL_X0 + c * cw, y);
		if (c)
			ex_putc(o, 'L');
	}
	LIT(o, "Z\"/>\n");
}

/* The time axis of a GPU's window, which starts off ns after the time
 * origin (gt_analysis_time_origin): ticks at round offsets from the origin,
 * labelled "+1.5 s" like every other time of the report. */
static void x_axis(ex_out *o, double off, double span, double y, double ytop)
{
	double step = nice_step(span, 8);
	if (!(span > 0) || !(step > 0) || !isfinite(off))
		return;
	/* Counted in whole ticks, never by adding step to a double: 2^63 ns
	 * after the origin a step below the double's spacing there (2 us) left
	 * t where it was, and the loop wrote ticks until the disk was full. */
	double k0 = ceil(off / step - 1e-4), k1 = floor((off + span * 1.0001) / step);
	int nt = ex_dtoi(k1 - k0 + 1);
	nt = nt < 0 ? 0 : nt > AXIS_MAX_TICKS ? AXIS_MAX_TICKS : nt;
	for (int i = 0; i < nt; i++) {
		double t = (k0 + i) * step;
		double x = TL_X0 + (TL_X1 - TL_X0) * ((t - off) / span);
		char b[32];
		b[0] = t < -step / 2 ? '-' : '+';
		tick_label(b + 1, sizeof(b) - 1, fabs(t) < step / 2 ? 0 : fabs(t), step);
		LIT(o, "<line class=\"gr\" x1=\"");
		ex_fixed(o, x, 1, "0");
		LIT(o, "\" x2=\"");
		ex_fixed(o, x, 1, "0");
		LIT(o, "\" y1=\"");
		ex_fixed(o, ytop, 1, "0");
		LIT(o, "\" y2=\"");
		ex_fixed(o, y, 1, "0");
		LIT(o, "\"/><text x=\"");
		ex_fixed(o, x, 1, "0");
		LIT(o, "\" y=\"");
		ex_fixed(o, y + 13, 1, "0");
		LIT(o, "\" text-anchor=\"middle\">");
		h(o, b);
		LIT(o, "</text>\n");
	}
}

static void timeline(ex_out *o, const gt_analysis *a, size_t gi, const col *cols)
{
	const gt_an_gpu *g = gt_analysis_gpu(a, gi);
	double span = (double)g->window_ns, cw = span / NCOL;
	const double y0 = 8, ph = TL_PLOT_H;
	double lo[NCOL], hi[NCOL];
	LIT(o, "<figure><svg viewBox=\"0 0 960 182\" role=\"img\" aria-label=\"utilization over "
	       "time\">\n");
	pct_grid(o, y0, ph, 4);
	for (int c = 0; c < NCOL; c++) {
		lo[c] = 0;
		hi[c] = cw > 0 ? cols[c].busy / cw : 0;
	}
	area(o, lo, hi, "busy", y0, ph);
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		for (int c = 0; c < NCOL; c++) {
			lo[c] = hi[c];
			hi[c] += cw > 0 ? cols[c].cause[k] / cw : 0;
		}
		area(o, lo, hi, gt_cause_name(k), y0, ph);
	}
	for (int c = 0; c < NCOL; c++) {
		lo[c] = hi[c];
		hi[c] += cw > 0 ? cols[c].shortg / cw : 0;
	}
	area(o, lo, hi, "short gaps", y0, ph);
	double off = (double)(int64_t)(g->t0 - gt_analysis_time_origin(a));
	x_axis(o, off, span, y0 + ph, y0);
	LIT(o, "<line class=\"ax\" x1=\"52\" x2=\"944\" y1=\"158\" y2=\"158\"/>\n");
	/* tooltips: one transparent rectangle per TIP_COLS columns */
	double pw = (double)(TL_X1 - TL_X0) / NCOL;
	for (int c0 = 0; c0 < NCOL; c0 += TIP_COLS) {
		int c1 = c0 + TIP_COLS > NCOL ? NCOL : c0 + TIP_COLS;
		double busy = 0, cause[GT_CAUSE_COUNT] = {0}, sg = 0, len = (c1 - c0) * cw;
		for (int c = c0; c < c1; c++) {
			busy += cols[c].busy;
			sg += cols[c].shortg;
			for (int k = 0; k < GT_CAUSE_COUNT; k++)
				cause[k] += cols[c].cause[k];
		}
		char b1[32], b2[32];
		b1[0] = b2[0] = '+';
		gt_fmt_ns(b1 + 1, sizeof(b1) - 1, off + c0 * cw);
		gt_fmt_ns(b2 + 1, sizeof(b2) - 1, off + c1 * cw);
		LIT(o, "<rect class=\"tip\" x=\"");
		ex_fixed(o, TL_X0 + c0 * pw, 1, "0");
		LIT(o, "\" y=\"8\" width=\"");
		ex_fixed(o, (c1 - c0) * pw, 1, "0");
		LIT(o, "\" height=\"150\"><title>");
		h(o, b1);
		LIT(o, " to ");
		h(o, b2);
		LIT(o, ": busy ");
		put_pct(o, len > 0 ? busy / len : 0);
		for (int k = 0; k < GT_CAUSE_COUNT; k++) {
			if (cause[k] / len < 0.0005)
				continue;
			LIT(o, ", ");
			ex_puts(o, gt_cause_label(k));
			ex_putc(o, ' ');
			put_pct(o, cause[k] / len);
		}
		if (sg / len >= 0.0005) {
			LIT(o, ", short gaps ");
			put_pct(o, sg / len);
		}
		LIT(o, "</title></rect>\n");
	}
	LIT(o, "</svg><figcaption>Utilization over time (");
	put_dur(o, span);
	LIT(o, " window, ");
	ex_u64(o, NCOL);
	LIT(o, " columns of ");
	put_dur(o, cw);
	LIT(o, "): blue is busy; idle gaps of 10 us or more are colored by cause, shorter ones "
	       "are light grey. Hover for numbers.</figcaption></figure>\n");
}

/* NVML: SM clock (left axis) and power (right axis), throttling shaded. */
static void nvml_chart(ex_out *o, const gt_analysis *a, const gt_an_gpu *g, const col *cols)
{
	double maxclk = 0, maxpw = 0;
	int any = 0;
	for (int c = 0; c < NCOL; c++) {
		if (cols[c].nclk && cols[c].clk / cols[c].nclk > maxclk)
			maxclk = cols[c].clk / cols[c].nclk;
		if (cols[c].npw && cols[c].pw / cols[c].npw > maxpw)
			maxpw = cols[c].pw / cols[c].npw;
		any |= cols[c].nsamp != 0;
	}
	if (!any)
		return;
	if (g->dev.core_clock_khz / 1000.0 > maxclk)
		maxclk = g->dev.core_clock_khz / 1000.0;
	double sc = nice_step(maxclk, 4), sp = nice_step(maxpw, 4);
	maxclk = sc * ceil(maxclk / sc);
	maxpw = sp * ceil(maxpw / sp);
	if (maxclk <= 0)
		maxclk = 1;
	if (maxpw <= 0)
		maxpw = 1;
	const double y0 = 8, ph = 80, pw = (double)(TL_X1 - TL_X0) / NCOL;
	LIT(o,
	    "<figure><svg viewBox=\"0 0 960 112\" role=\"img\" aria-label=\"clocks and power\">\n");
	for (int p = 0; p <= 2; p++) {
		char l[24], r[24];
		snprintf(l, sizeof(l), "%.0f", maxclk * p / 2.0);
		snprintf(r, sizeof(r), "%.0f", maxpw * p / 2.0);
		grid_line(o, y0 + ph * (1 - p / 2.0), l, "#1a7f37", r, "#bc4c00");
	}
	for (int c = 0; c < NCOL; c++) { /* throttled columns */
		if (!cols[c].nthr)
			continue;
		LIT(o, "<rect x=\"");
		ex_fixed(o, TL_X0 + c * pw, 1, "0");
		LIT(o, "\" y=\"8\" width=\"");
		ex_fixed(o, pw, 1, "0");
		LIT(o, "\" height=\"80\" fill=\"#d1242f\" opacity=\"0.18\"/>");
	}
	for (int which = 0; which < 2; which++) {
		LIT(o, "<path fill=\"none\" stroke-width=\"1.5\" stroke=\"");
		ex_puts(o, which ? "#bc4c00" : "#1a7f37");
		LIT(o, "\" d=\"");
		int pen = 0; /* samples are sparse at fine columns: join them */
		for (int c = 0; c < NCOL; c++) {
			uint32_t n = which ? cols[c].npw : cols[c].nclk;
			if (!n)
				continue;
			double v = (which ? cols[c].pw : cols[c].clk) / n;
			double y = y0 + ph * (1 - v / (which ? maxpw : maxclk));
			ex_putc(o, pen ? 'L' : 'M');
			put_xy(o, TL_X0 + (c + 0.5) * pw, y);
			pen = 1;
		}
		LIT(o, "\"/>\n");
	}
	x_axis(o, (double)(int64_t)(g->t0 - gt_analysis_time_origin(a)), (double)g->window_ns,
	       y0 + ph, y0);
	LIT(o, "</svg><figcaption>NVML: <span style=\"color:#1a7f37\">SM clock (MHz, left)</span>, "
	       "<span style=\"color:#bc4c00\">power (W, right)</span>; red shading: a "
	       "throttling clocks-event reason was set.</figcaption></figure>\n");
}

/* GPM: the charted metrics' time-weighted values per column, 0..100 %, a
 * line per metric broken where no reading covers a column. */
static void gpm_line(ex_out *o, const col *cols, int k, double y0, double ph)
{
	const char *id = ex_gpm_defs[gpm_chart_m[k]].track;
	double pw = (double)(TL_X1 - TL_X0) / NCOL;
	LIT(o, "<path data-id=\"");
	h(o, id);
	LIT(o, "\" fill=\"none\" stroke-width=\"1.5\" stroke=\"");
	ex_puts(o, color_of(id));
	LIT(o, "\" d=\"");
	int pen = 0;
	for (int c = 0; c < NCOL; c++) {
		if (cols[c].gpmw[k] <= 0) {
			pen = 0;
			continue;
		}
		double v = cols[c].gpm[k] / cols[c].gpmw[k];
		double y = y0 + ph * (1 - (v > 100 ? 1 : v < 0 ? 0 : v / 100));
		ex_putc(o, pen ? 'L' : 'M');
		put_xy(o, TL_X0 + c * pw, y);
		ex_putc(o, 'L');
		put_xy(o, TL_X0 + (c + 1) * pw, y);
		pen = 1;
	}
	LIT(o, "\"/>\n");
}

static void gpm_chart(ex_out *o, const gt_analysis *a, const gt_an_gpu *g, const col *cols)
{
	int drawn[4] = {0}, any = 0;
	for (int c = 0; c < NCOL; c++)
		for (int k = 0; k < 4; k++)
			drawn[k] |= cols[c].gpmw[k] > 0;
	for (int k = 0; k < 4; k++)
		any |= drawn[k];
	if (!any)
		return;
	const double y0 = 8, ph = 80;
	LIT(o, "<figure class=\"gpm\"><svg viewBox=\"0 0 960 112\" role=\"img\" "
	       "aria-label=\"GPU hardware counters\">\n");
	pct_grid(o, y0, ph, 2);
	for (int k = 0; k < 4; k++)
		if (drawn[k])
			gpm_line(o, cols, k, y0, ph);
	x_axis(o, (double)(int64_t)(g->t0 - gt_analysis_time_origin(a)), (double)g->window_ns,
	       y0 + ph, y0);
	LIT(o, "</svg><figcaption><span class=\"legend\">");
	for (int k = 0; k < 4; k++) {
		if (!drawn[k])
			continue;
		swatch(o, ex_gpm_defs[gpm_chart_m[k]].track);
		h(o, ex_gpm_defs[gpm_chart_m[k]].track);
		ex_putc(o, ' ');
	}
	LIT(o, "</span> GPM hardware counters (% of the GPU, time-weighted per column; no line "
	       "where no reading covers the time).</figcaption></figure>\n");
}

/* ------------------------------------------------------------ small charts */

#define SC_W 320
#define SC_H 190

/* A rectangle in the color of id (palette), marked with it. */
static void bar_rect(ex_out *o, double x, double y, double w, double hh, const char *id)
{
	if (hh <= 0.05)
		return;
	LIT(o, "<rect data-id=\"");
	h(o, id);
	LIT(o, "\" x=\"");
	ex_fixed(o, x, 1, "0");
	LIT(o, "\" y=\"");
	ex_fixed(o, y, 1, "0");
	LIT(o, "\" width=\"");
	ex_fixed(o, w, 1, "0");
	LIT(o, "\" height=\"");
	ex_fixed(o, hh, 1, "0");
	LIT(o, "\" fill=\"");
	ex_puts(o, color_of(id));
	LIT(o, "\"/>");
}

static void util_hist(ex_out *o, const gt_an_gpu *g)
{
	const gt_an_util *u = &g->util;
	uint32_t mx = 0;
	for (int i = 0; i < GT_UTIL_BINS; i++)
		if (u->hist[i] > mx)
			mx = u->hist[i];
	LIT(o, "<figure><svg viewBox=\"0 0 320 190\" role=\"img\" aria-label=\"utilization "
	       "distribution\">\n");
	const double x0 = 34, x1 = 312, y0 = 10, ph = 140, bw = (x1 - x0) / GT_UTIL_BINS;
	LIT(o, "<line class=\"ax\" x1=\"34\" x2=\"312\" y1=\"150\" y2=\"150\"/>");
	for (int i = 0; i < GT_UTIL_BINS; i++) {
		double hh = mx ? ph * u->hist[i] / mx : 0;
		LIT(o, "<g><title>");
		ex_u64(o, (uint64_t)i * 10);
		LIT(o, "-");
		ex_u64(o, (uint64_t)i * 10 + 10);
		LIT(o, "% busy: ");
		ex_u64(o, u->hist[i]);
		ex_puts(o, gt_plural(u->hist[i], " window</title>", " windows</title>"));
		bar_rect(o, x0 + i * bw + 1, y0 + ph - hh, bw - 2, hh, "busy");
		LIT(o, "<rect class=\"tip\" x=\"");
		ex_fixed(o, x0 + i * bw, 1, "0");
		LIT(o, "\" y=\"10\" width=\"");
		ex_fixed(o, bw, 1, "0");
		LIT(o, "\" height=\"140\"/></g>");
		if (i % 2 == 0) {
			LIT(o, "<text x=\"");
			ex_fixed(o, x0 + i * bw, 1, "0");
			LIT(o, "\" y=\"163\" text-anchor=\"middle\">");
			ex_u64(o, (uint64_t)i * 10);
			LIT(o, "%</text>");
		}
	}
	LIT(o, "<text x=\"312\" y=\"163\" text-anchor=\"middle\">100%</text>"
	       "<text x=\"28\" y=\"18\" text-anchor=\"end\">");
	ex_u64(o, mx);
	LIT(o, "</text><text x=\"173\" y=\"183\" text-anchor=\"middle\">p5 ");
	put_pct(o, u->p5);
	LIT(o, " · p50 ");
	put_pct(o, u->p50);
	LIT(o, " · p95 ");
	put_pct(o, u->p95);
	LIT(o, "</text></svg><figcaption>Utilization distribution: ");
	ex_u64(o, u->nwindows);
	ex_puts(o, gt_plural(u->nwindows, " window of ", " windows of "));
	put_dur(o, (double)u->window_ns);
	LIT(o, " by busy share.</figcaption></figure>\n");
}

static void gap_hist(ex_out *o, const gt_an_gpu *g)
{
	static const char *const lab[GT_GAP_BINS] = {"<1us", "1us",  "10us",  "100us",
						     "1ms",  "10ms", "100ms", ">=1s"};
	uint64_t mx = 0;
	for (int i = 0; i < GT_GAP_BINS; i++)
		if (g->gap_hist_ns[i] > mx)
			mx = g->gap_hist_ns[i];
	LIT(o, "<figure><svg viewBox=\"0 0 320 190\" role=\"img\" aria-label=\"gap length "
	       "histogram\">\n");
	const double x0 = 12, x1 = 312, y0 = 22, ph = 128, bw = (x1 - x0) / GT_GAP_BINS;
	LIT(o, "<line class=\"ax\" x1=\"12\" x2=\"312\" y1=\"150\" y2=\"150\"/>");
	for (int i = 0; i < GT_GAP_BINS; i++) {
		double base = y0 + ph;
		char b[32];
		LIT(o, "<g><title>gaps ");
		ex_puts(o, lab[i]);
		if (i && i < GT_GAP_BINS - 1) {
			LIT(o, " to ");
			ex_puts(o, lab[i + 1]);
		}
		LIT(o, ": ");
		ex_u64(o, g->gap_hist_count[i]);
		ex_puts(o, gt_plural(g->gap_hist_count[i], " gap, ", " gaps, "));
		put_dur(o, (double)g->gap_hist_ns[i]);
		LIT(o, " idle");
		for (int k = 0; k < GT_CAUSE_COUNT; k++) {
			if (!g->gap_hist_cause_ns[i][k])
				continue;
			LIT(o, ", ");
			ex_puts(o, gt_cause_label(k));
			ex_putc(o, ' ');
			put_dur(o, (double)g->gap_hist_cause_ns[i][k]);
		}
		LIT(o, "</title>");
		for (int k = 0; k < GT_CAUSE_COUNT && mx; k++) {
			double hh = ph * (double)g->gap_hist_cause_ns[i][k] / (double)mx;
			base -= hh;
			bar_rect(o, x0 + i * bw + 2, base, bw - 4, hh, gt_cause_name(k));
		}
		LIT(o, "<rect class=\"tip\" x=\"");
		ex_fixed(o, x0 + i * bw, 1, "0");
		LIT(o, "\" y=\"10\" width=\"");
		ex_fixed(o, bw, 1, "0");
		LIT(o, "\" height=\"140\"/></g><text x=\"");
		ex_fixed(o, x0 + (i + 0.5) * bw, 1, "0");
		LIT(o, "\" y=\"163\" text-anchor=\"middle\">");
		ex_puts(o, lab[i]);
		LIT(o, "</text><text x=\"");
		ex_fixed(o, x0 + (i + 0.5) * bw, 1, "0");
		LIT(o, "\" y=\"");
		ex_fixed(o, base - 3, 1, "0");
		LIT(o, "\" text-anchor=\"middle\">");
		fmt_count(b, sizeof(b), g->gap_hist_count[i]);
		if (g->gap_hist_count[i])
			ex_puts(o, b);
		LIT(o, "</text>");
	}
	LIT(o, "<text x=\"162\" y=\"183\" text-anchor=\"middle\">gap length (bar: idle time, "
	       "label: count)</text></svg><figcaption>Idle time by gap length and cause: ");
	ex_u64(o, g->ngaps);
	ex_puts(o, gt_plural(g->ngaps, " gap, median ", " gaps, median "));
	char med[40];
	h(o, gt_fmt_pct_ns(med, sizeof(med), g->gap_len.p50, g->gap_len.upper_bounds));
	LIT(o, ", longest ");
	put_dur(o, (double)g->gap_len.max);
	LIT(o, ".</figcaption></figure>\n");
}

static void cause_bars(ex_out *o, const gt_an_gpu *g)
{
	uint64_t mx = 0;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		if (g->cause_ns[k] > mx)
			mx = g->cause_ns[k];
	const double x0 = 104, x1 = 250, rh = 18;
	/* as tall as its rows: a fixed 190 clipped data_lost and drew the axis
	 * label over startup once those became causes of their own */
	const double axis_y = 8 + GT_CAUSE_COUNT * rh + 12;
	LIT(o, "<figure><svg viewBox=\"0 0 320 ");
	ex_fixed(o, axis_y + 7, 0, "0");
	LIT(o, "\" role=\"img\" aria-label=\"idle time by cause\">\n");
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		double y = 8 + k * rh, w = mx ? (x1 - x0) * (double)g->cause_ns[k] / (double)mx : 0;
		LIT(o, "<g><title>");
		ex_puts(o, gt_cause_label(k));
		LIT(o, ": ");
		put_dur(o, (double)g->cause_ns[k]);
		LIT(o, " (");
		put_pct(o, g->window_ns ? (double)g->cause_ns[k] / (double)g->window_ns : 0);
		LIT(o, " of the window) - ");
		h(o, cause_help[k]);
		LIT(o, "</title><text x=\"98\" y=\"");
		ex_fixed(o, y + 13, 1, "0");
		LIT(o, "\" text-anchor=\"end\">");
		ex_puts(o, gt_cause_label(k));
		LIT(o, "</text>");
		bar_rect(o, x0, y + 3, w, rh - 7, gt_cause_name(k));
		LIT(o, "<text x=\"");
		ex_fixed(o, x0 + w + 4, 1, "0");
		LIT(o, "\" y=\"");
		ex_fixed(o, y + 13, 1, "0");
		LIT(o, "\">");
		put_pct(o, g->window_ns ? (double)g->cause_ns[k] / (double)g->window_ns : 0);
		LIT(o, "</text><rect class=\"tip\" x=\"0\" y=\"");
		ex_fixed(o, y, 1, "0");
		LIT(o, "\" width=\"320\" height=\"18\"/></g>\n");
	}
	LIT(o, "<text x=\"162\" y=\"");
	ex_fixed(o, axis_y, 0, "0");
	LIT(o, "\" text-anchor=\"middle\">share of the window</text>"
	       "</svg><figcaption>Idle time by cause: ");
	put_dur(o, (double)g->idle_ns);
	LIT(o, " idle of ");
	put_dur(o, (double)g->window_ns);
	LIT(o, ".</figcaption></figure>\n");
}

/* ------------------------------------------------------------ NVML */

/* Remember which analysis GPU (by UUID) a trace's device ordinal is. */
static void map_device(gt_map *dev, const gt_analysis *a, const gt_device *d)
{
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		const gt_an_gpu *gp = gt_analysis_gpu(a, g);
		if (gp->uuid_known && !memcmp(gp->dev.uuid, d->uuid, 16)) {
			uint64_t *v = gt_map_put(dev, d->id, NULL);
			if (v)
				*v = g + 1;
			return;
		}
	}
}

/* Spread a GPM reading's charted metrics over the columns it covers, by
 * overlap (the analysis' rule: a reading's value holds over [start, end)). */
static void bin_gpm(const gt_analysis *a, gt_map *dev, const gt_clock_map *cm, const gt_gpm *r,
		    col *cols)
{
	uint64_t *v = gt_map_get(dev, r->device_id);
	if (!v || !*v)
		return;
	const gt_an_gpu *gp = gt_analysis_gpu(a, *v - 1);
	double t0 = (double)gp->t0, cw = (double)gp->window_ns / NCOL;
	double s = (double)gt_clock_map_apply(cm, r->start),
	       e = (double)gt_clock_map_apply(cm, r->end);
	if (cw <= 0 || e <= t0 || s >= (double)gp->t1 || e <= s)
		return;
	int c0 = ex_dtoi(floor((s - t0) / cw)), c1 = ex_dtoi(floor((e - t0) / cw));
	c0 = c0 < 0 ? 0 : c0;
	c1 = c1 >= NCOL ? NCOL - 1 : c1;
	col *gc = cols + (*v - 1) * NCOL;
	for (int k = 0; k < 4; k++) {
		double val = ex_gpm_value(r, gpm_chart_m[k]);
		for (int c = c0; c <= c1 && val >= 0; c++) {
			double ov = overlap(s, e, t0 + c * cw, t0 + (c + 1) * cw);
			gc[c].gpm[k] += val * ov;
			gc[c].gpmw[k] += ov;
		}
	}
}

/* Bin the NVML samples and GPM readings of every trace that has some into
 * the columns. */
static void read_nvml(gt_export *x, const gt_analysis *a, col *cols, uint64_t *problems)
{
	uint64_t mask = x->o.analysis.throttle_mask ? x->o.analysis.throttle_mask
						    : GT_AN_DEFAULT_THROTTLE_MASK;
	for (size_t ti = 0; ti < gt_analysis_ntraces(a); ti++) {
		const gt_an_trace *tr = gt_analysis_trace(a, ti);
		if (!tr->records[GT_REC_NVML] && !tr->records[GT_REC_GPM])
			continue;
		size_t pi;
		for (pi = 0; pi < x->npaths && strcmp(x->paths[pi], tr->path); pi++)
			;
		if (pi == x->npaths)
			continue;
		gt_reader *r = ex_reader_open(x, pi, 0, problems);
		if (!r)
			continue;
		gt_clock_map cm;
		const gt_stream_header *hd = gt_reader_header(r);
		gt_clock_map_init(&cm, hd);
		gt_map dev = {0}; /* local ordinal -> gpu + 1 */
		for (uint32_t k = 0; k < hd->ndevices && k < GT_MAX_DEVICES; k++)
			map_device(&dev, a, &hd->devices[k]);
		gt_record rec;
		while (gt_reader_next(r, &rec) > 0) {
			if (rec.type == GT_REC_CLOCK) {
				gt_clock_map_update(&cm, &rec.clock);
				continue;
			}
			if (rec.type == GT_REC_DEVICE) {
				map_device(&dev, a, &rec.device);
				continue;
			}
			if (rec.type == GT_REC_GPM) {
				bin_gpm(a, &dev, &cm, &rec.gpm, cols);
				continue;
			}
			if (rec.type != GT_REC_NVML)
				continue;
			const gt_nvml *n = &rec.nvml;
			uint64_t *v = gt_map_get(&dev, n->device_id);
			if (!v || !*v)
				continue;
			size_t g = *v - 1;
			const gt_an_gpu *gp = gt_analysis_gpu(a, g);
			uint64_t ts = gt_clock_map_apply(&cm, n->ts);
			if (ts < gp->t0 || ts >= gp->t1 || !gp->window_ns)
				continue;
			int c = ex_dtoi((double)(ts - gp->t0) * NCOL / (double)gp->window_ns);
			if (c < 0 || c >= NCOL)
				continue;
			col *cl = &cols[g * NCOL + (size_t)c];
			cl->nsamp++;
			if (n->sm_clock_mhz != UINT32_MAX) {
				cl->clk += n->sm_clock_mhz;
				cl->nclk++;
			}
			if (n->power_mw != UINT32_MAX) {
				cl->pw += n->power_mw / 1000.0;
				cl->npw++;
			}
			if (n->clocks_event_reasons != UINT64_MAX &&
			    (n->clocks_event_reasons & mask))
				cl->nthr++;
		}
		gt_map_free(&dev);
		gt_reader_close(r);
	}
}

/* ------------------------------------------------------------ tables */

/* A table and its header row; a column name starting with '<' is
 * left-aligned (the '<' is not shown). */
static void table_head(ex_out *o, const char *const *cols, size_t n)
{
	LIT(o, "<table><tr>");
	for (size_t i = 0; i < n; i++) {
		int left = cols[i][0] == '<';
		ex_puts(o, left ? "<th class=\"l\">" : "<th>");
		h(o, cols[i] + left);
		LIT(o, "</th>");
	}
	LIT(o, "</tr>\n");
}
#define TABLE_HEAD(o, ...)                                                \
	do {                                                              \
		static const char *const cols_[] = {__VA_ARGS__};         \
		table_head((o), cols_, sizeof(cols_) / sizeof(cols_[0])); \
	} while (0)

static void td_dur(ex_out *o, double ns)
{
	LIT(o, "<td>");
	put_dur(o, ns);
	LIT(o, "</td>");
}

static void td_u64(ex_out *o, uint64_t v)
{
	LIT(o, "<td>");
	ex_u64(o, v);
	LIT(o, "</td>");
}

/* A bar of a fraction (0..1, clipped) 60 px wide at 1. */
static void bar_span(ex_out *o, double frac)
{
	LIT(o, "<span class=\"bar\" style=\"width:");
	ex_fixed(o, 60 * (frac < 0 ? 0 : frac > 1 ? 1 : frac), 1, "0");
	LIT(o, "px\"></span>");
}

static void td_bar(ex_out *o, double frac)
{
	LIT(o, "<td>");
	bar_span(o, frac);
	put_pct(o, frac);
	LIT(o, "</td>");
}

/* Opens a cell with a kernel's short name, its full name as the tooltip
 * (the caller closes the cell). */
static void td_kernel_open(ex_out *o, const gt_analysis *a, uint32_t name, int mangled)
{
	char full[4096], shrt[1024];
	const char *mg = gt_analysis_string(a, name);
	ex_kernel_name(mg, 1, mangled, full, sizeof(full));
	ex_kernel_name(mg, 0, mangled, shrt, sizeof(shrt));
	LIT(o, "<td class=\"name\" title=\"");
	h(o, full);
	LIT(o, "\">");
	h(o, shrt);
}

static void kernels_table(ex_out *o, gt_export *x, const gt_analysis *a, size_t gi)
{
	const gt_an_gpu *g = gt_analysis_gpu(a, gi);
	size_t n = 0;
	const gt_an_kernel *k = gt_analysis_kernels(a, gi, &n);
	if (!n) {
		LIT(o, "<p class=\"mut\">No kernels.</p>\n");
		return;
	}
	int mangled = !!(x->o.flags & GT_EXPORT_MANGLED);
	const gt_diag_opts *dopts = gt_diagnosis_opts(ex_diagnosis(x)); /* the findings' */
	TABLE_HEAD(o, "<kernel", "share of kernel time", "calls", "total", "mean", "min", "max",
		   "of wall", "grid x block");
	size_t rows = n < x->o.top_rows ? n : x->o.top_rows;
	for (size_t i = 0; i < rows; i++) {
		const gt_an_kernel *r = &k[i];
		LIT(o, "<tr>");
		td_kernel_open(o, a, r->name, mangled);
		if (r->storm)
			LIT(o,
			    " <span class=\"badge\" title=\"many launches of a tiny kernel\">storm"
			    "</span>");
		if (gt_diag_small_grid_kernel(r, g->dev.sm_count, dopts))
			LIT(o, " <span class=\"badge\" title=\"grids that fill at most half of the "
			       "SMs (the small_grid finding's test)\">small grid</span>");
		LIT(o, "</td>");
		td_bar(o, r->share_kernel);
		td_u64(o, r->count);
		td_dur(o, (double)r->total_ns);
		td_dur(o, r->mean_ns);
		td_dur(o, (double)r->min_ns);
		td_dur(o, (double)r->max_ns);
		LIT(o, "<td>");
		put_pct(o, r->share_wall);
		LIT(o, "</td><td>");
		ex_u64(o, r->grid[0]);
		ex_putc(o, 'x');
		ex_u64(o, r->grid[1]);
		ex_putc(o, 'x');
		ex_u64(o, r->grid[2]);
		LIT(o, " · ");
		ex_u64(o, r->block[0]);
		ex_putc(o, 'x');
		ex_u64(o, r->block[1]);
		ex_putc(o, 'x');
		ex_u64(o, r->block[2]);
		LIT(o, "</td></tr>\n");
	}
	LIT(o, "</table>\n");
	if (rows < n) {
		uint64_t rest = 0;
		for (size_t i = rows; i < n; i++)
			rest += k[i].total_ns;
		LIT(o, "<p class=\"mut small\">... and ");
		ex_u64(o, n - rows);
		ex_puts(o, gt_plural(n - rows, " more kernel (", " more kernels ("));
		put_dur(o, (double)rest);
		LIT(o, ", ");
		put_pct(o, g->kernel_ns ? (double)rest / (double)g->kernel_ns : 0);
		LIT(o, " of kernel time).</p>\n");
	}
}

static void copies_table(ex_out *o, gt_export *x, const gt_analysis *a, size_t gi)
{
	(void)x;
	size_t n = 0;
	const gt_an_copy *c = gt_analysis_copies(a, gi, &n);
	if (!n) {
		LIT(o, "<p class=\"mut\">No copies or memsets.</p>\n");
		return;
	}
	uint64_t all = 0;
	for (size_t i = 0; i < n; i++)
		all += c[i].total_ns;
	TABLE_HEAD(o, "<kind", "<host memory", "share of copy time", "count", "bytes", "time",
		   "GB/s", "of wall", "blocking calls");
	for (size_t i = 0; i < n; i++) {
		const gt_an_copy *r = &c[i];
		char b[32];
		LIT(o, "<tr><td class=\"l\">");
		ex_puts(o, r->copy_kind == GT_AN_COPY_MEMSET ? "memset"
							     : gt_copy_kind_name(r->copy_kind));
		LIT(o, "</td><td class=\"l\">");
		ex_puts(o, gt_mem_kind_name(r->host_kind));
		LIT(o, "</td>");
		td_bar(o, all ? (double)r->total_ns / (double)all : 0);
		td_u64(o, r->count);
		gt_fmt_bytes(b, sizeof(b), (double)r->bytes);
		LIT(o, "<td>");
		ex_puts(o, b);
		LIT(o, "</td>");
		td_dur(o, (double)r->total_ns);
		LIT(o, "<td>");
		ex_fixed(o, r->gbps, r->gbps < 10 ? 2 : 1, "-");
		LIT(o, "</td><td>");
		put_pct(o, r->share_wall);
		LIT(o, "</td>");
		td_u64(o, r->blocking);
		LIT(o, "</tr>\n");
	}
	LIT(o, "</table>\n");
}

/* The call sites behind a GPU's idle time (host stacks), with their frames
 * folded under each row. */
static void sites_table(ex_out *o, gt_export *x, const gt_analysis *a, size_t gi)
{
	(void)x;
	size_t n = 0;
	const gt_an_site *s = gt_analysis_sites(a, gi, &n);
	const gt_an_gpu *g = gt_analysis_gpu(a, gi);
	if (!n) {
		LIT(o, "<p class=\"mut\">No idle time tied to a call site.</p>\n");
		return;
	}
	TABLE_HEAD(o, "<call site", "<role", "share of idle", "idle", "gaps", "<main cause",
		   "<stack (innermost first)");
	char b[1024];
	for (size_t i = 0; i < n && i < 20; i++) {
		int mc = 0;
		for (int c = 1; c < GT_CAUSE_COUNT; c++)
			if (s[i].cause_ns[c] > s[i].cause_ns[mc])
				mc = c;
		LIT(o, "<tr><td class=\"l\">");
		gt_analysis_site_label(a, s[i].stack, b, sizeof(b));
		h(o, b);
		LIT(o, "</td><td class=\"l\">");
		ex_puts(o, gt_site_role_name(s[i].roles));
		LIT(o, "</td>");
		td_bar(o, g->idle_ns ? (double)s[i].total_ns / (double)g->idle_ns : 0);
		td_dur(o, (double)s[i].total_ns);
		td_u64(o, s[i].gaps);
		LIT(o, "<td class=\"l\">");
		ex_puts(o, gt_cause_label(mc));
		LIT(o, "</td><td class=\"l\"><details><summary>frames</summary>");
		const gt_an_stack *k = gt_analysis_stack(a, s[i].stack);
		for (uint32_t f = 0; f < k->nframes; f++) {
			gt_analysis_frame_text(a, s[i].stack, f, b, sizeof(b));
			if (f)
				LIT(o, "<br>");
			h(o, b);
		}
		LIT(o, "</details></td></tr>\n");
	}
	LIT(o, "</table>\n");
}

/* One GPU's table of a per-GPU section. */
typedef void gpu_table_fn(ex_out *o, gt_export *x, const gt_analysis *a, size_t gi);

/* A section (<h2 id=id>title, then intro, a literal or NULL) with one
 * <details> per GPU, the first one open, holding that GPU's table. */
static void per_gpu(ex_out *o, gt_export *x, const gt_analysis *a, const char *id,
		    const char *title, const char *intro, gpu_table_fn *table)
{
	LIT(o, "<h2 id=\"");
	ex_puts(o, id);
	LIT(o, "\">");
	ex_puts(o, title);
	LIT(o, "</h2>\n");
	if (intro)
		ex_puts(o, intro);
	for (size_t g = 0; g < gt_analysis_ngpus(a) && !ex_out_check(o); g++) {
		ex_puts(o, g ? "<details><summary>" : "<details open><summary>");
		LIT(o, "GPU ");
		ex_u64(o, g);
		LIT(o, "</summary>\n");
		table(o, x, a, g);
		LIT(o, "</details>\n");
	}
}

/* Every GPU's call sites, when the traces carry host stacks. */
static void sites_section(ex_out *o, gt_export *x, const gt_analysis *a)
{
	if (gt_analysis_nstacks(a))
		per_gpu(o, x, a, "sites", "Call sites behind idle time",
			"<p class=\"mut\">Host stacks: where a sync or copy returned before a gap "
			"(waited), or where the host resumed after its own work (resumed).</p>\n",
			sites_table);
}

/* ------------------------------------------------------------ steps, ranges, gaps */

/*
 * The text report's Steps section, NVTX range table and longest gaps
 * (report_steps.c, report_text.c) from the same analysis calls and
 * formatters, so each figure prints as it does there; the tables have up to
 * opts.top_rows rows where the text has 5 (steps, gaps) or 20 (ranges), the
 * first ones the same.
 */

/* The steps' summary: the text report's Steps line after its label. */
static void steps_line(ex_out *o, const gt_analysis *a, size_t gi, const gt_an_steps *in)
{
	const char *name = gt_analysis_string(a, in->name);
	LIT(o, "<p class=\"steps\" data-gpu=\"");
	ex_u64(o, gi);
	LIT(o, "\">");
	ex_u64(o, in->count);
	LIT(o, " x ");
	if (in->source == GT_STEPS_PERIOD) {
		LIT(o, "period ");
		put_dur(o, (double)in->period_ns);
	} else {
		h(o, name ? name : "?");
	}
	LIT(o, " (");
	ex_puts(o, gt_steps_source_text(in->source));
	LIT(o, "): median ");
	put_dur(o, (double)in->median_ns);
	LIT(o, ", p90 ");
	put_dur(o, (double)in->p90_ns);
	LIT(o, ", max ");
	put_dur(o, (double)in->max_ns);
	ex_printf(o, "; GPU busy %.1f %% of the step time</p>\n",
		  in->total_ns ? 100.0 * (double)in->busy_ns / (double)in->total_ns : 0.0);
}

/* A time from the capture start as the text report prints it: "+0.569581 s". */
static void put_rel(ex_out *o, const gt_analysis *a, uint64_t t)
{
	char b[48];
	ex_puts(o, gt_fmt_rel_s(b, sizeof(b), gt_analysis_time_origin(a), t));
}

/* A cell naming an idle cause with its color, or text when c is no cause. */
static void td_cause(ex_out *o, int c, const char *none)
{
	LIT(o, "<td class=\"l\">");
	if (c >= 0 && c < GT_CAUSE_COUNT) {
		swatch(o, gt_cause_name(c));
		ex_puts(o, gt_cause_label(c));
	} else {
		h(o, none);
	}
	LIT(o, "</td>");
}

static void step_row(ex_out *o, const gt_analysis *a, const gt_an_step *s, const gt_an_steps *in)
{
	LIT(o, "<tr><td>#");
	ex_u64(o, s->index);
	LIT(o, "</td><td>");
	put_rel(o, a, s->start);
	LIT(o, "</td>");
	td_dur(o, (double)s->dur_ns);
	if (in->median_ns && in->source != GT_STEPS_PERIOD)
		ex_printf(o, "<td>%.1fx</td>", (double)s->dur_ns / (double)in->median_ns);
	else
		LIT(o, "<td>-</td>");
	ex_printf(o, "<td>%.0f%%</td>",
		  s->dur_ns ? 100.0 * (double)s->busy_ns / (double)s->dur_ns : 0);
	td_cause(o, s->top_cause, "no idle time");
	if (s->top_cause < GT_CAUSE_COUNT)
		td_dur(o, (double)s->cause_ns[s->top_cause]);
	else
		LIT(o, "<td>-</td>");
	LIT(o, "</tr>\n");
}

/* One GPU's steps: the summary, then the slowest (or most idle) steps. */
static void steps_table(ex_out *o, gt_export *x, const gt_analysis *a, size_t gi)
{
	size_t n;
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, gi, &n, &in);
	size_t *idx = n ? malloc(x->o.top_rows * sizeof(*idx)) : NULL;
	if (!idx) {
		ex_puts(o,
			n ? "<p class=\"warn\">The steps could not be listed (out of memory).</p>\n"
			  : "<p class=\"mut\">No steps: no NVTX step ranges, and no period found "
			    "in "
			    "the utilization.</p>\n");
		return;
	}
	steps_line(o, a, gi, &in);
	size_t k = gt_analysis_slowest_steps(a, gi, idx, x->o.top_rows);
	LIT(o, "<p class=\"mut small\">");
	ex_puts(o, in.source == GT_STEPS_PERIOD ? "The most idle" : "The slowest");
	LIT(o,
	    " steps (start from the capture start; x median: its length over the median):</p>\n");
	TABLE_HEAD(o, "step", "start", "length", "x median", "GPU busy", "<largest idle cause",
		   "its idle time");
	for (size_t i = 0; i < k; i++)
		step_row(o, a, &s[idx[i]], &in);
	LIT(o, "</table>\n");
	free(idx);
}

/* The work before or after a gap, as the text report names it. */
static void td_work(ex_out *o, const gt_analysis *a, uint8_t kind, uint32_t name, int mangled)
{
	if (kind == GT_REC_KERNEL) {
		td_kernel_open(o, a, name, mangled);
		LIT(o, "</td>");
		return;
	}
	LIT(o, "<td class=\"l\">");
	ex_puts(o, kind == GT_REC_MEMCPY ? "(memcpy)" : kind == GT_REC_MEMSET ? "(memset)" : "-");
	LIT(o, "</td>");
}

static void gap_row(ex_out *o, const gt_analysis *a, size_t i, const gt_an_gap *p, int mangled)
{
	uint64_t len = p->end - p->start;
	LIT(o, "<tr>");
	td_u64(o, i + 1);
	LIT(o, "<td>");
	put_rel(o, a, p->start);
	LIT(o, "</td>");
	td_dur(o, (double)len);
	td_cause(o, p->main_cause, "-");
	ex_printf(o, "<td>%.0f%%</td>",
		  len ? 100.0 * (double)p->cause_ns[p->main_cause] / (double)len : 0);
	td_work(o, a, p->prev_kind, p->prev_name, mangled);
	td_work(o, a, p->next_kind, p->next_name, mangled);
	LIT(o, "<td class=\"l\">");
	if (p->feed_tid) {
		const char *ln = gt_analysis_string(a, p->last_call_name);
		LIT(o, "tid ");
		ex_u64(o, p->feed_tid);
		if (ln) {
			LIT(o, ", after ");
			h(o, ln);
		}
	} else {
		ex_putc(o, '-');
	}
	LIT(o, "</td></tr>\n");
}

/* One GPU's longest gaps (gt_analysis_longest_gaps), longest first. */
static void gaps_table(ex_out *o, gt_export *x, const gt_analysis *a, size_t gi)
{
	size_t n;
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, gi, &n);
	if (!n) {
		LIT(o, "<p class=\"mut\">No idle gaps.</p>\n");
		return;
	}
	TABLE_HEAD(o, "#", "start", "length", "<main cause", "of the gap", "<work before",
		   "<work after", "<feeding thread, its last call");
	for (size_t i = 0; i < n && i < x->o.top_rows; i++)
		gap_row(o, a, i, &gp[i], !!(x->o.flags & GT_EXPORT_MANGLED));
	LIT(o, "</table>\n");
}

static void nvtx_row(ex_out *o, const gt_analysis *a, const gt_an_nvtx_sum *r)
{
	const char *name = gt_analysis_string(a, r->name);
	LIT(o, "<tr><td class=\"name\">");
	h(o, name ? name : "?");
	LIT(o, "</td><td>");
	bar_span(o, r->share);
	put_share(o, r->share);
	LIT(o, "</td>");
	td_dur(o, (double)r->total_ns);
	td_u64(o, r->count);
	td_dur(o, r->mean_ns);
	td_dur(o, (double)r->median_ns);
	td_dur(o, (double)r->min_ns);
	td_dur(o, (double)r->max_ns);
	LIT(o, "</tr>\n");
}

/* NVTX ranges by name (gt_analysis_nvtx_sum), largest total first. */
static void nvtx_section(ex_out *o, gt_export *x, const gt_analysis *a)
{
	size_t n;
	const gt_an_nvtx_sum *r = gt_analysis_nvtx_sum(a, &n);
	LIT(o, "<h2 id=\"nvtx\">NVTX ranges</h2>\n");
	if (!n) {
		LIT(o, "<p class=\"mut\">No NVTX ranges in these traces.</p>\n");
		return;
	}
	LIT(o, "<p class=\"mut small\">Per range name, like nsys's nvtx_sum; share of the ");
	put_dur(o, (double)gt_analysis_nvtx_span(a));
	LIT(o, " span of the GPU windows (nested ranges and threads can add up to more).</p>\n");
	TABLE_HEAD(o, "<range", "share", "total", "count", "mean", "median", "min", "max");
	size_t rows = n < x->o.top_rows ? n : x->o.top_rows;
	for (size_t i = 0; i < rows; i++)
		nvtx_row(o, a, &r[i]);
	LIT(o, "</table>\n");
	if (rows < n) {
		LIT(o, "<p class=\"mut small\">... and ");
		ex_u64(o, n - rows);
		ex_puts(o, gt_plural(n - rows, " more name", " more names"));
		LIT(o, " (JSON report nvtx_sum, or export -r nvtx_sum).</p>\n");
	}
}

static void syncs_table(ex_out *o, gt_export *x, const gt_analysis *a)
{
	size_t n = 0;
	const gt_an_sync *s = gt_analysis_syncs(a, &n);
	LIT(o, "<h2 id=\"syncs\">Host synchronization</h2>\n");
	if (!n) {
		LIT(o, "<p class=\"mut\">No synchronization calls recorded.</p>\n");
		return;
	}
	TABLE_HEAD(o, "<process / thread", "<call", "count", "blocked", "longest");
	size_t rows = n < x->o.top_rows ? n : x->o.top_rows;
	for (size_t i = 0; i < rows; i++) {
		const gt_an_sync *r = &s[i];
		const char *tn = r->tid ? gt_analysis_thread_name(a, r->trace, r->tid) : NULL;
		const char *fn = r->name ? gt_analysis_string(a, r->name) : NULL;
		LIT(o, "<tr><td class=\"l\">pid ");
		ex_u64(o, r->pid);
		if (r->tid) {
			LIT(o, " / tid ");
			ex_u64(o, r->tid);
		}
		if (tn) {
			LIT(o, " (");
			h(o, tn);
			ex_putc(o, ')');
		}
		LIT(o, "</td><td class=\"l\">");
		h(o, fn ? fn : gt_sync_type_name(r->type));
		LIT(o, "</td>");
		td_u64(o, r->count);
		td_dur(o, (double)r->total_ns);
		td_dur(o, (double)r->max_ns);
		LIT(o, "</tr>\n");
	}
	LIT(o, "</table>\n");
}

static void inputs_table(ex_out *o, const gt_analysis *a, uint64_t problems)
{
	LIT(o, "<h2 id=\"inputs\">Inputs and losses</h2>\n");
	TABLE_HEAD(o, "<trace", "<process", "records", "read problems", "lost records", "<status");
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		uint64_t rec = 0, lost = 0;
		for (int k = 0; k < GT_REC_TYPE_LIMIT; k++)
			rec += t->records[k];
		for (int k = 0; k < GT_AN_LOSS_SLOTS; k++)
			lost += t->loss_count[k];
		LIT(o, "<tr><td class=\"name\">");
		h(o, t->path);
		LIT(o, "</td><td class=\"name\">");
		if (t->header_ok) {
			LIT(o, "pid ");
			ex_u64(o, t->header.pid);
			LIT(o, " on ");
			h(o, t->header.hostname);
			if (t->header.cmdline[0]) {
				LIT(o, ": ");
				ex_html_str(o, t->header.cmdline, strnlen(t->header.cmdline, 160));
			}
		}
		LIT(o, "</td>");
		td_u64(o, rec);
		td_u64(o, t->problems + t->rs.bad_frames);
		td_u64(o, lost);
		LIT(o, "<td class=\"l\">");
		if (t->status)
			h(o, t->error);
		else if (t->problems)
			h(o, t->first_problem);
		else
			LIT(o, "ok");
		LIT(o, "</td></tr>\n");
	}
	LIT(o, "</table>\n");
	if (problems) {
		LIT(o, "<p class=\"warn\">");
		ex_u64(o, problems);
		ex_puts(o, gt_plural(problems, " problem was", " problems were"));
		LIT(o, " met reading the traces; what could be read is shown.</p>\n");
	}
}

/* ------------------------------------------------------------ findings */

/* Width (SVG units of the 11px text) a label needs, with a margin. */
static double label_w(const char *s)
{
	return 6.8 * (double)strlen(s) + 10;
}

/* One segment of a breakdown bar: a marked rectangle, its tooltip, and its
 * label when the label fits inside (else the table below names it). */
static void part_seg(ex_out *o, const gt_diag_part *pt, double x, double y, double w, double hh,
		     const char *of)
{
	char lab[80];
	snprintf(lab, sizeof(lab), "%s %.1f%%", pt->id, 100.0 * pt->share);
	LIT(o, "<g><title>");
	h(o, pt->id);
	LIT(o, ": ");
	put_share(o, pt->share);
	LIT(o, " of ");
	h(o, of);
	LIT(o, ", ");
	put_dur(o, (double)pt->ns);
	LIT(o, "</title>");
	bar_rect(o, x, y, w, hh, pt->id);
	if (w >= label_w(lab)) {
		/* light parts get dark text */
		int dark = !strcmp(pt->id, "startup") || !strcmp(pt->id, "idle_other") ||
			   !strcmp(pt->id, "small_grid") || !strcmp(pt->id, "pageable_copies") ||
			   !strcmp(pt->id, "comm_exposed") || !strcmp(pt->id, "straggler") ||
			   !strcmp(pt->id, "low_occupancy");
		LIT(o, "<text x=\"");
		ex_fixed(o, x + 5, 1, "0");
		LIT(o, "\" y=\"");
		ex_fixed(o, y + hh / 2 + 4, 1, "0");
		LIT(o, "\" style=\"fill:");
		ex_puts(o, dark ? "#1f2328" : "#fff");
		LIT(o, "\">");
		h(o, lab);
		LIT(o, "</text>");
	}
	LIT(o, "</g>");
}

/* The breakdown's table: every part, in the bar's order, with its color, its
 * share, its time and what the text report says of it. */
static void parts_table(ex_out *o, const gt_diag_gpu *g, const char *win)
{
	LIT(o, "<table class=\"parts\"><tr><th class=\"l\">part</th><th>share</th><th>time</th>"
	       "<th class=\"l\">of</th></tr>\n");
	for (size_t i = 0; i < g->nparts; i++) {
		const gt_diag_part *pt = &g->parts[i];
		int su = !strcmp(pt->id, "startup");
		LIT(o, "<tr data-part=\"");
		h(o, pt->id);
		LIT(o, "\"><td class=\"l\">");
		swatch(o, pt->id);
		h(o, pt->id);
		LIT(o, "</td><td>");
		put_share(o, pt->share);
		LIT(o, "</td><td>");
		put_dur(o, (double)pt->ns);
		LIT(o, "</td><td class=\"l\">");
		if (su) {
			LIT(o, "of the ");
			h(o, win);
			LIT(o, " window; set aside: the other shares are of the rest");
		} else {
			ex_puts(o, g->startup_ns ? "of the steady state" : "of the window");
		}
		if (!strcmp(pt->id, "idle_other") && g->idle_other_ns) {
			int first = 1;
			LIT(o, " (");
			for (int c = 0; c < GT_CAUSE_COUNT; c++) {
				if (c == GT_CAUSE_UNKNOWN || c == GT_CAUSE_DATA_LOST ||
				    !g->idle_other_cause_ns[c])
					continue;
				ex_puts(o, first ? "" : ", ");
				ex_puts(o, gt_cause_label(c));
				ex_putc(o, ' ');
				put_share(o, (double)g->idle_other_cause_ns[c] /
						     (double)(g->window_ns - g->startup_ns));
				first = 0;
			}
			LIT(o, ": below the thresholds)");
		}
		if (!strcmp(pt->id, "unknown") && g->idle_other_cause_ns[GT_CAUSE_DATA_LOST]) {
			LIT(o, " (");
			put_dur(o, (double)g->idle_other_cause_ns[GT_CAUSE_DATA_LOST]);
			LIT(o, " of it over lost data)");
		}
		LIT(o, "</td></tr>\n");
	}
	LIT(o, "</table>\n");
}

/* One GPU's wall time as the text report's "Where the wall time went": the
 * same parts (gt_diag_gpu.parts), shares and denominator. The main bar is the
 * steady state (the window less start-up), so each segment's width is its
 * share; start-up, whose share is of the whole window, has a thin bar of its
 * own below, the width of the window. */
static void breakdown(ex_out *o, const gt_diag_gpu *g)
{
	char win[32], ss[32], st[32], of[64];
	uint64_t steady = g->startup_ns < g->window_ns ? g->window_ns - g->startup_ns : 0;
	gt_fmt_ns(win, sizeof(win), (double)g->window_ns);
	gt_fmt_ns(ss, sizeof(ss), (double)steady);
	gt_fmt_ns(st, sizeof(st), (double)g->startup_ns);
	LIT(o, "<figure class=\"wall\" data-gpu=\"");
	ex_u64(o, g->gpu);
	LIT(o, "\"><figcaption>");
	char line[512];
	gt_diag_gpu_headline(g, line, sizeof(line));
	h(o, line);
	LIT(o, "; <b class=\"denom\">");
	gt_diag_gpu_denominator(g, line, sizeof(line));
	h(o, line);
	if (g->startup_ns && steady)
		snprintf(of, sizeof(of), "the %s steady state", ss);
	else
		snprintf(of, sizeof(of), "the %s window", win);
	LIT(o, "</b></figcaption>\n");
	const gt_diag_part *su = NULL;
	int thin = g->startup_ns && steady;
	LIT(o, "<svg viewBox=\"0 0 960 ");
	ex_puts(o, thin ? "52" : "34");
	LIT(o, "\" role=\"img\" aria-label=\"wall time breakdown\">");
	double x = 0;
	for (size_t i = 0; i < g->nparts; i++) {
		const gt_diag_part *pt = &g->parts[i];
		if (!strcmp(pt->id, "startup")) {
			su = pt;
			continue;
		}
		double w = steady ? 960.0 * (double)pt->ns / (double)steady : 0;
		if (w <= 0)
			continue;
		part_seg(o, pt, x, 2, w, 30, of);
		x += w;
	}
	if (thin && su) {
		char lab[96];
		double w = 960.0 * (double)su->ns / (double)g->window_ns;
		snprintf(lab, sizeof(lab), "startup %.1f%% of the %s window, set aside",
			 100.0 * su->share, win);
		snprintf(of, sizeof(of), "the %s window", win);
		LIT(o, "<rect x=\"0\" y=\"38\" width=\"960\" height=\"12\" fill=\"#fff\" "
		       "stroke=\"#d1d9e0\"/>");
		LIT(o, "<g><title>");
		h(o, lab);
		LIT(o, ", ");
		h(o, st);
		LIT(o, "</title>");
		bar_rect(o, 0, 38, w, 12, "startup");
		LIT(o, "<text x=\"");
		/* after the segment when it fits there, else inside it */
		ex_fixed(o, 960 - w >= label_w(lab) ? w + 5 : 5, 1, "0");
		LIT(o, "\" y=\"48\" style=\"fill:#1f2328\">");
		h(o, lab);
		LIT(o, "</text></g>");
	}
	LIT(o, "</svg>\n");
	parts_table(o, g, win);
	LIT(o, "</figure>\n");
}

/* The share badge's tooltip: what a finding's share is of, the steady state
 * when start-up was set aside on its GPU, else the window, in the words of
 * the text report's denominator (gt_diag_gpu_denominator). */
static void share_title(ex_out *o, const gt_diagnosis *d, uint32_t gpu)
{
	const gt_diag_gpu *g = NULL;
	for (size_t i = 0; i < gt_diagnosis_ngpus(d) && !g; i++)
		if (gt_diagnosis_gpu(d, i)->gpu == gpu)
			g = gt_diagnosis_gpu(d, i);
	if (!g) {
		LIT(o, "share of this GPU's window the finding explains");
		return;
	}
	char den[256];
	gt_diag_gpu_denominator(g, den, sizeof(den));
	if (g->startup_ns && g->startup_ns < g->window_ns)
		LIT(o, "share of the steady state the finding explains: ");
	else
		LIT(o, "share of this GPU's window the finding explains: ");
	h(o, den);
}

static void finding_card(ex_out *o, const gt_diagnosis *d, const gt_finding *f)
{
	LIT(o, "<div class=\"finding ");
	ex_puts(o, gt_severity_name(f->severity));
	LIT(o, "\"><div class=\"t\"><span class=\"badge\">#");
	ex_u64(o, f->rank);
	LIT(o, "</span><span class=\"badge\" title=\"");
	share_title(o, d, f->gpu);
	LIT(o, "\">");
	put_pct(o, f->share);
	LIT(o, " of GPU ");
	ex_u64(o, f->gpu);
	LIT(o, "</span><span class=\"badge\">");
	ex_puts(o, gt_severity_name(f->severity));
	LIT(o, "</span>");
	h(o, f->title);
	LIT(o, "</div><p class=\"fix\"><b>Fix:</b> ");
	h(o, f->fix);
	LIT(o, "</p><details><summary>evidence (");
	h(o, f->name);
	LIT(o, ": ");
	put_dur(o, (double)f->claim_ns);
	LIT(o, " claimed)</summary><ul class=\"ev\">");
	for (size_t e = 0; e < f->nevidence; e++) {
		LIT(o, "<li>");
		h(o, f->evidence[e]);
		LIT(o, "</li>");
	}
	for (size_t e = 0; e < f->nexamples; e++) {
		const gt_diag_example *x = &f->examples[e];
		LIT(o, "<li>example: at +");
		put_dur(o, (double)x->t_rel_ns);
		LIT(o, " idle ");
		put_dur(o, (double)x->len);
		LIT(o, ", mostly ");
		ex_puts(o, gt_cause_label(x->main_cause));
		if (x->tid) {
			LIT(o, "; thread ");
			ex_u64(o, x->tid);
			if (x->thread && x->thread[0]) {
				LIT(o, " '");
				h(o, x->thread);
				ex_putc(o, '\'');
			}
			LIT(o, " (pid ");
			ex_u64(o, x->pid);
			ex_putc(o, ')');
		}
		if (x->last_call && x->last_call[0]) {
			LIT(o, "; last call ");
			h(o, x->last_call);
		}
		if (x->prev && x->prev[0]) {
			LIT(o, "; after ");
			h(o, x->prev);
		}
		if (x->next && x->next[0]) {
			LIT(o, "; then ");
			h(o, x->next);
			LIT(o, " on stream ");
			ex_u64(o, x->stream);
		}
		LIT(o, "</li>");
	}
	for (size_t k = 0; k < f->nkernels; k++) {
		const gt_diag_kernel *kr = &f->kernels[k];
		LIT(o, "<li>kernel <code>");
		h(o, kr->name);
		LIT(o, "</code>: ");
		ex_u64(o, kr->count);
		ex_puts(o, gt_plural(kr->count, " launch, ", " launches, "));
		put_dur(o, (double)kr->total_ns);
		LIT(o, " total, mean ");
		put_dur(o, kr->mean_ns);
		if (kr->occupancy >= 0) {
			LIT(o, ", occupancy ");
			put_pct(o, kr->occupancy);
		}
		LIT(o, "</li>");
	}
	LIT(o, "</ul></details></div>\n");
}

/* Finding cards shown before the rest is folded into a <details>. */
#define FINDINGS_SHOWN 5

/* The findings, first: what to change, ranked, then each GPU's breakdown. */
static int findings(ex_out *o, gt_export *x)
{
	const gt_diagnosis *d = ex_diagnosis(x);
	LIT(o, "<h2 id=\"findings\">What to change</h2>\n");
	if (!d) {
		LIT(o, "<p class=\"warn\">The diagnosis could not run (out of memory).</p>\n");
		return 0;
	}
	size_t n = gt_diagnosis_nfindings(d);
	if (!n)
		LIT(o, "<p>No finding: nothing explains a large share of the wall time.</p>\n");
	/* the first ones in full; many GPUs can repeat the same finding */
	for (size_t i = 0; i < n; i++) {
		if (i == FINDINGS_SHOWN) {
			LIT(o, "<details><summary>");
			ex_u64(o, n - i);
			ex_puts(o, gt_plural(n - i, " more finding</summary>\n",
					     " more findings</summary>\n"));
		}
		finding_card(o, d, gt_diagnosis_finding(d, i));
	}
	if (n > FINDINGS_SHOWN)
		LIT(o, "</details>\n");
	for (size_t g = 0; g < gt_diagnosis_ngpus(d); g++) {
		const gt_diag_gpu *dg = gt_diagnosis_gpu(d, g);
		if (!dg->not_a_finding)
			continue;
		LIT(o, "<p class=\"notfinding\">Not a finding (GPU ");
		ex_u64(o, dg->gpu);
		LIT(o, "): ");
		h(o, dg->not_a_finding);
		LIT(o, "</p>\n");
	}
	LIT(o, "<h3>Where the wall time went</h3>\n");
	for (size_t g = 0; g < gt_diagnosis_ngpus(d); g++)
		if (gt_diagnosis_gpu(d, g)->window_ns)
			breakdown(o, gt_diagnosis_gpu(d, g));
	for (size_t i = 0; i < gt_diagnosis_nnotes(d); i++) {
		LIT(o, "<p class=\"mut small\">Note: ");
		h(o, gt_diagnosis_note(d, i));
		LIT(o, "</p>\n");
	}
	return 1;
}

/* Headline numbers per GPU, shown first. */
static void summary(ex_out *o, const gt_analysis *a)
{
	LIT(o, "<h2 id=\"summary\">Summary</h2>\n");
	size_t ng = gt_analysis_ngpus(a);
	if (!ng)
		LIT(o, "<p class=\"warn\">No GPU activity was found in these traces.</p>\n");
	for (size_t gi = 0; gi < ng; gi++) {
		const gt_an_gpu *g = gt_analysis_gpu(a, gi);
		int top = 0;
		for (int k = 1; k < GT_CAUSE_COUNT; k++)
			if (g->cause_ns[k] > g->cause_ns[top])
				top = k;
		LIT(o, "<p><b>GPU ");
		ex_u64(o, gi);
		LIT(o, "</b> (");
		h(o, g->dev.name[0] ? g->dev.name : "unknown");
		LIT(o, ") was busy <b>");
		put_pct(o, g->utilization);
		LIT(o, "</b> of its ");
		put_dur(o, (double)g->window_ns);
		LIT(o, " window");
		if (g->idle_ns && g->window_ns) {
			LIT(o, "; most idle time was <b>");
			ex_puts(o, gt_cause_label(top));
			LIT(o, "</b> (");
			put_pct(o, (double)g->cause_ns[top] / (double)g->window_ns);
			LIT(o, " of wall time: ");
			h(o, cause_help[top]);
			LIT(o, ")");
		}
		LIT(o, ".</p>\n");
	}
}

static void td_gpm(ex_out *o, int m, double v)
{
	char b[32];
	if (v < 0)
		snprintf(b, sizeof(b), "-");
	else if (m < GT_GPM_PERCENT_COUNT)
		snprintf(b, sizeof(b), "%.1f%%", v);
	else
		gt_fmt_rate(b, sizeof(b), v);
	LIT(o, "<td>");
	h(o, b);
	LIT(o, "</td>");
}

/* GPM: per metric read, the means and the distribution. */
static void gpm_table(ex_out *o, const gt_an_gpu *g)
{
	if (!g->gpm.readings)
		return;
	/* TABLE_HEAD opens the table: the caption is a paragraph above it */
	LIT(o, "<p class=\"mut small gpm\">GPM hardware counters: ");
	ex_u64(o, g->gpm.readings);
	ex_puts(o, gt_plural(g->gpm.readings, " reading", " readings"));
	LIT(o, "; while busy = weighted by the busy time in each reading</p>\n");
	TABLE_HEAD(o, "<metric", "while busy", "mean", "p5", "p50", "p95", "covered");
	for (int m = 0; m < GT_GPM_COUNT; m++) {
		const gt_an_gpm_stat *q = &g->gpm.m[m];
		if (!q->ns)
			continue;
		LIT(o, "<tr data-gpm=\"");
		ex_u64(o, (uint64_t)m);
		LIT(o, "\"><td class=\"l\">");
		h(o, ex_gpm_defs[m].track);
		LIT(o, "</td>");
		td_gpm(o, m, q->mean_busy);
		td_gpm(o, m, q->mean);
		td_gpm(o, m, q->p5);
		td_gpm(o, m, q->p50);
		td_gpm(o, m, q->p95);
		td_dur(o, (double)q->ns);
		LIT(o, "</tr>\n");
	}
	LIT(o, "</table>\n");
}

/* ------------------------------------------------------------ the page */

static void gpu_section(ex_out *o, gt_export *x, const gt_analysis *a, size_t gi, const col *cols)
{
	const gt_an_gpu *g = gt_analysis_gpu(a, gi);
	char b[64];
	LIT(o, "<h3 id=\"gpu");
	ex_u64(o, gi);
	LIT(o, "\">GPU ");
	ex_u64(o, gi);
	LIT(o, ": ");
	h(o, g->dev.name[0] ? g->dev.name : "unknown device");
	LIT(o, " <span class=\"mut\">(");
	ex_u64(o, g->nprocs);
	ex_puts(o, gt_plural(g->nprocs, " process, ", " processes, "));
	ex_u64(o, g->nstreams);
	ex_puts(o, gt_plural(g->nstreams, " stream)</span></h3>\n", " streams)</span></h3>\n"));
	LIT(o, "<div class=\"kpis\">");
	snprintf(b, sizeof(b), "%.1f%%", 100.0 * g->utilization);
	kpi(o, b, "utilization");
	gt_fmt_ns(b, sizeof(b), (double)g->window_ns);
	kpi(o, b, "window");
	gt_fmt_ns(b, sizeof(b), (double)g->idle_ns);
	kpi(o, b, "idle");
	fmt_count(b, sizeof(b), g->ngaps);
	kpi(o, b, "idle gaps");
	fmt_count(b, sizeof(b), g->nkernels);
	kpi(o, b, "kernels");
	gt_fmt_pct_ns(b, sizeof(b), g->lat_api.p50, g->lat_api.upper_bounds);
	kpi(o, b, "launch to start (p50)");
	if (g->nmemcpy) {
		gt_fmt_bytes(b, sizeof(b), (double)g->memcpy_bytes);
		kpi(o, b, "copied");
	}
	if (g->throttled_ns) {
		gt_fmt_ns(b, sizeof(b), (double)g->throttled_ns);
		kpi(o, b, "busy while throttled");
	}
	LIT(o, "</div>\n");
	if (g->window_ns) {
		timeline(o, a, gi, cols);
		nvml_chart(o, a, g, cols);
		gpm_chart(o, a, g, cols);
	}
	gpm_table(o, g);
	LIT(o, "<div class=\"row3\">");
	util_hist(o, g);
	gap_hist(o, g);
	cause_bars(o, g);
	LIT(o, "</div>\n");
	(void)x;
}

static void page_title(gt_export *x, const gt_analysis *a, char *buf, size_t cap)
{
	if (x->o.title) {
		snprintf(buf, cap, "%s", x->o.title);
		return;
	}
	char stem[256];
	ex_trace_stem(x->npaths ? x->paths[0] : "gaptrace", stem, sizeof(stem));
	/* a trace directory: name it, not its first file */
	if (x->npaths > 1 || (x->npaths == 1 && strchr(x->paths[0], '/'))) {
		const char *p = x->paths[0], *slash = strrchr(p, '/');
		if (slash && slash > p) {
			char dir[1024];
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - p), p);
			ex_trace_stem(dir, stem, sizeof(stem));
		}
	}
	snprintf(buf, cap, "%s", stem);
	(void)a;
}

/* The sections after the breakdown. Each is a boundary of the output
 * budget: past it, the sections are dropped whole (ex_out_check) and a
 * note says so. */
static void body_sections(ex_out *o, gt_export *x, const gt_analysis *a, const col *cols)
{
	size_t ng = gt_analysis_ngpus(a);
	for (size_t g = 0; g < ng; g++)
		if (!ex_out_check(o))
			gpu_section(o, x, a, g, cols + g * NCOL);

	ex_out_check(o);
	per_gpu(o, x, a, "steps", "Steps", NULL, steps_table);
	ex_out_check(o);
	per_gpu(o, x, a, "gaps", "Longest gaps",
		"<p class=\"mut\">Each GPU's longest idle gaps, start from the capture start; "
		"its main cause is the largest part of the gap.</p>\n",
		gaps_table);
	ex_out_check(o);
	per_gpu(o, x, a, "kernels", "Top kernels by time", NULL, kernels_table);
	ex_out_check(o);
	per_gpu(o, x, a, "copies", "Copies by kind", NULL, copies_table);
	ex_out_check(o);
	sites_section(o, x, a);
	ex_out_check(o);
	nvtx_section(o, x, a);
	ex_out_check(o);
	syncs_table(o, x, a);
	ex_out_check(o);
	if (ex_out_tail(o)) {
		char nb[128];
		ex_not_all_written(nb, sizeof(nb), o->budget);
		LIT(o, "<p class=\"warn\" id=\"not-all-written\"><b>");
		h(o, nb);
		LIT(o, "</b>: the sections above it are complete, the rest was left out.</p>\n");
	}
}

int gt_export_html(gt_export *x, FILE *out, gt_export_stats *st)
{
	if (!x || !out)
		return GT_ERR_INVAL;
	gt_export_stats local = {0};
	ex_out o;
	int rc = ex_out_init(&o, out);
	if (rc)
		return rc;
	ex_out_budget(&o, x);
	if (!x->an_rc)
		x->for_html = 1; /* not built yet: with the cause columns */
	const gt_analysis *a = ex_analysis(x);
	size_t ng = a ? gt_analysis_ngpus(a) : 0;
	col *cols = a ? calloc(ng ? ng * NCOL : 1, sizeof(col)) : NULL;
	if (!cols) {
		ex_out_finish(&o);
		return GT_ERR_NOMEM;
	}
	for (size_t g = 0; g < ng; g++)
		fill_cols(a, g, cols + g * NCOL);
	read_nvml(x, a, cols, &local.problems);

	char title[512];
	page_title(x, a, title, sizeof(title));
	LIT(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"gaptrace ");
	ex_puts(&o, gt_version());
	LIT(&o, "\">\n<title>gaptrace report: ");
	h(&o, title);
	LIT(&o, "</title>\n<style>\n");
	ex_put(&o, css, sizeof(css) - 1);
	LIT(&o, "</style></head>\n<body><main>\n<header><h1>gaptrace report: ");
	h(&o, title);
	LIT(&o, "</h1><p class=\"sub\">");
	uint64_t t_first = UINT64_MAX, t_last = 0;
	const char *host = NULL;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		if (!t->header_ok)
			continue;
		if (!host)
			host = t->header.hostname;
		if (t->t_first && t->t_first < t_first)
			t_first = t->t_first;
		if (t->t_last > t_last)
			t_last = t->t_last;
	}
	ex_u64(&o, gt_analysis_ntraces(a));
	ex_puts(&o, gt_plural(gt_analysis_ntraces(a), " trace", " traces"));
	if (host && host[0]) {
		LIT(&o, " from ");
		h(&o, host);
	}
	if (t_last > t_first) {
		LIT(&o, ", ");
		put_dur(&o, (double)(t_last - t_first));
		LIT(&o, " captured");
	}
	LIT(&o, ", ");
	ex_u64(&o, ng);
	ex_puts(&o, gt_plural(ng, " GPU", " GPUs"));
	LIT(&o, ". Times (+s) are from the capture start = ");
	char utc[48];
	h(&o, gt_fmt_utc(utc, sizeof(utc), gt_analysis_time_origin(a)));
	LIT(&o, "; shares are of each GPU's window (first to last GPU "
		"activity) without its start-up, which is set aside.</p>\n");
	char sl[1024];
	if (gt_analysis_slice_text(a, sl, sizeof(sl))) {
		LIT(&o, "<p class=\"slice\">Slice: ");
		h(&o, sl);
		LIT(&o, "</p>\n");
	}
	LIT(&o, "</header>\n");

	if (!findings(&o, x))
		summary(&o, a);

	LIT(&o, "<h2 id=\"gpus\">Where the time went, per GPU</h2>\n");
	if (ng)
		legend(&o, 1);
	else
		LIT(&o, "<p class=\"mut\">No GPU activity or samples in these traces.</p>\n");
	body_sections(&o, x, a, cols);
	/* this export reads the traces only through the analysis: its
	 * problems are the ones to report */
	ex_input_stats(a, &local);
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		if ((t->status || t->problems) && x->o.analysis.log) {
			gt_errinfo ei;
			gt_errinfo_set(&ei, t->status ? t->status : GT_ERR_CORRUPT, 0, "%s",
				       t->status ? t->error : t->first_problem);
			x->o.analysis.log(x->o.analysis.log_user, t->path, &ei);
		}
	}
	inputs_table(&o, a, local.problems);
	LIT(&o, "<footer>Made by gaptrace ");
	ex_puts(&o, gt_version());
	LIT(&o, ". Utilization = time with a kernel, copy or memset running, over all streams "
		"and processes. Idle causes: ");
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		ex_puts(&o, k ? "; <b>" : "<b>");
		ex_puts(&o, gt_cause_label(k));
		LIT(&o, "</b>: ");
		h(&o, cause_help[k]);
	}
	LIT(&o, ".</footer>\n</main></body></html>\n");
	free(cols);
	local.not_all_written = (uint64_t)o.cut;
	rc = ex_out_finish(&o);
	local.bytes = o.bytes;
	if (st)
		*st = local;
	return rc;
}

/* ------------------------------------------------------------ for `run` */

int gt_export_default_path(const char *trace_path, int format, char *buf, size_t cap)
{
	static const char *const in_dir[] = {NULL, "tables.csv", "tables.json", "timeline.json",
					     "report.html"};
	static const char *const ext[] = {NULL, ".csv", ".json", ".json", ".html"};
	struct stat sb;
	if (format < GT_EXPORT_CSV || format > GT_EXPORT_HTML)
		return GT_ERR_INVAL;
	if (!trace_path)
		trace_path = ".";
	size_t n = strlen(trace_path);
	if (stat(trace_path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return snprintf(buf, cap, "%s%s%s", trace_path,
				n && trace_path[n - 1] == '/' ? "" : "/", in_dir[format]);
	if (n > 7 && !strcmp(trace_path + n - 7, ".gtrace"))
		n -= 7;
	return snprintf(buf, cap, "%.*s%s", (int)n, trace_path, ext[format]);
}

int gt_export_html_default_path(const char *trace_path, char *buf, size_t cap)
{
	return gt_export_default_path(trace_path, GT_EXPORT_HTML, buf, cap);
}
