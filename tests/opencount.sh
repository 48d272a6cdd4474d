#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/opencount.sh GAPTRACE LIBOPENCOUNT TRACE_A TRACE_B TMPDIR
#
# Each trace file is opened once per command (issue 26: one reading, one
# model). Every command that reads traces runs under LD_PRELOAD of
# libopencount.so (tests/opencount/opencount.c), which logs each open of a
# *.gtrace path; the test wants every trace file of the command's operands
# opened exactly once: 0 means the shim saw nothing (the test would prove
# nothing), 2 or more a second reading. First the shim is shown to count:
# `cat F F` must read 2.
set -u
gt=$1 lib=$2 A=$3 B=$4 tmp=$5
rm -rf "$tmp" && mkdir -p "$tmp" || exit 2
fail=0

# the operands' trace files, one per line
files_of()
{
	local p
	for p in "$@"; do
		if [ -d "$p" ]; then ls "$p"/*.gtrace; else echo "$p"; fi
	done
}

# run NAME EXPECT OPERANDS... -- CMD...: CMD under the shim; each trace file of
# OPERANDS must be opened EXPECT times.
run()
{
	local name=$1 want=$2
	shift 2
	local ops=()
	while [ "$1" != "--" ]; do
		ops+=("$1")
		shift
	done
	shift
	local log="$tmp/$name.log" rc
	: >"$log"
	OPENCOUNT_LOG=$log LD_PRELOAD=$lib "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: exit $rc: $*"
		sed 's/^/    /' "$tmp/$name.err" | head -5
		fail=1
		return 1
	fi
	local f n bad=0 seen=""
	while IFS= read -r f; do
		n=$(grep -cxF -- "$f" "$log")
		seen="$seen $(basename "$f")=$n"
		[ "$n" -eq "$want" ] || bad=1
	done < <(files_of "${ops[@]}")
	if [ $bad -ne 0 ]; then
		echo "FAIL $name: opens per trace file:$seen (want $want each): $*"
		fail=1
		return 1
	fi
	echo "ok   $name:$seen"
}

# the check itself: the shim counts each open (`cat F F` opens F twice and
# must read 2; `cat F` 1), so a command that reads a trace twice reads 2
# and fails its case below
one=$(files_of "$A" | head -1)
run self_test_twice 2 "$one" -- cat "$one" "$one"
run self_test_once 1 "$one" -- cat "$one"

run report 1 "$A" -- "$gt" report "$A"
run report_json 1 "$A" -- "$gt" report --json "$A"
run report_slice 1 "$A" -- "$gt" report --from 1ms --skip-startup "$A"
run report_step_period 1 "$A" -- "$gt" report --step-period 5ms "$A"
run export_perfetto 1 "$A" -- "$gt" export -q -f perfetto -o "$tmp/a.json" "$A"
run export_html 1 "$A" -- "$gt" export -q -f html -o "$tmp/a.html" "$A"
run export_csv 1 "$A" -- "$gt" export -q -f csv -o "$tmp/csv/" "$A"
run export_json 1 "$A" -- "$gt" export -q -f json -o "$tmp/a.tables.json" "$A"
run export_sliced 1 "$A" -- "$gt" export -q -f perfetto --from 1ms -o "$tmp/b.json" "$A"
run export_no_analysis 1 "$A" -- "$gt" export -q -f perfetto --no-analysis -o "$tmp/c.json" "$A"
run diff 1 "$A" "$B" -- "$gt" diff "$A" "$B"
run diff_sliced 1 "$A" "$B" -- "$gt" diff --from 1ms "$A" "$B"
run archive 1 "$A" -- "$gt" archive -q --to "$tmp/archive" "$A"
exit $fail
