#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/arm_probe.sh: run tests/gpu/arm_probe.cu (CUPTI alone, switched
# on and off mid-run: issue 22) in every mode, against each libcupti of the
# machine (the toolkit's, PyTorch's wheel's), ROUNDS times interleaved.
#   bash tests/gpu/arm_probe.sh            # -> $OUT/arm_probe.txt
# Variables: PROBE (binary; built with nvcc when missing: .gpu/bin/arm_probe),
# PHASE_MS (300), ROUNDS (2), MODES.
source "$(dirname "$0")/lib.sh"
gt_init arm_probe
PROBE=${PROBE:-.gpu/bin/arm_probe}
PHASE_MS=${PHASE_MS:-300}
ROUNDS=${ROUNDS:-2}
MODES=${MODES:-none cbid kind_minus kind primed start_cbid start_kind_minus}
if [ ! -x "$PROBE" ]; then
	mkdir -p "$(dirname "$PROBE")"
	run_logged probe_build "$NVCC" -arch=sm_90 -O2 -std=c++17 -o "$PROBE" tests/gpu/arm_probe.cu \
		-L"$CUDA_HOME/targets/x86_64-linux/lib" -lcupti -lcuda
fi
libs=()
for d in "$CUDA_HOME/targets/x86_64-linux/lib" "$CUDA_HOME/extras/CUPTI/lib64"; do
	[ -e "$d/libcupti.so.13" ] && libs+=("toolkit=$d") && break
done
tdir=$($PYTHON -c 'import glob, os, nvidia; print([os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(os.path.join(d, "**", "libcupti.so.13"), recursive=True)][0])' 2>/dev/null)
[ -n "$tdir" ] && libs+=("torch=$tdir")
log "libcupti copies: ${libs[*]}"
result_header "lib" "round" "mode" "phase" "state" "ns/call" "kernels" "queued" "memcpy" "rt_api" "rt_t2" "rt_t3" "drv_api" "drv_t2" "drv_t3" "markers" "other_api" "errors"
for r in $(seq "$ROUNDS"); do
	for l in "${libs[@]}"; do
		name=${l%%=*} dir=${l#*=}
		for m in $MODES; do
			run_logged "$name.$m.$r" env LD_LIBRARY_PATH="$dir" NVTX_INJECTION64_PATH="$dir/libcupti.so.13" \
				"$PROBE" "$m" "$PHASE_MS"
			grep '^#' "$WORK/$name.$m.$r.stdout" | sed 's/^/  /' | tee -a "$LOG"
			grep -v -e '^#' -e '^mode' "$WORK/$name.$m.$r.stdout" | while IFS= read -r line; do
				result "$name" "$r" "$line"
			done
		done
	done
done
$GTCHECK table "$RES" | tee -a "$LOG"
