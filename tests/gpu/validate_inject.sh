#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/validate_inject.sh: issue 3 item 7 on the H200.
#
# For each example with known counts (CUDA C exact_counts, driver_launch,
# tiny_kernels; PyTorch eager_mlp, d2h_storm, slow_loader with forked
# workers) it runs:
#   untraced   the program alone: reference stdout and exit status
#   disabled   injected with GAPTRACE_DISABLE=1: same output, no trace written
#   file       CUDA_INJECTION64_PATH + GAPTRACE_OUTPUT (no collector)
#   run        under `gaptrace run -q -o DIR` (when the CLI has `run`)
# and checks: same exit status, same example result (the JSON line minus
# timing), and the trace's record counts against the counts the example
# printed ("expect": exact, "expect_min": at least; every kernel's and copy's
# correlation id must match a recorded API call; no loss, no bad frame).
# Then coexistence: torch.profiler started inside an injected PyTorch
# process must not crash or change the results, and our trace must go on
# (the profiler's GPU view is reported; CUPTI has one subscriber slot).
#
#   tests/gpu/validate_inject.sh       # -> $OUT/validate_inject.txt (+ .tar.gz)
# Variables: see tests/gpu/lib.sh. Takes ~2-3 minutes on the H200.
source "$(dirname "$0")/lib.sh"
gt_init validate_inject
need_build
result_header "case" "mode" "exit" "output" "counts" "secs" "status"

if [ ! -f "$INJECT" ]; then
	log "no $INJECT: nothing to validate (build it: tests/gpu/build.sh)"
	result "all" "-" "-" "-" "-" "-" "FAIL (no $INJECT)"
	finish
	exit 1
fi
HAVE_RUN=0
have_cmd run && HAVE_RUN=1
log "gaptrace run available: $HAVE_RUN"

CMD=()
case_cmd()
{
	local b
	CMD=()
	case $1 in
	exact_counts) b=$(ex_bin exact_counts) && CMD=("$b") ;;
	exact_counts_big)
		b=$(ex_bin exact_counts) &&
			CMD=("$b" --kernels 500 --streams 8 --graph-replays 500 --thread-launches 2000) ;;
	driver_launch) b=$(ex_bin driver_launch) && CMD=("$b") ;;
	tiny_kernels) b=$(ex_bin tiny_kernels) && CMD=("$b" --n 200000) ;;
	eager_mlp) CMD=("$PYTHON" examples/torch/eager_mlp.py --steps 200) ;;
	d2h_storm) CMD=("$PYTHON" examples/torch/d2h_storm.py --steps 20) ;;
	slow_loader_fork) CMD=("$PYTHON" examples/torch/slow_loader.py --steps 40 --workers 4) ;;
	esac
	[ "${#CMD[@]}" -gt 0 ]
}

# check_mode CASE MODE BASE_RC TRACEDIR: compare a traced run with the base.
check_mode()
{
	local c=$1 mode=$2 base_rc=$3 dir=$4 id="$1.$2"
	local exit_s out_s counts_s status="PASS"
	if [ "$RC" -eq "$base_rc" ]; then exit_s="$RC"; else
		exit_s="$RC!=$base_rc"
		status="FAIL"
	fi
	if $GTCHECK same-output "$WORK/$c.untraced.stdout" "$WORK/$id.stdout" >"$WORK/$id.same" 2>&1; then
		out_s="same"
	else
		out_s="differs"
		status="FAIL"
		sed 's/^/    /' "$WORK/$id.same" | tee -a "$LOG"
	fi
	if [ "$mode" = disabled ]; then
		local n
		n=$(find "$dir" -name '*.gtrace' 2>/dev/null | wc -l)
		if [ "$n" -eq 0 ]; then counts_s="no trace (ok)"; else
			counts_s="$n trace(s) written"
			status="FAIL"
		fi
	else
		$GTCHECK counts "$dir" >"$WORK/$id.counts.json" 2>&1
		log "  $id counts vs expected:"
		if $GTCHECK check-counts --stdout "$WORK/$c.untraced.stdout" "$dir" >"$WORK/$id.check" 2>&1; then
			counts_s=$(tail -n 1 "$WORK/$id.check" | awk '{ print $1 }')
		else
			counts_s="$(tail -n 1 "$WORK/$id.check" | awk '{ print $1 }') MISMATCH"
			status="FAIL"
		fi
		sed 's/^/  /' "$WORK/$id.check" | tee -a "$LOG"
	fi
	[ "$RC" -eq 124 ] || [ "$RC" -eq 137 ] && status="TIMEOUT"
	result "$c" "$mode" "$exit_s" "$out_s" "$counts_s" "$SECS" "$status"
}

