#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fuzzing campaign: every libFuzzer target for SECONDS each, JOBS at a time,
# each on a copy of its committed corpus (tests/fuzz/corpus/<target>), with
# a per-input time and memory limit (-timeout=10 -rss_limit_mb=2048; 60 s for
# fuzz_analysis and fuzz_export, whose inputs run every report or exporter
# under ASan: the golden hostile input export-budget, 2^20 kernels in 4.6 KB,
# takes 14 s there), so a slow or memory-hungry input is a finding
# (timeout-*, oom-*) like a crash.
# Prints one table row per target: run time, executions, new corpus inputs,
# findings (the artefacts libFuzzer wrote), and keeps the logs, the grown
# corpora and the artefacts under OUTDIR.
#   tests/fuzz/campaign.sh BUILD_FUZZ_DIR SECONDS JOBS OUTDIR [target...]
# (build the targets first: tests/fuzz/README.md, "With libFuzzer").
set -u
B=$1
SECS=$2
JOBS=$3
O=$4
shift 4
ALL="analysis export diff symbolize reader header ctl roundtrip"
T=${*:-$ALL}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$O"

one()
{
	local t=$1 len=16384 to=10
	[ "$t" = symbolize ] && len=8192
	case $t in analysis | export) to=60 ;; esac
	rm -rf "${O:?}/$t"
	mkdir -p "$O/$t/corpus" "$O/$t/art"
	cp "$ROOT/tests/fuzz/corpus/$t/"* "$O/$t/corpus/" 2>/dev/null
	local before
	before=$(find "$O/$t/corpus" -type f | wc -l)
	(cd "$O/$t/art" && timeout -k 30 $((SECS + 120)) "$B/tests/fuzz_$t" \
		-max_total_time="$SECS" -max_len="$len" -timeout="$to" -rss_limit_mb=2048 \
		-print_final_stats=1 "$O/$t/corpus" >"$O/$t/log" 2>&1)
	local rc=$? after runs secs finds
	after=$(find "$O/$t/corpus" -type f | wc -l)
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$O/$t/log" | grep -o '[0-9]*$')
	secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$O/$t/log" | grep -o 'in [0-9]*' | grep -o '[0-9]*')
	finds=$(find "$O/$t/art" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \
		-o -name 'leak-*' -o -name 'slow-unit-*' \) | wc -l)
	printf '%s\t%s s\t%s\t%s\t%s (exit %s)\n' "fuzz_$t" "${secs:-?}" "${runs:-?}" \
		"$((after - before))" "$finds" "$rc" >"$O/$t/row"
}

pids=()
for t in $T; do
	one "$t" &
	pids+=($!)
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 5; done
done
wait
printf 'target\ttime\texecutions\tnew inputs\tfindings\n'
for t in $T; do cat "$O/$t/row"; done
