#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/gpm_cost.sh: issue 14's sampler cost and a look at the counters.
#  1. The cost of GPM sampling on a traced program: examples/torch/eager_mlp.py
#     (it times itself: median ms/step over 10-step blocks) under
#     `gaptrace run --gpm-hz 0` and `--gpm-hz 10` (the default), interleaved
#     for ROUNDS [4] rounds; one row per run, then the per-round ratios.
#  2. The counters themselves: `gaptrace dump -t gpm` of a run of membw.py
#     (bandwidth-bound) and gemm_power.py (tensor pipes), and the notes.
# -> $OUT/gpm_cost.txt. Takes ~3 minutes on the H200.
source "$(dirname "$0")/lib.sh"
gt_init gpm_cost
need_build
ROUNDS=${ROUNDS:-4}
result_header "round" "gpm_hz" "ms_per_step" "status"
D="$WORK/gpm_cost"
mkdir -p "$D"
for r in $(seq 1 "$ROUNDS"); do
	for hz in 0 10; do
		id="r${r}_hz$hz"
		rm -rf "$D/$id"
		run_logged "$id" "$GAPTRACE" run -q --gpm-hz "$hz" -o "$D/$id" -- \
			"$PYTHON" examples/torch/eager_mlp.py --steps 1500
		ms=$($PYTHON -c 'import json,sys
for l in open(sys.argv[1]):
    if l.startswith("{"): print(json.loads(l)["timing"].get("ms_per_step_median","?"))' \
			"$WORK/$id.stdout" 2>/dev/null | head -n 1)
		result "$r" "$hz" "${ms:-?}" "$([ "$RC" -eq 0 ] && echo ok || echo "ERROR (exit $RC)")"
	done
done
log "-- per-round ratio (hz 10 / hz 0)"
awk -F'\t' '$2 == 0 { b[$1] = $3 } $2 == 10 { s[$1] = $3 }
	END { for (r in b) if (b[r] > 0 && s[r] > 0) printf "  round %s: %.4f\n", r, s[r] / b[r] }' \
	"$RES" | sort | tee -a "$LOG"
for ex in membw gemm_power; do
	log "-- counters of $ex"
	record "$ex" "$D/$ex" "$PYTHON" "examples/torch/$ex.py" --seconds 3
	"$GAPTRACE" dump -t gpm "$D/$ex/nvml.gtrace" 2>&1 | head -n 40 | sed 's/^/  /' | tee -a "$LOG"
	"$GAPTRACE" dump -t note "$D/$ex/nvml.gtrace" 2>&1 | head -n 20 | sed 's/^/  /' | tee -a "$LOG"
	"$GAPTRACE" report "$D/$ex" 2>&1 | grep -E "Counters|over the window|memory_bound|compute" |
		sed 's/^/  report| /' | tee -a "$LOG"
done
pack gpm_cost "$D" || true
finish
