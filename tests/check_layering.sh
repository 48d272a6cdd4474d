#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/check_layering.sh SRCDIR: the libraries' dependencies go one way.
#
#   format    <- common <- analysis <- diagnosis <- report, export
#   format    <- collector (the daemon)      format <- inject
#   analysis  <- diff     common <- synth   tools: everything
#   outfile (libc only) <- synth
#   analysis, diagnosis, report <- model <- archive (+ diff, outfile)
#   format, outfile <- metrics (the HTTP exposition, the textfile)
#   analysis <- live (the collector's live analysis in closed windows)
#   tools/ (the CLI) may include everything; collector/ never includes tools/
#
# common (collector/common: gaptrace/containers.h, argval.h, termtext.h,
# traceset.h, units.h, apiname.h, jsonstr.h, jsonw.h, causes.h) is internal:
# the shared containers, value parsers and formatters, API-name cleaner, the
# cause vocabulary, the terminal, JSON and HTML escapers, the one structured
# JSON writer (of the report, its findings and the diff) and the trace set
# (each trace file read once), for the libraries above it and the CLI.
#
# Each library may include only the public headers (gaptrace/X.h) of the
# libraries below it and its own internal headers, never another library's
# internal header. The build enforces most of this already (a target sees
# only the include directories of what it links); this check also reads the
# sources, so a stray include path cannot hide a wrong-way include. Prints
# every violation; exits 1 if any. A call with no include behind it (a
# prototype written by hand) is tests/check_links.sh's, on the archives.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
bad=0

# lib dir | public headers it may include | internal headers of others it may include
rules=(
	"format|format|"
	"inject|format|"
	"collector/daemon|format collector|"
	"collector/common|format containers argval termtext units apiname jsonstr jsonw causes traceset|"
	"collector/analysis|format containers termtext units apiname jsonstr causes analysis traceset|"
	"collector/diagnosis|format containers argval termtext units apiname jsonstr jsonw causes analysis diagnosis|"
	"collector/report|format containers termtext units apiname jsonstr jsonw causes analysis diagnosis report|"
	"collector/export|format containers units apiname jsonstr causes analysis diagnosis export traceset|"
	"collector/diff|format termtext units apiname jsonstr jsonw causes analysis diff|"
	"collector/outfile|outfile|"
	"collector/synth|format containers units apiname jsonstr causes analysis synth outfile|"
	"collector/model|format argval termtext units apiname jsonstr causes traceset analysis diagnosis report model slice onecapture report_mem|"
	"collector/archive|format units apiname jsonstr jsonw causes analysis diagnosis report diff outfile model slice report_mem archive|"
	"collector/metrics|format outfile metrics_buf metrics_http metrics_textfile|"
	"collector/live|format containers termtext units apiname jsonstr causes analysis live|"
)
# internal headers and the library that owns them
owner_of()
{
	case "$1" in
	an_internal.h) echo collector/analysis ;;
	diag_internal.h) echo collector/diagnosis ;;
	ex_internal.h) echo collector/export ;;
	rp_internal.h) echo collector/report ;;
	diff_internal.h) echo collector/diff ;;
	daemon_internal.h) echo collector/daemon ;;
	http_internal.h) echo collector/metrics ;;
	live_internal.h) echo collector/live ;;
	gt_internal.h) echo format ;;
	inj.h | enc.h) echo inject ;;
	cli.h | cli_internal.h | cli_opts.h | cmds.h) echo tools ;; # the CLI: no library includes it
	*) echo "" ;;
	esac
}

for rule in "${rules[@]}"; do
	IFS='|' read -r dir pubs extra <<<"$rule"
	[ -d "$dir" ] || {
		echo "check_layering: no $dir (the layout changed: update this script)"
		bad=1
		continue
	}
	while IFS= read -r hit; do
		file=${hit%%:*}
		inc=$(sed -n 's/.*#include "\([^"]*\)".*/\1/p' <<<"${hit#*:}")
		case "$inc" in
		gaptrace/*.h)
			name=${inc#gaptrace/}
			name=${name%.h}
			if ! grep -qw -- "$name" <<<"$pubs"; then
				echo "$file: includes $inc: $dir may use only: $pubs"
				bad=1
			fi
			;;
		*)
			own=$(owner_of "$(basename "$inc")")
			if [ -n "$own" ] && [ "$own" != "$dir" ] && ! grep -qw -- "$(basename "$inc")" <<<"$extra"; then
				echo "$file: includes $inc, internal to $own"
				bad=1
			fi
			;;
		esac
	done < <(grep -rn --include='*.c' --include='*.h' '#include "' "$dir" | sed 's/:[0-9]*:/:/')
done
# no public header left outside its library
for h in $(find collector tools format inject -path '*/include/gaptrace/*.h' 2>/dev/null); do
	case "$h" in
	format/include/gaptrace/format.h | collector/daemon/include/gaptrace/collector.h | \
		collector/common/include/gaptrace/containers.h | \
		collector/common/include/gaptrace/argval.h | \
		collector/common/include/gaptrace/termtext.h | \
		collector/common/include/gaptrace/traceset.h | \
		collector/common/include/gaptrace/units.h | \
		collector/common/include/gaptrace/apiname.h | \
		collector/common/include/gaptrace/jsonstr.h | \
		collector/common/include/gaptrace/jsonw.h | \
		collector/common/include/gaptrace/causes.h | \
		collector/analysis/include/gaptrace/analysis.h | \
		collector/diagnosis/include/gaptrace/diagnosis.h | \
		collector/report/include/gaptrace/report.h | collector/export/include/gaptrace/export.h | \
		collector/diff/include/gaptrace/diff.h | \
		collector/outfile/include/gaptrace/outfile.h | \
		collector/synth/include/gaptrace/synth.h | \
		collector/model/include/gaptrace/model.h | \
		collector/model/include/gaptrace/slice.h | \
		collector/model/include/gaptrace/onecapture.h | \
		collector/model/include/gaptrace/report_mem.h | \
		collector/archive/include/gaptrace/archive.h | \
		collector/metrics/include/gaptrace/metrics_buf.h | \
		collector/metrics/include/gaptrace/metrics_http.h | \
		collector/metrics/include/gaptrace/metrics_textfile.h | \
		collector/live/include/gaptrace/live.h) ;;
	*)
		echo "$h: a public header this check does not know (add its library's rule)"
		bad=1
		;;
	esac
done
[ "$bad" = 0 ] && echo "check_layering: every library includes only what it may"
exit "$bad"
