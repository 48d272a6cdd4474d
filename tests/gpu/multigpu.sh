#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/multigpu.sh: issue 7's proof on a machine with 2 GPUs (or more).
# Runs examples/torch/ddp_overlap.py (2 ranks, DDP / NCCL) under
# `gaptrace run -q -o DIR` in three cases, then `gaptrace report --json DIR`,
# and checks the findings with tests/gpu/multigpu_check.py:
#   exposed    one all-reduce after the backward: comm_not_overlapped first,
#              exposed_share >= 0.8
#   overlap    DDP buckets during the backward: comm_not_overlapped not first,
#              less than half of each GPU's communication exposed
#   straggler  overlap + rank 1 sleeping 30 ms before each step: a straggler
#              finding names rank 1 (and its pid)
# NVLink multicast stays off (the example sets NCCL_NVLS_ENABLE=0,
# TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1; so does this
# script). Sizes: DDP_ARGS adds options to every case (e.g. DDP_ARGS="--batch
# 8192" when the GPUs are linked by PCIe only and the all-reduce is slower
# than the backward).
#
#   bash tests/gpu/multigpu.sh                 # the three cases
#   bash tests/gpu/multigpu.sh exposed         # some of them
# -> $OUT/multigpu.txt (table case -> expected -> got -> comm exposed per GPU
#    -> straggler named -> status) and $OUT/multigpu.tar.gz (reports, example
#    output, traces if < 15 MB). Takes ~1.5 min on 2 H200s.
source "$(dirname "$0")/lib.sh"
gt_init multigpu
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
need_build
result_header "case" "expected" "got" "comm exposed" "straggler named" "status"
D="$WORK/multigpu"
mkdir -p "$D"

NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
log "GPUs: $NGPU"
nvidia-smi topo -m 2>&1 | sed 's/^/    topo| /' | tee -a "$LOG"
if [ "${NGPU:-0}" -lt 2 ]; then
	result "all" "2 GPUs" "$NGPU GPU(s)" "-" "-" "SKIP (needs 2 GPUs)"
	finish
	exit $?
fi
if ! have_cmd report; then
	result "all" "-" "-" "-" "-" "ERROR (no gaptrace report in $GAPTRACE)"
	finish
	exit $?
fi

T=examples/torch/ddp_overlap.py
# shellcheck disable=SC2048,SC2086
for c in ${*:-exposed overlap straggler}; do
	log "-- $c"
	case $c in
	exposed) args=(--mode exposed) ;;
	overlap) args=(--mode overlap) ;;
	straggler) args=(--mode overlap --straggler-rank 1 --delay-ms 30) ;;
	*)
		result "$c" "?" "-" "-" "-" "ERROR (no such case)"
		continue
		;;
	esac
	# shellcheck disable=SC2206
	record "$c" "$D/$c" "$PYTHON" "$T" "${args[@]}" ${DDP_ARGS:-}
	cp "$WORK/$c.stdout" "$D/$c.stdout"
	cp "$WORK/$c.stderr" "$D/$c.stderr"
	log "  ($MODE) $(grep -m1 '^{"example": "ddp_overlap"' "$D/$c.stdout" | cut -c1-600)"
	if [ "$RC" -ne 0 ]; then
		result "$c" "?" "-" "-" "-" "ERROR (exit $RC)"
		continue
	fi
	find "$D/$c" -name '*.gtrace' -printf '%f %s bytes\n' | sed 's/^/    trace| /' | tee -a "$LOG"
	run_logged "$c.report" "$GAPTRACE" report --json "$D/$c"
	cp "$WORK/$c.report.stdout" "$D/$c.report.json"
	run_logged "$c.text" "$GAPTRACE" report "$D/$c"
	cp "$WORK/$c.text.stdout" "$D/$c.report.txt"
	head -n 16 "$D/$c.report.txt" | sed 's/^/    report| /' | tee -a "$LOG"
	grep -A8 '^== Ranks' "$D/$c.report.txt" | sed 's/^/    report| /' | tee -a "$LOG"
	row=$($PYTHON tests/gpu/multigpu_check.py --case "$c" --report "$D/$c.report.json" \
		--stdout "$D/$c.stdout" --name "$c")
	echo "$row" >>"$RES"
	log "  $(echo "$row" | tr '\t' ' ')"
done

log "-- packing"
if ! pack multigpu "$D"; then
	log "  without the traces:"
	find "$D" -name '*.gtrace' -delete
	pack multigpu "$D"
fi
finish
