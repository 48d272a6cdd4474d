#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/capture_parity.sh: issue 22's proof on the H200. For each
# real-framework program whose cause is known by construction, two runs:
#   full     `gaptrace run -q -o F -- CMD` (traced from start-up), then
#            `gaptrace report --json --from X --to X+W F`;
#   capture  the same CMD dormant (GAPTRACE_DORMANT=1, one `gaptrace
#            collector --dormant` on a private socket), `gaptrace capture
#            --pid P --duration W` once the program logged CAP_AFTER and
#            CAP_DELAY_MS passed, then `gaptrace report --json` of its trace.
# X is where the capture was armed, from the capture trace itself (ARMED
# note - the process's init note), so both reports cover the same stretch
# of the program. tests/gpu/parity_check.py compares them: the capture has
# API records, its unknown share is at most UNKNOWN_MAX (0.02), its first
# finding is the one the program expects and the full slice's first finding,
# and every cause share is within TOL (0.08 of the window) of the full
# slice's. With CAPTURES=2 the capture run is armed twice (a second window
# REARM_GAP_MS after the first): each window is checked the same way.
#
#   tests/gpu/capture_parity.sh [case...]      # default: all cases below
# -> $OUT/capture_parity.txt (table) and $OUT/capture_parity.tar.gz (reports,
#    program output, the capture traces).
# Variables: W_MS (4000), TOL (0.08), UNKNOWN_MAX (0.02), CAPTURES (1),
# RUN_S (program length in s, 14; not SECS: lib.sh sets that), STACKS (0: 1 adds --stacks / GAPTRACE_STACKS=1,
# and the first finding's first call site must be the same in both and the program's expect_site).
source "$(dirname "$0")/lib.sh"
gt_init capture_parity
need_build
W_MS=${W_MS:-4000}
TOL=${TOL:-0.08}
UNKNOWN_MAX=${UNKNOWN_MAX:-0.02}
CAPTURES=${CAPTURES:-1}
RUN_S=${RUN_S:-14}
STACKS=${STACKS:-0}
REARM_GAP_MS=${REARM_GAP_MS:-1500}
GAPTRACE=$(realpath -m "$GAPTRACE")
INJECT=$(realpath -m "$INJECT")
D="$WORK/parity"
mkdir -p "$D"
result_header "case" "window" "api" "unknown" "first (capture)" "first (full)" "max |d share|" "status"

ALL="decode_service starved_train host_step cupy_streams"
# case_cmd NAME: CMD, CAP_AFTER (stderr line after which the capture may
# start), CAP_DELAY_MS.
case_cmd()
{
	local t=examples/torch
	CAP_DELAY_MS=1500
	CENV=()
	case $1 in
	decode_service) CMD=("$PYTHON" "$t/decode_service.py" --seconds "$RUN_S") CAP_AFTER="first request done" ;;
	starved_train) CMD=("$PYTHON" "$t/starved_train.py" --seconds "$RUN_S") CAP_AFTER="first step done" ;;
	host_step) CMD=("$PYTHON" examples/jax/host_step.py --seconds "$RUN_S") CAP_AFTER="first step done"
		CENV=(XLA_PYTHON_CLIENT_PREALLOCATE=false) ;;
	cupy_streams) CMD=("$PYTHON" examples/cupy/cupy_streams.py --seconds "$RUN_S") CAP_AFTER="first step done" ;;
	hf_generate) CMD=("$PYTHON" "$t/hf_generate.py" --rounds 40 --new-tokens 48) CAP_AFTER="" CAP_DELAY_MS=6000 ;;
	*) return 1 ;;
	esac
}

