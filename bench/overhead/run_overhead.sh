#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/overhead/run_overhead.sh: gaptrace's overhead on the H200 (issue 3
# item 8), interleaved rounds, medians.
#
# Benches (each program times its own steady state, start-up and exit excluded):
#   tiny_kernels  examples/cuda/tiny_kernels.cu: N_LAUNCH (200000) empty
#                 kernels back to back -> us_per_launch
#   eager_mlp     examples/torch/eager_mlp.py: MLP_STEPS (400) eager training
#                 steps, median of 10-step blocks after warm-up -> ms_per_step
# Arms (a missing piece skips its arm and says so):
#   untraced        the program alone
#   floor           CUDA_INJECTION64_PATH=libcupti_floor.so: the same CUPTI
#                   kinds as gaptrace's default, buffers discarded unread
#   gt_file         CUDA_INJECTION64_PATH=libgaptrace_inject.so, GAPTRACE_OUTPUT
#   gt_run          gaptrace run -q -o DIR -- (collector, socket)
#   torch_profiler  eager_mlp only: --torch-profiler (cpu+cuda activities)
# Each of ROUNDS (5) rounds runs every arm once, in an order rotated by one
# each round, so drift of the machine hits all arms alike.
#
#   bench/overhead/run_overhead.sh          # ~4-5 minutes on the H200
# -> $OUT/overhead.txt (log + Markdown tables) and $OUT/overhead_raw.tsv.
# Variables: ROUNDS, N_LAUNCH, MLP_STEPS, BENCHES ("tiny_kernels eager_mlp"),
# and those of tests/gpu/lib.sh (FLOOR: a prebuilt floor library; CUPTI_LIB:
# the directory of libcupti.so to build it against).
source "$(dirname "$0")/../../tests/gpu/lib.sh"
gt_init overhead
need_build
ROUNDS=${ROUNDS:-5}
N_LAUNCH=${N_LAUNCH:-200000}
MLP_STEPS=${MLP_STEPS:-400}
BENCHES=${BENCHES:-tiny_kernels eager_mlp}
RAW="$WORK/overhead_raw.tsv"
printf 'bench\tarm\tround\tmetric\tvalue\tprocess_s\ttrace_bytes\trc\n' >"$RAW"
result_header "bench" "arm" "runs ok" "status"

floor_lib || log "  no floor library: the floor arm is skipped"

arms_for()
{
	local a=(untraced)
	[ -f "$FLOOR" ] && a+=(floor)
	[ -f "$INJECT" ] && a+=(gt_file)
	have_cmd run && a+=(gt_run)
	[ "$1" = eager_mlp ] && a+=(torch_profiler)
	echo "${a[@]}"
}

# arm_cmd BENCH ARM TRACEDIR: set CMD.
arm_cmd()
{
	local prog=()
	case $1 in
	tiny_kernels) prog=("$(ex_bin tiny_kernels)" --n "$N_LAUNCH" --warmup 2000) ;;
	eager_mlp) prog=("$PYTHON" examples/torch/eager_mlp.py --steps "$MLP_STEPS" --warmup 30 --block 10) ;;
	esac
	case $2 in
	untraced) CMD=("${prog[@]}") ;;
	floor) CMD=(env CUDA_INJECTION64_PATH="$(realpath "$FLOOR")" CUPTI_FLOOR_VERBOSE=1 "${prog[@]}") ;;
	gt_file) CMD=(env CUDA_INJECTION64_PATH="$(realpath "$INJECT")" GAPTRACE_OUTPUT="$3/%p.gtrace" "${prog[@]}") ;;
	gt_run) CMD=("$GAPTRACE" run -q -o "$3" -- "${prog[@]}") ;;
	torch_profiler) CMD=("${prog[@]}" --torch-profiler) ;;
	esac
}

for bench in $BENCHES; do
	case $bench in
	tiny_kernels) metric=us_per_launch ;;
	eager_mlp) metric=ms_per_step_median ;;
	*) log "unknown bench $bench"; continue ;;
	esac
	read -r -a arms <<<"$(arms_for "$bench")"
	log "-- $bench: arms ${arms[*]}, $ROUNDS rounds"
	for ((r = 0; r < ROUNDS; r++)); do
		n=${#arms[@]}
		for ((i = 0; i < n; i++)); do
			arm=${arms[$(((i + r) % n))]}
			d="$WORK/$bench.$arm.$r.d"
			rm -rf "$d"
			[ "$arm" = gt_file ] && mkdir -p "$d"
			arm_cmd "$bench" "$arm" "$d"
			id="$bench.$arm.$r"
			run_logged "$id" "${CMD[@]}"
			v=$($GTCHECK example-json "$WORK/$id.stdout" 2>/dev/null |
				$PYTHON -c "import json,sys; print(json.load(sys.stdin)['timing']['$metric'])" 2>/dev/null)
			bytes=$(du -sb "$d" 2>/dev/null | awk '{ print $1 }')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bench" "$arm" "$r" "$metric" \
				"${v:-nan}" "$SECS" "${bytes:-0}" "$RC" >>"$RAW"
			log "  $id: $metric=${v:-?} (process ${SECS}s, trace ${bytes:-0} B)"
			grep -h '^cupti_floor:' "$WORK/$id.stderr" 2>/dev/null | sed 's/^/    /' | tee -a "$LOG"
			rm -rf "$d"
		done
	done
	for arm in "${arms[@]}"; do
		ok=$(awk -F'\t' -v b="$bench" -v a="$arm" '$1 == b && $2 == a && $8 == 0 && $5 != "nan"' "$RAW" | wc -l)
		result "$bench" "$arm" "$ok/$ROUNDS" "$([ "$ok" -eq "$ROUNDS" ] && echo ok || echo FAIL)"
	done
done

cp "$RAW" "$OUT/overhead_raw.tsv"
{
	echo
	echo "== overhead tables ($(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1))"
	$PYTHON bench/overhead/summarize.py "$RAW"
} | tee -a "$LOG"
finish