# VALIDATE_CASES picks cases (default: all of them; the coexistence check always runs).
for c in ${VALIDATE_CASES:-exact_counts exact_counts_big driver_launch tiny_kernels eager_mlp \
	d2h_storm slow_loader_fork}; do
	log "-- $c"
	if ! case_cmd "$c"; then
		result "$c" "-" "-" "-" "-" "-" "ERROR (not built)"
		continue
	fi
	run_logged "$c.untraced" "${CMD[@]}"
	base_rc=$RC
	if [ "$base_rc" -ne 0 ]; then
		result "$c" "untraced" "$RC" "-" "-" "$SECS" "FAIL (example itself fails)"
		continue
	fi
	result "$c" "untraced" "$RC" "reference" "-" "$SECS" "ok"

	d="$WORK/$c.disabled.d"
	rm -rf "$d" && mkdir -p "$d"
	# shellcheck disable=SC2046
	run_logged "$c.disabled" env GAPTRACE_DISABLE=1 $(trace_env "$d") "${CMD[@]}"
	check_mode "$c" disabled "$base_rc" "$d"

	d="$WORK/$c.file.d"
	rm -rf "$d" && mkdir -p "$d"
	# shellcheck disable=SC2046
	run_logged "$c.file" env $(trace_env "$d") "${CMD[@]}"
	check_mode "$c" file "$base_rc" "$d"

	if [ "$HAVE_RUN" -eq 1 ]; then
		d="$WORK/$c.run.d"
		rm -rf "$d"
		run_logged "$c.run" "$GAPTRACE" run -q -o "$d" -- "${CMD[@]}"
		check_mode "$c" run "$base_rc" "$d"
	else
		result "$c" "run" "-" "-" "-" "-" "SKIP (no gaptrace run)"
	fi
done

log "-- coexistence: torch.profiler inside an injected process"
CMD=("$PYTHON" examples/torch/eager_mlp.py --steps 100 --torch-profiler)
run_logged coexist.untraced "${CMD[@]}"
base_rc=$RC
d="$WORK/coexist.file.d"
rm -rf "$d" && mkdir -p "$d"
# shellcheck disable=SC2046
run_logged coexist.file env $(trace_env "$d") "${CMD[@]}"
if [ "$RC" -eq 0 ] && [ "$base_rc" -eq 0 ]; then st="PASS"; else st="FAIL"; fi
same="differs"
$GTCHECK same-output "$WORK/coexist.untraced.stdout" "$WORK/coexist.file.stdout" >/dev/null 2>&1 && same="same"
[ "$same" = same ] || st="FAIL"
result "coexist" "torch.profiler" "$RC (base $base_rc)" "$same" "-" "$SECS" "$st"
log "  profiler view (untraced): $(grep -o '"profiler": {[^}]*}' "$WORK/coexist.untraced.stdout")"
log "  profiler view (injected): $(grep -o '"profiler": {[^}]*}' "$WORK/coexist.file.stdout")"
grep -i -E 'gaptrace|cupti|unknown buffer' "$WORK/coexist.file.stderr" | head -5 | sed 's/^/    stderr| /' | tee -a "$LOG"
$GTCHECK notes "$d" >"$WORK/coexist.notes" 2>&1
sed 's/^/    /' "$WORK/coexist.notes" | tee -a "$LOG"
$GTCHECK counts "$d" >"$WORK/coexist.counts.json" 2>&1
log "  trace counts: $(cut -c1-300 "$WORK/coexist.counts.json")"
# CUPTI has one subscriber slot and gaptrace keeps it (GAPTRACE_HOLD_CUPTI=1,
# the default): our trace must go on complete; the profiler's own view is
# reported (it loses the GPU: Kineto cannot subscribe and says so).
gpu_ev() { grep -o '"profiler": {"gpu_events": [0-9]*' "$1" | grep -o '[0-9]*$'; }
ev_base=$(gpu_ev "$WORK/coexist.untraced.stdout"); ev_inj=$(gpu_ev "$WORK/coexist.file.stdout")
result "coexist" "profiler GPU events" "-" "-" "${ev_inj:-none} (base ${ev_base:-?})" "-" "INFO"
nk=$(grep -o '"kernel": [0-9]*' "$WORK/coexist.counts.json" | grep -o '[0-9]*$')
if [ "${nk:-0}" -gt 0 ]; then
	result "coexist" "gaptrace trace" "-" "-" "${nk} kernels" "-" "PASS"
else
	result "coexist" "gaptrace trace" "-" "-" "no kernels" "-" "FAIL (gaptrace lost the records)"
fi
grep -q '^note code=2 ' "$WORK/coexist.notes" && result "coexist" "CUPTI-taken note" "-" "-" "present" "-" "INFO"

log "-- packing stdout/stderr/counts (no traces: see record_traces.sh)"
mkdir -p "$WORK/validate_inject"
cp "$WORK"/*.stdout "$WORK"/*.stderr "$WORK"/*.json "$WORK"/*.check "$WORK"/*.notes \
	"$WORK/validate_inject/" 2>/dev/null
pack validate_inject "$WORK/validate_inject"
finish
