#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/stacks_check.sh: issue 15 on the H200 - host call stacks.
#  1. Call sites: the examples that say where their idle time comes from
#     ("expect_site" in their JSON line: item_metric's loss.item() line,
#     d2h_storm's forward hook, pageable_h2d's main()) run under
#     `gaptrace run --stacks`; the expected finding's first call site must be
#     that line (Python: file:line function, exact) or function (C: its
#     symbol). slow_loader runs too (its sites are printed, not checked).
#  2. The overhead: examples/torch/eager_mlp.py (median ms/step) and
#     hf_generate.py (its wall time) under `gaptrace run` with stacks off and
#     on, interleaved for ROUNDS [3] rounds; one row per run, then the
#     per-round ratios (the bar for stacks on by default: within 2 %).
#  3. The end notes of the stacks (what was taken, which CPython, libunwind).
# Native frames need libunwind.so.8 where the program runs: LIBUNWIND_DIR
# (a directory holding it, e.g. Debian's libunwind8 carried along) is put on
# LD_LIBRARY_PATH when set.
# -> $OUT/stacks_check.txt. Takes ~5 minutes on the H200.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cases.sh"
gt_init stacks_check
need_build
ROUNDS=${ROUNDS:-3}
D="$WORK/stacks_check"
mkdir -p "$D"
if [ -n "${LIBUNWIND_DIR:-}" ]; then
	export LD_LIBRARY_PATH="$LIBUNWIND_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
log "libunwind.so.8: $(ldconfig -p 2>/dev/null | grep -m1 'libunwind.so.8' || echo "not in ldconfig"; ls "${LIBUNWIND_DIR:-/nonexistent}"/libunwind.so.8 2>/dev/null)"
result_header "example" "expected site" "got" "status"

# 1. call sites
for c in item_metric d2h_storm pageable_h2d slow_loader; do
	log "-- $c"
	if ! example_cmd "$c" full; then
		result "$c" "?" "-" "ERROR (no such case or not built)"
		continue
	fi
	rm -rf "$D/$c"
	run_logged "$c" "$GAPTRACE" run -q --stacks -o "$D/$c" -- "${CMD[@]}"
	cp "$WORK/$c.stdout" "$D/$c.stdout"
	if [ "$RC" -ne 0 ]; then
		result "$c" "?" "-" "ERROR (exit $RC)"
		continue
	fi
	"$GAPTRACE" report --json "$D/$c" >"$D/$c.json" 2>>"$LOG"
	"$GAPTRACE" report "$D/$c" 2>&1 | sed -n '/== Call sites/,/^$/p' | sed 's/^/  /' | tee -a "$LOG"
	"$GAPTRACE" dump -t note "$D/$c" 2>&1 | grep -E "stacks:" | sed 's/^/  /' | tee -a "$LOG"
	line=$($GTCHECK sites --report "$D/$c.json" --stdout "$D/$c.stdout" --name "$c")
	IFS=$'\t' read -r n want got status <<<"$line"
	result "$c" "$want" "$got" "$status"
done

# 2. overhead, stacks off vs on, interleaved
run_mlp() { # id, extra gaptrace args...
	local id=$1
	shift
	rm -rf "$D/$id"
	run_logged "$id" "$GAPTRACE" run -q "$@" -o "$D/$id" -- \
		"$PYTHON" examples/torch/eager_mlp.py --steps 1500
	$PYTHON -c 'import json,sys
for l in open(sys.argv[1]):
    if l.startswith("{"): print(json.loads(l)["timing"].get("ms_per_step_median","?"))' \
		"$WORK/$id.stdout" 2>/dev/null | head -n 1
}
run_gen() {
	local id=$1
	shift
	rm -rf "$D/$id"
	local t0 t1
	t0=$(date +%s.%N)
	run_logged "$id" "$GAPTRACE" run -q "$@" -o "$D/$id" -- "$PYTHON" examples/torch/hf_generate.py
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
log "-- overhead (stacks off / on), $ROUNDS rounds"
for r in $(seq 1 "$ROUNDS"); do
	for mode in off on; do
		extra=()
		[ "$mode" = on ] && extra=(--stacks)
		ms=$(run_mlp "mlp_r${r}_$mode" "${extra[@]}")
		result "eager_mlp r$r" "$mode" "${ms:-?} ms/step" "$([ "$RC" -eq 0 ] && echo ok || echo "ERROR (exit $RC)")"
		s=$(run_gen "gen_r${r}_$mode" "${extra[@]}")
		result "hf_generate r$r" "$mode" "${s:-?} s" "$([ "$RC" -eq 0 ] && echo ok || echo "ERROR (exit $RC)")"
	done
done
log "-- per-round ratios (on / off)"
awk -F'\t' '$1 ~ /r[0-9]+$/ { split($3, v, " "); k = $1; if ($2 == "off") b[k] = v[1]; else s[k] = v[1] }
	END { for (k in b) if (b[k] > 0 && s[k] > 0) printf "  %s: %.4f\n", k, s[k] / b[k] }' \
	"$RES" | sort | tee -a "$LOG"
for id in mlp_r1_on gen_r1_on; do
	log "-- end note of $id"
	"$GAPTRACE" dump -t note "$D/$id" 2>&1 | grep -E "stacks:" | sed 's/^/  /' | tee -a "$LOG"
done
pack stacks_check "$D" 3 || true
finish
