#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/truth_suite.sh: issue 23 on the H200 - the right cause on real
# framework programs whose cause is known by construction (each prints its
# expect_finding, and expect_site for the host-stack runs), traced from
# start-up the way a new user would: `gaptrace run -q [--stacks] -o DIR --`.
# For every case: the first finding against the expected one (gtcheck.py
# findings), with --stacks the finding's first call site (gtcheck.py sites)
# and the call-site lines of its evidence (how much of the finding's idle
# time the sites explain), and the report's start-up line.
#
#   bash tests/gpu/truth_suite.sh                 # every case
#   bash tests/gpu/truth_suite.sh starved_train   # some
# -> $OUT/truth_suite.txt and $OUT/truth_suite.tar.gz (reports; the traces
#    of the cases in KEEP, for examples/traces/).
# Variables: RUN_S (seconds per program, 8; not SECS: lib.sh's run_logged sets that), KEEP (cases whose traces are
# packed: "starved_train lightning_fit host_step host_step_stacks cupy_streams
# upload_request_stacks decode_service_stacks compile_ro").
# A case whose program exits 3 (a package missing: lightning) is SKIP.
source "$(dirname "$0")/lib.sh"
gt_init truth_suite
need_build
RUN_S=${RUN_S:-8}
KEEP=${KEEP:-starved_train lightning_fit host_step host_step_stacks cupy_streams upload_request_stacks decode_service_stacks compile_ro}
D="$WORK/truth_suite"
mkdir -p "$D"
T=examples/torch
ALL="starved_train lightning_fit host_step host_step_stacks cupy_streams decode_service_stacks
upload_request_stacks item_metric_stacks item_metric_stacks1000 hf_generate compile_ro healthy_matmul
compile_upload_stacks compile_healthy flax_input flax_input_warm"

# case_cmd NAME: set CMD (the program), STACKS (0/1), ENVS (env assignments)
# and WARM (1: run the program once untraced first, with ENVS: torch.compile fills
# Inductor's and Triton's caches, JAX its persistent cache, so the traced run loads the compiled code
# as a user's second run does).
case_cmd()
{
	STACKS=0
	WARM=0
	ENVS=()
	case $1 in
	starved_train) CMD=("$PYTHON" "$T/starved_train.py" --seconds "$RUN_S") ;;
	lightning_fit) CMD=("$PYTHON" "$T/lightning_fit.py" --seconds "$RUN_S") ;;
	host_step) CMD=("$PYTHON" examples/jax/host_step.py --seconds "$RUN_S") ;;
	host_step_stacks) CMD=("$PYTHON" examples/jax/host_step.py --seconds "$RUN_S") STACKS=1 ;;
	cupy_streams) CMD=("$PYTHON" examples/cupy/cupy_streams.py --seconds "$RUN_S") ;;
	decode_service_stacks) CMD=("$PYTHON" "$T/decode_service.py" --seconds "$RUN_S") STACKS=1 ;;
	upload_request_stacks) CMD=("$PYTHON" "$T/upload_request.py" --seconds "$RUN_S") STACKS=1 ;;
	item_metric_stacks) CMD=("$PYTHON" "$T/item_metric.py") STACKS=1 ;;
	item_metric_stacks1000)
		CMD=("$PYTHON" "$T/item_metric.py") STACKS=1 ENVS=(GAPTRACE_STACK_MAX_PER_S=1000)
		;;
	hf_generate) CMD=("$PYTHON" "$T/hf_generate.py") ;;
	compile_ro) CMD=("$PYTHON" "$T/compile_step.py" --mode reduce-overhead) ;;
	healthy_matmul) CMD=("$PYTHON" "$T/healthy_matmul.py") ;;
	compile_upload_stacks) CMD=("$PYTHON" "$T/compile_upload.py" --seconds "$RUN_S") STACKS=1 WARM=1 ;;
	compile_healthy) CMD=("$PYTHON" "$T/compile_healthy.py" --seconds "$RUN_S") WARM=1 ;;
	flax_input) CMD=("$PYTHON" examples/flax/flax_input.py --seconds "$RUN_S")
		ENVS=(XLA_PYTHON_CLIENT_PREALLOCATE=false) ;; # cold: no persistent cache
	flax_input_warm) # JAX's persistent compilation cache, filled by the warm-up run
		CMD=("$PYTHON" examples/flax/flax_input.py --seconds "$RUN_S") WARM=1
		rm -rf "$WORK/jax_cache"
		ENVS=(XLA_PYTHON_CLIENT_PREALLOCATE=false JAX_COMPILATION_CACHE_DIR="$WORK/jax_cache"
			JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0) ;;
	*) return 1 ;;
	esac
}

