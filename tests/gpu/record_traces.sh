#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/record_traces.sh: record small traces of the examples (each
# ~1-2 MB at most) for examples/traces/, where CPU tests of the analysis and
# the diagnosis use them as golden inputs.
#
#   tests/gpu/record_traces.sh             # all suite cases + exact_counts
#   tests/gpu/record_traces.sh tiny_ops    # some cases
# -> $OUT/traces.tar.gz: traces/NAME/*.gtrace (the collector's nvml.gtrace
#    too under `gaptrace run`), traces/NAME.stdout (the example's JSON: its
#    expected counts and finding), traces/MANIFEST.tsv; $OUT/record_traces.txt.
# Takes ~1.5 minutes on the H200.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cases.sh"
gt_init record_traces
need_build
result_header "trace" "mode" "files" "KiB" "records" "status"
T="$WORK/traces"
rm -rf "$T" && mkdir -p "$T"
printf 'name\tcommand\tbytes\n' >"$T/MANIFEST.tsv"
MAX_KB=${MAX_KB:-2048}

# shellcheck disable=SC2048,SC2086
for c in ${*:-exact_counts $DIAG_CASES}; do
	log "-- $c"
	if [ "$c" = exact_counts ]; then
		b=$(ex_bin exact_counts) && CMD=("$b") || CMD=()
		[ "${#CMD[@]}" -gt 0 ]
	else
		example_cmd "$c" small
	fi || {
		result "$c" "-" "-" "-" "-" "ERROR (no such case or not built)"
		continue
	}
	record "$c" "$T/$c" "${CMD[@]}"
	cp "$WORK/$c.stdout" "$T/$c.stdout"
	if [ "$RC" -ne 0 ]; then
		result "$c" "$MODE" "-" "-" "-" "ERROR (exit $RC)"
		continue
	fi
	n=$(find "$T/$c" -name '*.gtrace' | wc -l)
	kb=$(du -sk "$T/$c" | awk '{ print $1 }')
	recs=$(for f in "$T/$c"/*.gtrace; do "$GAPTRACE" dump -s "$f" 2>/dev/null; done |
		awk -F'records=' '/records=/ { split($2, a, " "); s += a[1] } END { print s + 0 }')
	printf '%s\t%s\t%s\n' "$c" "${CMD[*]}" "$((kb * 1024))" >>"$T/MANIFEST.tsv"
	if [ "$n" -eq 0 ]; then st="FAIL (no trace)"; elif [ "$kb" -gt "$MAX_KB" ]; then
		st="FAIL (> $MAX_KB KiB: make it smaller)"
	else st="PASS"; fi
	result "$c" "$MODE" "$n" "$kb" "$recs" "$st"
done
log "-- packing"
pack traces "$T"
finish
