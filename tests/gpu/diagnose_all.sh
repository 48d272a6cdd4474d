#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/diagnose_all.sh: issue 5's proof on the H200. Runs every example
# of the suite (tests/gpu/cases.sh) under `gaptrace run -q -o DIR` (or by
# injection into a directory when `run` is missing), then
# `gaptrace report --json DIR`, and checks that the finding the example
# expects (its "expect_finding") ranks first - and, for the periodic ones,
# that the reported period matches the period the example measured - and
# that the healthy runs get no finding. The reading of the report's JSON is
# one marked ADAPTER block in tests/gpu/gtcheck.py.
#
#   tests/gpu/diagnose_all.sh              # all cases
#   tests/gpu/diagnose_all.sh tiny_ops     # some cases
# -> $OUT/diagnose_all.txt (table example -> expected -> got -> share) and
#    $OUT/diagnose_all.tar.gz (reports, example output, traces if < 15 MB).
# Takes ~3 minutes on the H200.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cases.sh"
gt_init diagnose_all
need_build
result_header "example" "expected" "got" "share" "period" "status"
HAVE_REPORT=0
have_cmd report && HAVE_REPORT=1
log "gaptrace report available: $HAVE_REPORT; gaptrace run available: $(have_cmd run && echo 1 || echo 0)"
D="$WORK/diagnose_all"
mkdir -p "$D"

# shellcheck disable=SC2048,SC2086
for c in ${*:-$DIAG_CASES}; do
	log "-- $c"
	if ! example_cmd "$c" full; then
		result "$c" "?" "-" "-" "-" "ERROR (no such case or not built)"
		continue
	fi
	record "$c" "$D/$c" "${CMD[@]}"
	cp "$WORK/$c.stdout" "$D/$c.stdout"
	cp "$WORK/$c.stderr" "$D/$c.stderr"
	log "  ($MODE) $(grep -m1 '^{' "$D/$c.stdout" | cut -c1-400)"
	if [ "$RC" -ne 0 ]; then
		result "$c" "?" "-" "-" "-" "ERROR (exit $RC)"
		continue
	fi
	if [ "$HAVE_REPORT" -eq 0 ]; then
		result "$c" "$($GTCHECK example-json "$D/$c.stdout" | $PYTHON -c 'import json,sys; print(json.load(sys.stdin).get("expect_finding"))' 2>/dev/null)" \
			"-" "-" "-" "SKIP (no gaptrace report)"
		continue
	fi
	run_logged "$c.report" "$GAPTRACE" report --json "$D/$c"
	cp "$WORK/$c.report.stdout" "$D/$c.report.json"
	run_logged "$c.text" "$GAPTRACE" report "$D/$c"
	cp "$WORK/$c.text.stdout" "$D/$c.report.txt"
	head -n 12 "$D/$c.report.txt" | sed 's/^/    report| /' | tee -a "$LOG"
	row=$($GTCHECK findings --report "$D/$c.report.json" --stdout "$D/$c.stdout" --name "$c")
	echo "$row" >>"$RES"
	log "  $(echo "$row" | tr '\t' ' ')"
done

log "-- packing"
if ! pack diagnose_all "$D"; then
	log "  without the traces:"
	find "$D" -name '*.gtrace' -delete
	pack diagnose_all "$D"
fi
finish
