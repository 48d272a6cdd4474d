#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/realworld/run_realworld.sh: gaptrace's overhead on real workloads
# (issue 10 item 6): interleaved rounds, per-round ratios, medians, within a
# fixed time budget on the GPU machine.
#
# Benches (each program times its own steady state; start-up, model build,
# warm-up and exit are not in the metric):
#   hf_generate  examples/torch/hf_generate.py: transformers generate(), GPT-2
#                size, greedy, batch 1 -> tokens_per_s_median (higher = better)
#   resnet_step  examples/torch/resnet_step.py: torchvision ResNet-18 training
#                step, batch 32 of 64x64 -> ms_per_step_median
# Arms (a missing piece skips its arm and says so):
#   untraced        the program alone
#   floor           CUDA_INJECTION64_PATH=libcupti_floor.so (bench/overhead):
#                   gaptrace's CUPTI kinds, buffers discarded unread
#   gt_file         the injection library writing a trace file, no collector
#   gt_run          gaptrace run -q (collector; NVML at its default rates)
#   gt_run_nvml0    gaptrace run -q --nvml-hz 0 (collector, no NVML)
#   gt_run_100hz    gaptrace run -q --nvml-hz 100 --nvml-proc-hz 10 (NVML near
#                   the 100 Hz default it had before issue 10)
#   gt_run_stacks   gaptrace run -q --stacks (host call stacks, issue 15)
#   gt_dormant      the injection library with GAPTRACE_DORMANT=1 and no
#                   collector: it stays dormant (captures nothing)
#   torch_profiler  --torch-profiler: torch.profiler, CPU + CUDA activities
# Each of ROUNDS (5) rounds runs every arm of every bench once, the order
# rotated by one each round. One untraced warm-up run per bench comes first
# (not counted).
#
# Launching (LAUNCH): a fresh PyTorch process spends most of its 8-12 s on the
# H200 machine starting (imports above all), more than the workload; 80 fresh
# processes do not fit in minutes. LAUNCH=zygote (default) imports them once in a fork server
# (zygote.py) that never touches the GPU driver and forks one worker per run
# with the run's environment, so CUDA (and CUPTI, and gaptrace) start in the
# worker as in a fresh process. A smoke run checks that the worker's
# CUDA_INJECTION64_PATH is honoured; if the server is unsafe (an import opened
# /dev/nvidia*) or the smoke run fails, the bench falls back to LAUNCH=exec
# (plain `python SCRIPT`), and the time budget decides how many rounds run.
#
# Time: TIME_BUDGET (400 s) counts from the start; before each run the bench
# checks that the run (its longest duration so far, else a guess) and RESERVE
# (20 s) still fit, else it stops there and says so. After round 0 it prints
# what the planned rounds will take, and drops OPTIONAL_ARMS (gt_run_100hz)
# when they would not fit.
#
#   bench/realworld/run_realworld.sh       # ~6-7 minutes on the H200
#   GAPTRACE=.gpu/rb/tools/gaptrace INJECT=.gpu/rb/inject/libgaptrace_inject.so \
#     bench/realworld/run_realworld.sh     # prebuilt gaptrace (floor: built here)
# -> $OUT/realworld.txt (log, tables last) and $OUT/realworld_raw.tsv.
# Variables: ROUNDS, TIME_BUDGET, RESERVE, BENCHES, ARMS, OPTIONAL_ARMS,
# LAUNCH, HF_ROUNDS (6), HF_TOKENS (32), RN_STEPS (120), RN_WARMUP (20),
# RN_BLOCK (10), NVML_COST (a prebuilt bench/realworld/nvml_cost),
# HF_SCRIPT, RN_SCRIPT, SMOKE_SCRIPT, ZYGOTE_PRELOAD (for tests), and those of
# tests/gpu/lib.sh (GAPTRACE, INJECT, FLOOR, PYTHON, BUILD, CUDA_HOME).
source "$(dirname "$0")/../../tests/gpu/lib.sh"
T0=$SECONDS
gt_init realworld
ROUNDS=${ROUNDS:-5}
TIME_BUDGET=${TIME_BUDGET:-400}
RESERVE=${RESERVE:-20}
BENCHES=${BENCHES:-hf_generate resnet_step}
ARMS=${ARMS:-untraced floor gt_file gt_run gt_run_nvml0 gt_run_100hz gt_dormant torch_profiler}
OPTIONAL_ARMS=${OPTIONAL_ARMS:-gt_run_100hz}
LAUNCH=${LAUNCH:-zygote}
HF_ROUNDS=${HF_ROUNDS:-6}
HF_TOKENS=${HF_TOKENS:-32}
RN_STEPS=${RN_STEPS:-120}
RN_WARMUP=${RN_WARMUP:-20}
RN_BLOCK=${RN_BLOCK:-10}
# The programs (overridable to test this script without a GPU: fakes that
# print the examples' JSON line).
HF_SCRIPT=${HF_SCRIPT:-examples/torch/hf_generate.py}
RN_SCRIPT=${RN_SCRIPT:-examples/torch/resnet_step.py}
SMOKE_SCRIPT=${SMOKE_SCRIPT:-bench/realworld/zygote_smoke.py}
ZYGOTE_PRELOAD=${ZYGOTE_PRELOAD:-torch torchvision transformers:GPT2Config,GPT2LMHeadModel gt_common}
RAW="$WORK/realworld_raw.tsv"
NOSOCK="$WORK/no-collector.sock" # never listened on: file and dormant arms stay alone
ZSOCK="$WORK/zygote.sock"
ZPID=""
CLEAN=(env -u CUDA_INJECTION64_PATH -u GAPTRACE_SOCKET -u GAPTRACE_OUTPUT -u GAPTRACE_DORMANT -u GAPTRACE_STACKS
	-u GAPTRACE_KINDS -u GAPTRACE_SESSION -u GAPTRACE_INJECT_PATH)
