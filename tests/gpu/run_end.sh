#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/run_end.sh [CASE...]: the end of `gaptrace run` on real frameworks
# (issue 26: one model of the trace for the summary, the HTML report and the
# archive). For each case: the program untraced, then under
#   gaptrace run --report text,html --archive ARCH -o DIR -- PROGRAM
# with a watchdog. PASS when the traced program's stdout and exit status equal
# the untraced run's, the summary was printed ("What to change" or "busy"),
# DIR/report.html is a whole page, the archive got one entry whose trace/
# files are byte-identical to DIR's, and `gaptrace report DIR` leads with the
# same first finding as the summary. Results on stdout; work under $OUT.
set -u
GAPTRACE=${GAPTRACE:-build/tools/gaptrace}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-/tmp/run_end}
WATCHDOG=${WATCHDOG:-240}
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(eager_mlp host_step cupy_streams)
mkdir -p "$OUT"
pass=0 fail=0

cmd_of()
{
	case "$1" in
	eager_mlp) CMD=("$PYTHON" examples/torch/eager_mlp.py) ;;
	host_step) CMD=("$PYTHON" examples/jax/host_step.py --seconds 6) ;;
	cupy_streams) CMD=("$PYTHON" examples/cupy/cupy_streams.py) ;;
	*) return 1 ;;
	esac
}

# the first finding's name in a text summary or report ("1.  28.8% [medium] host_busy")
first_finding()
{
	sed -n 's/^ *1\. .*\] \([a-z_]*\).*/\1/p' "$1" | head -1
}

for c in "${cases[@]}"; do
	if ! cmd_of "$c"; then
		echo "SKIP $c: unknown case"
		continue
	fi
	d="$OUT/$c"
	rm -rf "$d" && mkdir -p "$d"
	timeout "$WATCHDOG" "${CMD[@]}" >"$d/untraced.out" 2>"$d/untraced.err"
	rc0=$?
	timeout "$WATCHDOG" "$GAPTRACE" run --report text,html --archive "$d/arch" -o "$d/trace" \
		-- "${CMD[@]}" >"$d/traced.out" 2>"$d/traced.err"
	rc1=$?
	why=""
	[ $rc1 -eq 124 ] && why="$why hang(watchdog ${WATCHDOG}s)"
	[ $rc0 -eq $rc1 ] || why="$why exit $rc1 (untraced $rc0)"
	# programs print timings: compare the lines without digits
	if ! cmp -s <(tr -d '0-9' <"$d/untraced.out") <(tr -d '0-9' <"$d/traced.out"); then
		why="$why stdout-differs"
	fi
	grep -qE "What to change|busy" "$d/traced.err" || why="$why no-summary"
	tail -c 200 "$d/trace/report.html" 2>/dev/null | grep -q "</html>" || why="$why no-html"
	n=$(ls -d "$d"/arch/*/ 2>/dev/null | wc -l)
	[ "$n" -eq 1 ] || why="$why archive-entries=$n"
	e=$(ls -d "$d"/arch/*/ 2>/dev/null | head -1)
	for f in "$d"/trace/*.gtrace; do
		[ -n "$e" ] && cmp -s "$f" "$e/trace/$(basename "$f")" || why="$why archive-bytes:$(basename "$f")"
	done
	"$GAPTRACE" report "$d/trace" >"$d/report.txt" 2>"$d/report.err" || why="$why report-failed"
	s=$(first_finding "$d/traced.err") r=$(first_finding "$d/report.txt")
	[ "$s" = "$r" ] || why="$why summary-first=$s report-first=$r"
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "PASS $c: rc $rc1, first finding ${s:-none}, archive $(basename "$e")"
	else
		fail=$((fail + 1))
		echo "FAIL $c:$why"
		tail -5 "$d/traced.err" | sed 's/^/    /'
	fi
done
echo "run_end: $pass passed, $fail failed"
[ $fail -eq 0 ]