result_header "case" "expected" "got" "share" "period" "status" "site" "site status"
# shellcheck disable=SC2048,SC2086
for c in ${*:-$ALL}; do
	log "-- $c"
	if ! case_cmd "$c"; then
		result "$c" "?" "-" "-" "-" "ERROR (no such case)" "-" "-"
		continue
	fi
	opt=()
	[ "$STACKS" -eq 1 ] && opt=(--stacks)
	rm -rf "${D:?}/$c"
	if [ "$WARM" -eq 1 ]; then
		run_logged "$c.warm" env "${ENVS[@]}" "${CMD[@]}" --seconds 2 # untraced: fills the caches
	fi
	run_logged "$c" env "${ENVS[@]}" "$GAPTRACE" run -q "${opt[@]}" -o "$D/$c" -- "${CMD[@]}"
	cp "$WORK/$c.stdout" "$D/$c.stdout"
	cp "$WORK/$c.stderr" "$D/$c.stderr"
	if [ "$RC" -eq 3 ]; then
		result "$c" "-" "-" "-" "-" "SKIP ($(tail -n 1 "$WORK/$c.stderr" | cut -c1-80))" "-" "-"
		continue
	fi
	if [ "$RC" -ne 0 ]; then
		result "$c" "?" "-" "-" "-" "ERROR (exit $RC)" "-" "-"
		continue
	fi
	log "  $(grep -m1 '^{' "$D/$c.stdout" | cut -c1-300)"
	run_logged "$c.json" "$GAPTRACE" report --json "$D/$c"
	cp "$WORK/$c.json.stdout" "$D/$c.report.json"
	run_logged "$c.text" "$GAPTRACE" report "$D/$c"
	cp "$WORK/$c.text.stdout" "$D/$c.report.txt"
	head -n 8 "$D/$c.report.txt" | sed 's/^/    report| /' | tee -a "$LOG"
	grep -E 'is start-up, set aside|call site: ' "$D/$c.report.txt" | cut -c1-260 | sed 's/^/    /' | tee -a "$LOG"
	row=$($GTCHECK findings --report "$D/$c.report.json" --stdout "$D/$c.stdout" --name "$c")
	site="-	-"
	if [ "$STACKS" -eq 1 ]; then
		s=$($GTCHECK sites --report "$D/$c.report.json" --stdout "$D/$c.stdout" --name "$c")
		site=$(echo "$s" | cut -f3-4)
	fi
	echo "$row	$site" >>"$RES"
	log "  $(echo "$row	$site" | tr '\t' ' ')"
done

log "-- packing (reports; traces of: $KEEP)"
P="$WORK/pack"
rm -rf "$P"
mkdir -p "$P"
cp "$D"/*.report.* "$D"/*.stdout "$P"/ 2>/dev/null
for k in $KEEP; do
	[ -d "$D/$k" ] && cp -r "$D/$k" "$P/$k"
done
tar czf "$OUT/truth_suite.tar.gz" -C "$P" . && log "  $(du -h "$OUT/truth_suite.tar.gz" | cut -f1)"
$GTCHECK table "$RES" | tee -a "$LOG"