declare -A DUR     # bench.arm -> longest run so far (s)
declare -A ARMS_OF # bench -> its arms
printf 'bench\tarm\tround\tmetric\tvalue\tprocess_s\ttrace_bytes\trc\n' >"$RAW"
result_header "bench" "arm" "runs ok" "status"
elapsed() { echo $((SECONDS - T0)); }

stop_zygote()
{
	if [ -n "$ZPID" ]; then
		kill "$ZPID" 2>/dev/null
		wait "$ZPID" 2>/dev/null
		ZPID=""
	fi
}
trap stop_zygote EXIT

log "-- machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1); $(nproc) CPUs"

# ------------------------------------------------------------ pieces
need_build
floor_lib || log "  no floor library: the floor arm is skipped"
FLOOR_ABS=$( [ -f "${FLOOR:-}" ] && realpath "$FLOOR" || echo "")
INJECT_ABS=$( [ -f "$INJECT" ] && realpath "$INJECT" || echo "")
NVML100=(--nvml-hz 100 --nvml-proc-hz 10)
if have_cmd run && ! "$GAPTRACE" run --help 2>&1 | grep -q -- --nvml-proc-hz; then
	NVML100=(--nvml-hz 100) # a gaptrace from before issue 10: 100 Hz was its default
	log "  $GAPTRACE has no --nvml-proc-hz (before issue 10): gt_run is its 100 Hz default"
fi
if [ -z "${NVML_COST:-}" ] || [ ! -x "$NVML_COST" ]; then
	NVML_COST="$WORK/nvml_cost"
	run_logged nvml_cost_build cc -std=c11 -D_GNU_SOURCE -O2 -o "$NVML_COST" bench/realworld/nvml_cost.c -ldl
fi

for bench in $BENCHES; do
	a=()
	for arm in $ARMS; do
		case $arm in
		untraced | torch_profiler) ;;
		floor) [ -n "$FLOOR_ABS" ] || { log "  $bench: no floor library, arm floor skipped"; continue; } ;;
		gt_file | gt_dormant) [ -n "$INJECT_ABS" ] || { log "  $bench: no $INJECT, arm $arm skipped"; continue; } ;;
		gt_run*)
			if [ -z "$INJECT_ABS" ] || ! have_cmd run; then
				log "  $bench: no \`gaptrace run\` or no $INJECT, arm $arm skipped"
				continue
			fi
			;;
		*) log "  unknown arm $arm"; continue ;;
		esac
		a+=("$arm")
	done
	case $bench in
	hf_generate | resnet_step) ARMS_OF[$bench]="${a[*]}" ;;
	*) log "unknown bench $bench: skipped" ;;
	esac
