#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/nccl_gpu.sh: issue 29's proof on one GPU: the injection library as
# NCCL's profiler plugin under a real NCCL (PyTorch's), `gaptrace run --nccl`.
# Cases (examples/torch/ddp_overlap.py, small sizes):
#   one_rank       --ranks 1: the plugin loads (its note in the trace), and no
#                  collective is recorded (NCCL with one rank copies instead of
#                  running a collective, and skips the profiler);
#   same_gpu       --ranks 2 --same-gpu (each rank its own NCCL_HOSTID, NCCL's
#                  socket transport on the loopback): every all-reduce recorded
#                  on both ranks, seq without gaps, alike on both ranks;
#   same_gpu_late  the same, rank 1 sleeping 30 ms before each step;
#   same_gpu_ddp   --mode overlap (DDP buckets) on one GPU.
# Each case runs untraced first; the traced results must equal them. The
# traced run has the torture suite's watchdog (timeout; cuda-gdb stacks on a
# hang, in the log).
#
#   OUT=... GAPTRACE=... INJECT=... bash tests/gpu/nccl_gpu.sh [CASES]
# -> $OUT/nccl_gpu.txt (log + table), $OUT/nccl_gpu.tar.gz (dumps, reports,
#    outputs). Takes ~2 min on an H100.
source "$(dirname "$0")/lib.sh"
gt_init nccl_gpu
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
need_build
STEP_TIMEOUT=${STEP_TIMEOUT:-150}
result_header "case" "traces" "plugin" "colls/trace" "seq gaps" "comms" "funcs" "output equal" "straggler" "status"
D="$WORK/nccl"
mkdir -p "$D"
T=examples/torch/ddp_overlap.py
SMALL=(--width 1024 --layers 4 --batch 1024 --classes 256 --steps 40 --warmup 3)
$PYTHON -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())' 2>&1 |
	sed 's/^/    version| /' | tee -a "$LOG"

# hang_stacks ID: while run ID's processes are alive past the step timeout,
# their stacks (cuda-gdb) go to the log. Started in the background.
hang_stacks()
{
	local id=$1 t=$2
	sleep "$t"
	for p in $(pgrep -f "ddp_overlap.py" || true); do
		log "  $id: still running after ${t}s: stacks of $p"
		timeout 60 cuda-gdb -p "$p" -batch -ex "thread apply all bt" 2>&1 | tail -n 80 |
			sed "s/^/    stack $p| /" >>"$LOG"
	done
}

# shellcheck disable=SC2048,SC2086
for c in ${*:-one_rank same_gpu same_gpu_late same_gpu_ddp}; do
	log "-- $c"
	case $c in
	one_rank) args=(--ranks 1 --mode exposed) want=0 strag=none ;;
	same_gpu) args=(--ranks 2 --same-gpu --mode exposed) want=40 strag=none ;;
	same_gpu_late) args=(--ranks 2 --same-gpu --mode exposed --straggler-rank 1 --delay-ms 30) want=40 strag=1 ;;
	same_gpu_ddp) args=(--ranks 2 --same-gpu --mode overlap --bucket-mb 4) want=40 strag=any ;;
	*)
		result "$c" "-" "-" "-" "-" "-" "-" "-" "-" "ERROR (no such case)"
		continue
		;;
	esac
	run_logged "$c.untraced" "$PYTHON" "$T" "${args[@]}" "${SMALL[@]}"
	cp "$WORK/$c.untraced.stdout" "$D/$c.untraced.stdout"
	cp "$WORK/$c.untraced.stderr" "$D/$c.untraced.stderr"
	rm -rf "${D:?}/$c"
	hang_stacks "$c" $((STEP_TIMEOUT - 15)) &
	hs=$!
	run_logged "$c" "$GAPTRACE" run --nccl -q -o "$D/$c" -- "$PYTHON" "$T" "${args[@]}" "${SMALL[@]}"
	kill "$hs" 2>/dev/null
	wait "$hs" 2>/dev/null
	trc=$RC
	cp "$WORK/$c.stdout" "$D/$c.stdout"
	cp "$WORK/$c.stderr" "$D/$c.stderr"
	grep -i "nccl" "$D/$c.stderr" | head -n 12 | sed 's/^/    stderr| /' | tee -a "$LOG"
	log "  untraced: $(grep -m1 '^{"example": "ddp_overlap"' "$D/$c.untraced.stdout" | cut -c1-400)"
	log "  traced:   $(grep -m1 '^{"example": "ddp_overlap"' "$D/$c.stdout" | cut -c1-400)"
	"$GAPTRACE" dump -t nccl_coll "$D/$c" >"$D/$c.colls.txt" 2>&1
	"$GAPTRACE" dump -t nccl_p2p "$D/$c" >"$D/$c.p2p.txt" 2>&1
	"$GAPTRACE" dump -t note "$D/$c" >"$D/$c.notes.txt" 2>&1
	"$GAPTRACE" dump -t loss "$D/$c" >"$D/$c.loss.txt" 2>&1
	grep -v '^nccl_coll' "$D/$c.colls.txt" | head -n 6 | sed 's/^/    dump| /' | tee -a "$LOG"
	grep -m3 '^nccl_coll' "$D/$c.colls.txt" | sed 's/^/    coll| /' | tee -a "$LOG"
	grep -i 'nccl' "$D/$c.notes.txt" | sed 's/^/    note| /' | tee -a "$LOG"
	grep '^loss' "$D/$c.loss.txt" | head -n 5 | sed 's/^/    loss| /' | tee -a "$LOG"
	run_logged "$c.report" "$GAPTRACE" report "$D/$c"
	cp "$WORK/$c.report.stdout" "$D/$c.report.txt"
	"$GAPTRACE" report --json "$D/$c" >"$D/$c.report.json" 2>/dev/null
	head -n 30 "$D/$c.report.txt" | sed 's/^/    report| /' | tee -a "$LOG"
	if [ "$trc" -ne 0 ]; then
		result "$c" "-" "-" "-" "-" "-" "-" "-" "-" "FAIL (traced exit $trc)"
		continue
	fi
	row=$($PYTHON tests/gpu/nccl_check.py --case "$c" --colls "$D/$c.colls.txt" \
		--notes "$D/$c.notes.txt" --untraced "$D/$c.untraced.stdout" \
		--traced "$D/$c.stdout" --expect-colls "$want" \
		--report-json "$D/$c.report.json" --straggler-rank "$strag")
	echo "$row" >>"$RES"
	log "  $(echo "$row" | tr '\t' ' ')"
done

log "-- packing"
if ! pack nccl_gpu "$D"; then
	find "$D" -name '*.gtrace' -delete
	pack nccl_gpu "$D"
fi
finish