# capture_run NAME DIR: the dormant run with CAPTURES captures; sets CAP_TRACE.
capture_run()
{
	local c=$1 d=$2 sock="$2/s/collector.sock" i
	mkdir -p "$d/col"
	mkdir -m 700 "$d/s" # the collector wants a private socket directory
	"$GAPTRACE" collector --dormant --dir "$d/col" --socket "$sock" >"$d/collector.log" 2>&1 &
	local cpid=$!
	for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	local senv=()
	[ "$STACKS" = 1 ] && senv=(GAPTRACE_STACKS=1)
	# env execs the program: $! is its pid (a timeout wrapper would fork it)
	env "${CENV[@]}" "${senv[@]}" GAPTRACE_DORMANT=1 CUDA_INJECTION64_PATH="$INJECT" GAPTRACE_SOCKET="$sock" \
		"${CMD[@]}" >"$d/stdout" 2>"$d/stderr" &
	local pid=$!
	(sleep $((RUN_S + 120)); kill -9 "$pid" 2>/dev/null) & # the watchdog
	local wd=$!
	until grep -q -e "$CAP_AFTER" "$d/stderr" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	sleep "$(awk -v m="$CAP_DELAY_MS" 'BEGIN { printf "%.3f", m / 1000 }')"
	for i in $(seq "$CAPTURES"); do
		[ "$i" -gt 1 ] && sleep "$(awk -v m="$REARM_GAP_MS" 'BEGIN { printf "%.3f", m / 1000 }')"
		timeout -k 5 60 "$GAPTRACE" capture --pid "$pid" --duration "${W_MS}ms" --socket "$sock" \
			>"$d/cap$i.stdout" 2>"$d/cap$i.stderr"
		log "  capture $i: exit $? $(tr '\n' ' ' <"$d/cap$i.stderr" | cut -c1-300)"
	done
	wait "$pid"
	log "  program exit $?; $(grep -m1 '^{' "$d/stdout" | cut -c1-300)"
	kill "$wd" 2>/dev/null
	kill "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	CAP_TRACE=$(head -n 1 "$d/cap1.stdout" 2>/dev/null)
	[ -n "$CAP_TRACE" ] && [ -f "$CAP_TRACE" ] || CAP_TRACE=$(ls "$d"/col/*.gtrace 2>/dev/null | head -1)
}

# shellcheck disable=SC2048,SC2086
for c in ${*:-$ALL}; do
	log "-- $c"
	if ! case_cmd "$c"; then
		result "$c" - - - - - - "ERROR (no such case)"
		continue
	fi
	cd_="$D/$c"
	rm -rf "$cd_"
	mkdir -p "$cd_/cap"
	capture_run "$c" "$cd_/cap"
	if [ -z "$CAP_TRACE" ]; then
		result "$c" - - - - - - "FAIL (no capture trace)"
		continue
	fi
	cp "$CAP_TRACE" "$cd_/capture.gtrace"
	sopt=()
	[ "$STACKS" = 1 ] && sopt=(--stacks)
	run_logged "$c.full" env "${CENV[@]}" "$GAPTRACE" run -q "${sopt[@]}" -o "$cd_/full" -- "${CMD[@]}"
	cp "$WORK/$c.full.stdout" "$cd_/full.stdout"
	"$GAPTRACE" report --json "$cd_/capture.gtrace" >"$cd_/capture_all.json" 2>"$cd_/capture_all.err"
	"$GAPTRACE" report --json "$cd_/full" >"$cd_/full_all.json" 2>"$cd_/full_all.err"
	"$GAPTRACE" report "$cd_/full" >"$cd_/full_all.txt" 2>&1
	for i in $(seq "$CAPTURES"); do
		# window i: absolute in the capture trace, from its origin in the full one
		win=$($PYTHON "$GT_ROOT/tests/gpu/parity_check.py" window --capture "$cd_/capture_all.json" \
			--full "$cd_/full_all.json" --index "$i")
		if [ -z "$win" ]; then
			result "$c" "#$i" - - - - - "FAIL (capture $i: no armed window in the trace)"
			continue
		fi
		read -r cf ct ff ft <<<"$win"
		log "  window $i: capture @$cf..@$ct, full +${ff}ns..+${ft}ns"
		run_logged "$c.cap$i" "$GAPTRACE" report --json --from "@$cf" --to "@$ct" "$cd_/capture.gtrace"
		cp "$WORK/$c.cap$i.stdout" "$cd_/capture$i.json"
		"$GAPTRACE" report --from "@$cf" --to "@$ct" "$cd_/capture.gtrace" >"$cd_/capture$i.txt" 2>&1
		head -n 14 "$cd_/capture$i.txt" | sed 's/^/    capture| /' | tee -a "$LOG"
		run_logged "$c.slice$i" "$GAPTRACE" report --json --from "${ff}ns" --to "${ft}ns" "$cd_/full"
		cp "$WORK/$c.slice$i.stdout" "$cd_/full_slice$i.json"
		"$GAPTRACE" report --from "${ff}ns" --to "${ft}ns" "$cd_/full" >"$cd_/full_slice$i.txt" 2>&1
		head -n 8 "$cd_/full_slice$i.txt" | sed 's/^/    full| /' | tee -a "$LOG"
		row=$($PYTHON "$GT_ROOT/tests/gpu/parity_check.py" compare --name "$c" --window "#$i" \
			--capture "$cd_/capture$i.json" --full "$cd_/full_slice$i.json" \
			--stdout "$cd_/cap/stdout" --tol "$TOL" --unknown-max "$UNKNOWN_MAX" "${sopt[@]/--stacks/--sites}")
		echo "$row" >>"$RES"
		log "  $(echo "$row" | tr '\t' ' ')"
	done
done
log "-- packing"
find "$D" -name '*.sock' -delete
if ! pack capture_parity "$D"; then
	find "$D" -path '*/full/*' -name '*.gtrace' -delete
	pack capture_parity "$D" || { find "$D" -name '*.gtrace' -delete; pack capture_parity "$D"; }
fi
finish