done
BENCHES=$(for b in $BENCHES; do [ -n "${ARMS_OF[$b]:-}" ] && echo "$b"; done | xargs)

# ------------------------------------------------------------ launching
start_zygote()
{
	local preload=$ZYGOTE_PRELOAD attempt
	for attempt in 1 2; do
		log "-- zygote: importing $preload once"
		local pre=() m
		for m in $preload; do
			pre+=(--preload "$m")
		done
		"${CLEAN[@]}" "$PYTHON" bench/realworld/zygote.py serve "$ZSOCK" --path examples/torch \
			"${pre[@]}" >"$WORK/zygote.log" 2>&1 &
		ZPID=$!
		local i
		for ((i = 0; i < 600; i++)); do # 2 minutes at most
			grep -q '^zygote: ready' "$WORK/zygote.log" && break
			if grep -q '^zygote: unsafe' "$WORK/zygote.log" || ! kill -0 "$ZPID" 2>/dev/null; then
				break
			fi
			sleep 0.2
		done
		grep -v '^ *$' "$WORK/zygote.log" | tail -n 12 | sed 's/^/    /' | tee -a "$LOG"
		grep -q '^zygote: ready' "$WORK/zygote.log" && break
		stop_zygote
		# An import that touched the driver: once more without it and what
		# follows it (the runs import those themselves).
		local bad
		bad=$(sed -n 's/^zygote: unsafe: importing \([^ ]*\) opened.*/\1/p' "$WORK/zygote.log")
		if [ -z "$bad" ] || [ "$attempt" != 1 ]; then
			log "  zygote not ready after $(elapsed) s"
			return 1
		fi
		preload=$(echo "$preload" | awk -v bad="$bad" '{ for (i = 1; i <= NF && $i != bad; i++) printf "%s ", $i }')
		[ -n "${preload// /}" ] || { log "  zygote: even $bad is unsafe"; return 1; }
	done
	# Does a forked worker honour its CUDA_INJECTION64_PATH?
	local smoke=(bench/realworld/zygote.py run "$ZSOCK" -- "$SMOKE_SCRIPT")
	STEP_TIMEOUT=60
	if [ -n "$FLOOR_ABS" ]; then
		run_logged zygote_smoke "${CLEAN[@]}" CUDA_INJECTION64_PATH="$FLOOR_ABS" CUPTI_FLOOR_VERBOSE=1 \
			"$PYTHON" "${smoke[@]}"
		[ "$RC" -eq 0 ] && ! grep -q '^cupti_floor:' "$WORK/zygote_smoke.stderr" && RC=99
	else
		mkdir -p "$WORK/smoke.d"
		run_logged zygote_smoke "${CLEAN[@]}" CUDA_INJECTION64_PATH="$INJECT_ABS" \
			GAPTRACE_OUTPUT="$WORK/smoke.d/%p.gtrace" GAPTRACE_SOCKET="$NOSOCK" "$PYTHON" "${smoke[@]}"
		[ "$RC" -eq 0 ] && ! ls "$WORK"/smoke.d/*.gtrace >/dev/null 2>&1 && RC=99
	fi
	head -c 400 "$WORK/zygote_smoke.stdout" | sed 's/^/    out| /' | tee -a "$LOG"
	if [ "$RC" -ne 0 ]; then
		log "  zygote smoke run failed (rc $RC; 99: the worker ran but did not load the injection library)"
		return 1
	fi
	log "  zygote ready after $(elapsed) s; workers honour CUDA_INJECTION64_PATH"
}

if [ "$LAUNCH" = zygote ] && ! start_zygote; then
	stop_zygote
	log "  falling back to LAUNCH=exec (one fresh python per run)"
	LAUNCH="exec"
fi
if [ "$LAUNCH" = zygote ]; then
	GUESS_HF=5 GUESS_RN=4
else
	GUESS_HF=20 GUESS_RN=14
fi

# prog_of BENCH: set PROG (the bench's command line under LAUNCH) and METRIC.
prog_of()
{
	local script args
	case $1 in
	hf_generate)
		script=$HF_SCRIPT
		args=(--rounds "$HF_ROUNDS" --new-tokens "$HF_TOKENS")
		METRIC=tokens_per_s_median
		;;
	resnet_step)
		script=$RN_SCRIPT
		args=(--steps "$RN_STEPS" --warmup "$RN_WARMUP" --block "$RN_BLOCK")
		METRIC=ms_per_step_median
		;;
	esac
	if [ "$LAUNCH" = zygote ]; then
		PROG=("$PYTHON" bench/realworld/zygote.py run "$ZSOCK" -- "$script" "${args[@]}")
	else
		PROG=("$PYTHON" "$script" "${args[@]}")
	fi
}

# arm_cmd BENCH ARM TRACEDIR: set CMD.
arm_cmd()
{
	prog_of "$1"
	case $2 in
	untraced) CMD=("${CLEAN[@]}" "${PROG[@]}") ;;
	floor) CMD=("${CLEAN[@]}" CUDA_INJECTION64_PATH="$FLOOR_ABS" CUPTI_FLOOR_VERBOSE=1 "${PROG[@]}") ;;
	gt_file)
		CMD=("${CLEAN[@]}" CUDA_INJECTION64_PATH="$INJECT_ABS" GAPTRACE_OUTPUT="$3/%p.gtrace"
			GAPTRACE_SOCKET="$NOSOCK" "${PROG[@]}")
		;;
	gt_dormant)
		CMD=("${CLEAN[@]}" CUDA_INJECTION64_PATH="$INJECT_ABS" GAPTRACE_DORMANT=1
			GAPTRACE_SOCKET="$NOSOCK" "${PROG[@]}")
		;;
	gt_run) CMD=("${CLEAN[@]}" GAPTRACE_INJECT_PATH="$INJECT_ABS" "$GAPTRACE" run -q -o "$3" -- "${PROG[@]}") ;;
	gt_run_nvml0)
		CMD=("${CLEAN[@]}" GAPTRACE_INJECT_PATH="$INJECT_ABS" "$GAPTRACE" run -q --nvml-hz 0 -o "$3"
			-- "${PROG[@]}")
		;;
	gt_run_100hz)
		CMD=("${CLEAN[@]}" GAPTRACE_INJECT_PATH="$INJECT_ABS" "$GAPTRACE" run -q "${NVML100[@]}"
			-o "$3" -- "${PROG[@]}")
		;;
	gt_run_stacks)
		CMD=("${CLEAN[@]}" GAPTRACE_INJECT_PATH="$INJECT_ABS" "$GAPTRACE" run -q --stacks -o "$3"
			-- "${PROG[@]}")
		;;
	torch_profiler) CMD=("${CLEAN[@]}" "${PROG[@]}" --torch-profiler) ;;
	esac
}

# metric_of STDOUT METRIC: the example's timing[METRIC], or nothing.
metric_of()
{
	$GTCHECK timing "$1" "$2" 2>/dev/null
}

# guess_s BENCH ARM: seconds a run not seen yet may take: from the bench's
# untraced (or warm-up) run when there is one, else GUESS_*; torch.profiler's
# post-processing makes its runs longer.
guess_s()
{
	local g=$GUESS_RN u=${DUR[$1.untraced]:-0}
	[ "$1" = hf_generate ] && g=$GUESS_HF
	[ "$u" -gt 0 ] && g=$(((u * 3 + 1) / 2))
	[ "$2" = torch_profiler ] && g=$((g * 2))
	echo "$g"
}
need_s() { echo "${DUR[$1.$2]:-$(guess_s "$1" "$2")}"; }
fits() { [ $(($(elapsed) + $1 + RESERVE)) -le "$TIME_BUDGET" ]; }

# one_run BENCH ARM ROUND: run, record a raw row, remember the duration.
one_run()
{
	local bench=$1 arm=$2 r=$3
	local d="$WORK/$bench.$arm.$r.d" id="$bench.$arm.$r"
	rm -rf "$d"
	[ "$arm" = gt_file ] && mkdir -p "$d"
	arm_cmd "$bench" "$arm" "$d"
	local left=$((TIME_BUDGET - $(elapsed) - RESERVE))
	# a run takes seconds: 90 s means it hangs (at most what is left)
	STEP_TIMEOUT=$((left < 90 ? (left > 20 ? left : 20) : 90))
	run_logged "$id" "${CMD[@]}"
	local v bytes s
	v=$(metric_of "$WORK/$id.stdout" "$METRIC")
	bytes=$(find "$d" -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bench" "$arm" "$r" "$METRIC" "${v:-nan}" "$SECS" \
		"${bytes:-0}" "$RC" >>"$RAW"
	s=$(awk -v s="$SECS" 'BEGIN { printf "%d", s + 0.999 }')
	[ "$s" -gt "${DUR[$bench.$arm]:-0}" ] && DUR[$bench.$arm]=$s
	log "  $id: $METRIC=${v:-?} (${SECS} s, trace ${bytes:-0} B)"
	case $arm in
	floor)
		# the floor's exit line comes from its atexit handler: the run
		# ended through a normal exit (zygote workers too)
		grep -h '^cupti_floor: .*discarded' "$WORK/$id.stderr" 2>/dev/null | sed 's/^/    /' |
			tee -a "$LOG" | grep -q . || log "    WARNING: no exit line from the floor library"
		;;
	gt_file | gt_run*)
		find "$d" -name '*.gtrace' ! -name 'nvml*' -size +0 2>/dev/null | grep -q . ||
			log "    WARNING: no per-process trace in $d"
		;;
	esac
	rm -rf "$d"
}

# ------------------------------------------------------------ plan, warm-up, NVML cost
nruns=0
est=0
for b in $BENCHES; do
	log "-- $b: arms ${ARMS_OF[$b]}"
	for arm in ${ARMS_OF[$b]}; do
		nruns=$((nruns + ROUNDS))
		est=$((est + ROUNDS * $(guess_s "$b" "$arm")))
	done
	est=$((est + $(guess_s "$b" untraced))) # the warm-up run
done
log "-- plan: $nruns runs ($ROUNDS rounds) + warm-ups, LAUNCH=$LAUNCH: guessed ~${GUESS_HF} s a hf_generate run, ~${GUESS_RN} s a resnet_step run (torch_profiler twice that) => ~${est} s, after $(elapsed) s of set-up; TIME_BUDGET ${TIME_BUDGET} s (the budget guard stops the rounds before it)"

if [ -x "$NVML_COST" ]; then
	log "-- NVML query cost, GPU idle"
	run_logged nvml_cost_idle "$NVML_COST" -n 300
	sed 's/^/    /' "$WORK/nvml_cost_idle.stdout" | tee -a "$LOG"
fi
for b in $BENCHES; do
	if ! fits "$(guess_s "$b" untraced)"; then
		break
	fi
	bg=""
	if [ "$b" = hf_generate ] && [ -x "$NVML_COST" ]; then
		# NVML's cost while a traced-sized workload keeps the driver busy
		(sleep 3 && "$NVML_COST" -n 300 >"$WORK/nvml_cost_busy.txt" 2>&1) &
		bg=$!
	fi
	arm_cmd "$b" untraced ""
	# shellcheck disable=SC2034 # read by run_logged (tests/gpu/lib.sh)
	STEP_TIMEOUT=90
	run_logged "warmup.$b" "${CMD[@]}"
	log "  warm-up $b: $METRIC=$(metric_of "$WORK/warmup.$b.stdout" "$METRIC") (${SECS} s, not counted)"
	s=$(awk -v s="$SECS" 'BEGIN { printf "%d", s + 0.999 }')
	DUR[$b.untraced]=$s
	if [ -n "$bg" ]; then
		wait "$bg"
		log "-- NVML query cost while hf_generate runs"
		sed 's/^/    /' "$WORK/nvml_cost_busy.txt" | tee -a "$LOG"
	fi
done

# ------------------------------------------------------------ rounds
STOPPED=""
rounds_done=0
for ((r = 0; r < ROUNDS; r++)); do
	t_round=$SECONDS
	for bench in $BENCHES; do
		read -r -a arms <<<"${ARMS_OF[$bench]}"
		n=${#arms[@]}
		for ((i = 0; i < n; i++)); do
			arm=${arms[$(((i + r) % n))]}
			need=$(need_s "$bench" "$arm")
			if ! fits "$need"; then
				STOPPED="stopped in round $r before $bench/$arm: $(elapsed) s spent + ~$need s for the run + ${RESERVE} s reserve > TIME_BUDGET ${TIME_BUDGET} s"
				break 3
			fi
			one_run "$bench" "$arm" "$r"
		done
	done
	rounds_done=$((r + 1))
	round_s=$((SECONDS - t_round))
	left=$((ROUNDS - r - 1))
	log "-- round $r: ${round_s} s; $(elapsed) s spent; $left round(s) to go, ~$((left * round_s)) s"
	if [ "$r" -eq 0 ] && [ "$left" -gt 0 ]; then
		fit=$(((TIME_BUDGET - RESERVE - $(elapsed)) / (round_s > 0 ? round_s : 1)))
		log "   at this pace $fit more round(s) fit in TIME_BUDGET"
		if [ "$fit" -lt "$left" ] && [ -n "$OPTIONAL_ARMS" ]; then
			for bench in $BENCHES; do
				kept=()
				for arm in ${ARMS_OF[$bench]}; do
					[[ " $OPTIONAL_ARMS " == *" $arm "* ]] || kept+=("$arm")
				done
				ARMS_OF[$bench]="${kept[*]}"
			done
			log "   dropping the optional arm(s) $OPTIONAL_ARMS for the other rounds"
		fi
	fi
done
[ -n "$STOPPED" ] && log "-- TIME_BUDGET: $STOPPED; $rounds_done full round(s) done"
stop_zygote

# ------------------------------------------------------------ results
for bench in $BENCHES; do
	for arm in $(awk -F'\t' -v b="$bench" 'NR > 1 && $1 == b && !seen[$2]++ { print $2 }' "$RAW"); do
		runs=$(awk -F'\t' -v b="$bench" -v a="$arm" '$1 == b && $2 == a' "$RAW" | wc -l)
		ok=$(awk -F'\t' -v b="$bench" -v a="$arm" '$1 == b && $2 == a && $8 == 0 && $5 != "nan"' "$RAW" | wc -l)
		st=ok
		[ "$ok" -lt "$runs" ] && st=FAIL
		[ "$st" = ok ] && [ "$runs" -lt "$ROUNDS" ] && st="ok (partial: $runs of $ROUNDS rounds)"
		result "$bench" "$arm" "$ok/$runs" "$st"
	done
done
cp "$RAW" "$OUT/realworld_raw.tsv"
finish
status=$?
cmdline="ROUNDS=$ROUNDS TIME_BUDGET=$TIME_BUDGET LAUNCH=$LAUNCH GAPTRACE=$GAPTRACE INJECT=$INJECT FLOOR=${FLOOR:-} bench/realworld/run_realworld.sh"
{
	echo
	echo "== realworld tables ($(date -u +%FT%TZ), commit $(git -C "$GT_ROOT" rev-parse --short HEAD 2>/dev/null), $(elapsed) s)"
	[ -n "$STOPPED" ] && echo "NOTE: TIME_BUDGET $STOPPED; $rounds_done full round(s)"
	for f in "$WORK/nvml_cost_idle.stdout" "$WORK/nvml_cost_busy.txt"; do
		[ -f "$f" ] && grep -h 'driver time per second' "$f" |
			sed "s/^ */NVML ($(basename "$f" | sed 's/nvml_cost_//; s/[.].*//')): /"
	done
	$PYTHON bench/realworld/summarize_realworld.py "$RAW" \
		--machine "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $(nproc) CPUs; LAUNCH=$LAUNCH" \
		--command "$cmdline"
} | tee -a "$LOG"
exit "$status"
