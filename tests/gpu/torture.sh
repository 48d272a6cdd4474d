#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/torture.sh: the real-framework torture suite (issue 10, item 4).
#
# Cases (real programs, each ending with one JSON line whose "result" is
# deterministic; see examples/README.md):
#   hf_generate              transformers GPT-2 generate() loop (hung gaptrace 0.1)   [x REPEAT]
#   resnet_train             torchvision ResNet-18, DataLoader workers forked every epoch [x REPEAT]
#   compile_default          torch.compile(mode="default") training step
#   compile_reduce_overhead  torch.compile(mode="reduce-overhead"): CUDA graph trees
#   jax_jit                  a jitted JAX training loop (XLA's launch threads)
#   cupy                     CuPy ufuncs, ElementwiseKernel, RawKernel (cuLaunchKernel), cuBLAS
#   mt_streams               CUDA C: 8 host threads x 8 streams, pinned async copies
#   lazy_stress              CUDA C: 384 kernels loaded lazily mid-run while 2 threads work [x REPEAT]
#   nvtx_ranges              CUDA C: NVTX push/pop, start/end, domain ranges, marks
#   profiler_range           CUDA C: cudaProfilerStop/Start mid-run, another thread launching
# Modes, for every case:
#   untraced  the program alone: the reference exit status, stdout and time
#             (cases that compile at run time first get an untimed warm-up run)
#   file      CUDA_INJECTION64_PATH=$INJECT GAPTRACE_OUTPUT=DIR/%p.gtrace
#   run       $GAPTRACE run -q -o DIR -- program
#   capture   GAPTRACE_DORMANT=1 CUDA_INJECTION64_PATH=$INJECT GAPTRACE_SOCKET=S:
#             one `gaptrace collector --dormant --socket S` runs for the whole
#             suite; once the program shows in `gaptrace capture --list` (it
#             connects at cuInit; torch.compile cases: once they log their
#             first step, compiled code loaded) and CAP_DELAY more has
#             passed, `gaptrace capture --pid P --duration CAP_DUR` arms it
#             mid-run (a program that ends before is a failed run)
#   live      CUDA_INJECTION64_PATH=$INJECT GAPTRACE_SOCKET=L: one
#             `gaptrace collector --live --socket L` (2 s windows, delivery
#             marks every 500 ms: a default CUPTI flush on a thread of the
#             injection library's) runs for the whole suite; the program is
#             traced from its start; its trace must hold delivery marks
#             (not in MODES by default: MODES="file run capture live")
# The hang-prone cases run REPEAT [5] times in each traced mode, the others
# once. Every mode of a case runs the same command line and environment
# (jax_jit: XLA_PYTHON_CLIENT_PREALLOCATE=false, the GPU is shared; the
# torch.compile cases: TORCHINDUCTOR_COMPILE_THREADS=4, the cores are shared).
# Checks of every traced run (all at gaptrace's default settings):
#   - a watchdog: a run longer than 3 x its untraced time (at least HANG_FLOOR
#     [20] s) is a HANG: its threads (/proc/PID/task/*: comm, wchan, state)
#     and stacks (cuda-gdb -p PID -batch "thread apply all bt", 90 s at
#     most; the first two hangs of a case and mode) are saved, then its
#     whole session (setsid) is killed;
#   - exit status and the JSON line (minus "timing") equal the untraced run's
#     (lazy_stress: "example" and "result" only: its warm/copy loop counts
#     under "expect" vary run to run);
#   - zero loss: no loss record, no bad or missing frame, no torn tail, and at
#     least one kernel (gtcheck.py torture-check); file and run modes also
#     check the example's exact "expect" counts and "expect_min" bounds;
#     capture mode checks the captured trace (an ARMED note, kernels, zero
#     loss) and records how long `gaptrace capture` took to return after its
#     duration ("capture_return" = its wall time - CAP_DUR; it includes the
#     arm request and the wait for the last frames).
#
# Lanes: to fit the device's 10-minute limit, LANES [4] workers (one GPU, 16
# cores) take the runs from one queue: every case's warm-up and untraced
# reference first (largest cases first), then the traced runs rep by rep; a
# traced run waits for its case's reference. So every run, the references
# included, runs beside LANES-1 others: the references are measured under the
# same load as the traced runs. Wall times and ratios are informational.
# Budget: no run starts when less than its expected time (2 x untraced + 5 s)
# is left of TIME_BUDGET [420] s; it gets a SKIP row. Watchdogs are cut at
# TIME_BUDGET + 45 s (such a run is "SKIP (cut)", not a hang), and the stack
# collection at +105 s: at worst the suite ends ~9 minutes after it started
# (a guard stops the lanes at +150 s); without hangs, expect ~5-6 minutes.
#
#   bash tests/gpu/torture.sh [case...]      # -> $OUT/torture.txt, $OUT/torture.tar.gz
# Variables (besides lib.sh's BUILD GAPTRACE INJECT PYTHON CUDA_HOME NVCC):
#   BIN_DIR [.gpu/bin]  prebuilt CUDA examples (tests/gpu/prebuild.sh); missing
#                       ones are built with nvcc (lib.sh ex_bin; lazy_stress ~1 min)
#   REPEAT [5] LANES [4] TIME_BUDGET [420] HANG_FLOOR [20] MODES ["file run capture"]
#   GAPTRACE_STACKS=1   every traced run takes host stacks (issue 15); the log
#                       gives each run's stacks end note
#   UNTRACED_LIMIT [240] seconds allowed to an untraced or warm-up run
# The summary (per run, then per case and mode, then the pass/fail line) is
# printed last; $OUT/torture.tar.gz holds every run's stdout, stderr tail,
# checks, capture logs and hang evidence (traces only of failed runs, small).
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
gt_init torture
export PYTHONUNBUFFERED=1
LANE=main
unset CUDA_INJECTION64_PATH GAPTRACE_DORMANT GAPTRACE_SOCKET GAPTRACE_OUTPUT GAPTRACE_KINDS \
	GAPTRACE_DISABLE NVTX_INJECTION64_PATH

if [ -z "${EPOCHREALTIME:-}" ]; then
	now_ms() { NOW_MS=$(date +%s%3N); }
else
	now_ms()
	{
		local t=${EPOCHREALTIME/[.,]/}
		NOW_MS=$((10#$t / 1000))
	}
fi
now_ms
T0_MS=$NOW_MS

BIN_DIR=${BIN_DIR:-.gpu/bin}
REPEAT=${REPEAT:-5}
LANES=${LANES:-4}
TIME_BUDGET=${TIME_BUDGET:-420}
HANG_FLOOR=${HANG_FLOOR:-20}
UNTRACED_LIMIT=${UNTRACED_LIMIT:-240}
MODES=${MODES:-file run capture}
ALL_CASES="hf_generate resnet_train compile_default compile_reduce_overhead jax_jit cupy
mt_streams lazy_stress nvtx_ranges profiler_range"
CASES=${*:-$ALL_CASES}
CASES=$(echo "$CASES" | tr -s '[:space:]' ' ')
T_END_MS=$((T0_MS + TIME_BUDGET * 1000))
T_HARD_MS=$((T_END_MS + 45000))
T_GDB_MS=$((T_END_MS + 105000))
GDB=$(command -v cuda-gdb 2>/dev/null || command -v gdb 2>/dev/null || echo "")

need_build
GAPTRACE=$(realpath -m "$GAPTRACE")
INJECT=$(realpath -m "$INJECT")
export GAPTRACE
mkdir -p "$WORK/runs" "$WORK/active"
: >"$WORK/rows.tsv"
log "cases: $CASES"
log "modes: untraced $MODES; REPEAT=$REPEAT LANES=$LANES TIME_BUDGET=${TIME_BUDGET}s HANG_FLOOR=${HANG_FLOOR}s BIN_DIR=$BIN_DIR"
log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nproc) cores; debugger: ${GDB:-none}"
log "python: $($PYTHON -c 'import sys; print(sys.version.split()[0])' 2>&1)"

HEADER=(case mode rep exit output trace secs ratio cap_tail note status)
result_header "${HEADER[@]}"

if [ ! -x "$GAPTRACE" ] || [ ! -f "$INJECT" ]; then
	log "no $GAPTRACE or no $INJECT: nothing to torture (build: tests/gpu/build.sh)"
	result all - - - - - - - - - "ERROR (no gaptrace build)"
	$GTCHECK table "$RES" | tee -a "$LOG"
	echo "torture: 0 passed, 1 failed" | tee -a "$LOG"
	exit 1
fi

# ---------------------------------------------------------------- cases
# cbin NAME: a CUDA example's binary: $BIN_DIR/NAME, else lib.sh's ex_bin.
cbin()
{
	if [ -x "$BIN_DIR/$1" ]; then
		realpath "$BIN_DIR/$1"
	else
		ex_bin "$1"
	fi
}

# case_def NAME: the case's command (CMD), extra environment for every
# mode (CENV), expected seconds per process under lane load (EST), repeats
# per traced mode (REPS), untraced warm-up first (WARM), check the example's
# counts (EXACT), keys compared with the untraced output (KEYS, "" = all),
# capture: a line to wait for on the program's stderr after it connected
# (CAP_AFTER, "" = none), then a delay (CAP_DELAY_MS), then the capture's
# duration (CAP_DUR_MS); chosen so that the window falls in the middle of
# the program's GPU work. CUDA programs come from CBIN (resolved once,
# before the lanes start). Returns 2 for an unknown case, 1 without binary.
declare -A CBIN
case_def()
{
	local b=""
	CMD=()
	CENV=()
	EST=10 REPS=1 WARM=0 EXACT=0 KEYS="" CAP_DELAY_MS=500 CAP_DUR_MS=1000 CAP_AFTER=""
	local t=examples/torch
	case $1 in
	hf_generate)
		CMD=("$PYTHON" "$t/hf_generate.py" --rounds 6 --new-tokens 32)
		EST=16 REPS=$REPEAT
		;;
	resnet_train)
		CMD=("$PYTHON" "$t/resnet_train.py" --steps 160 --workers 2)
		EST=11 REPS=$REPEAT EXACT=1
		;;
	compile_default)
		# capture: after the compiled code is loaded (logged after step 1)
		CMD=("$PYTHON" "$t/compile_step.py" --mode default --steps 3000)
		# fewer compile workers than cores: the other lanes' timings
		CENV=(TORCHINDUCTOR_COMPILE_THREADS=4)
		EST=10 WARM=1 EXACT=1 CAP_AFTER="first step" CAP_DELAY_MS=200
		;;
	compile_reduce_overhead)
		CMD=("$PYTHON" "$t/compile_step.py" --mode reduce-overhead --steps 3000)
		CENV=(TORCHINDUCTOR_COMPILE_THREADS=4)
		EST=10 WARM=1 EXACT=1 CAP_AFTER="first step" CAP_DELAY_MS=200
		;;
	jax_jit)
		# No preallocation of 75% of the GPU: other lanes share it.
		CMD=("$PYTHON" examples/jax/jit_loop.py --steps 600)
		CENV=(XLA_PYTHON_CLIENT_PREALLOCATE=false)
		EST=9 CAP_DELAY_MS=1000 CAP_DUR_MS=2500
		;;
	cupy)
		CMD=("$PYTHON" examples/cupy/cupy_ops.py --steps 4000)
		EST=5 WARM=1 EXACT=1
		;;
	mt_streams)
		b=${CBIN[mt_streams]:-}
		CMD=("$b" --iters 2500)
		EST=4 EXACT=1 CAP_DELAY_MS=300
		;;
	lazy_stress)
		b=${CBIN[lazy_stress]:-}
		CMD=("$b" --gap-us 8000 --malloc-churn 1)
		EST=4 REPS=$REPEAT EXACT=1 KEYS=example,result CAP_DELAY_MS=300
		;;
	nvtx_ranges)
		b=${CBIN[nvtx_ranges]:-}
		CMD=("$b" --iters 300 --spin-us 10000)
		EST=4 EXACT=1 CAP_DELAY_MS=300
		;;
	profiler_range)
		b=${CBIN[profiler_range]:-}
		CMD=("$b" --rounds 8 --launches 40 --spin-us 4000)
		EST=4 EXACT=1 CAP_DELAY_MS=300
		;;
	*) return 2 ;;
	esac
	[ "${CMD[0]}" != "" ] || return 1
	return 0
}

# ---------------------------------------------------------------- runs
# A case's reference (job_ref; read back by job_traced).
BASE_RC=0 BASE_SECS=0 BASE_DIR="" LIMIT=0 EXPECT_S=0
NMODES=$(wc -w <<<"$MODES")
SOCK=""
COLL_PID=""
LSOCK=""
LIVE_PID=""

# sess_pids SID: the processes of a session (ours: started with setsid).
sess_pids()
{
	ps -e -o pid=,sid= 2>/dev/null | awk -v s="$1" '$2 == s { print $1 }'
}

# kill_session SID: SIGKILL each process of the session, one by one by pid.
kill_session()
{
	local p
	for p in $(sess_pids "$1"); do
		kill -9 "$p" 2>/dev/null
	done
}

# evidence DIR LEADER MODE: threads of every process of the run's session,
# and the stacks of the program (for `run` mode: gaptrace's child).
evidence()
{
	local d=$1 leader=$2 mode=$3 target p t
	target=$leader
	if [ "$mode" = run ]; then
		target=$(ps -o pid= --ppid "$leader" 2>/dev/null | head -n 1 | tr -d ' ')
		[ -n "$target" ] || target=$leader
	fi
	for p in $(sess_pids "$leader"); do
		echo "== pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)"
		for t in /proc/"$p"/task/*; do
			echo "$(basename "$t") $(cat "$t/comm" 2>/dev/null) wchan=$(cat "$t/wchan" 2>/dev/null) $(awk '{ print "state=" $3 }' "$t/stat" 2>/dev/null)"
		done
	done >"$d/threads.txt" 2>&1
	now_ms
	local gdb_s=$(((T_GDB_MS - NOW_MS) / 1000))
	[ "$gdb_s" -gt 90 ] && gdb_s=90
	# Stacks of the first two hangs of a case and mode (up to 90 s each);
	# later ones get the thread list only.
	local seen
	seen=$WORK/stacks.$(basename "$d" | cut -d. -f1,2)
	echo >>"$seen"
	if [ "$(wc -l <"$seen")" -gt 2 ]; then
		echo "no stacks: two hangs of this case and mode have them already" >"$d/stacks.txt"
	elif [ -n "$GDB" ] && [ "$gdb_s" -ge 10 ]; then
		timeout -k 5 "$gdb_s" "$GDB" -p "$target" -batch -ex "set pagination off" \
			-ex "thread apply all bt" >"$d/stacks.txt" 2>&1
		log "    [$LANE] stacks of pid $target: $(grep -c '^Thread' "$d/stacks.txt") threads (${gdb_s}s allowed)"
	else
		echo "no stacks: debugger '${GDB:-none}', ${gdb_s}s left" >"$d/stacks.txt"
	fi
}

# capture_driver PID DIR: wait until PID is connected to the suite's
# collector, wait CAP_DELAY_MS, capture it for CAP_DUR_MS. Writes
# DIR/cap.status: "rc=N connect_ms=N wall_ms=N" (times from the launch).
capture_driver()
{
	local pid=$1 d=$2 t_launch=$3 rc
	while :; do
		# `capture --list` prints a table, one row "PID STATE FRAMES ..." a process
		if "$GAPTRACE" capture --list --socket "$SOCK" 2>/dev/null |
			grep -q -E "^$pid +(dormant|armed) "; then
			break
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "rc=never-connected" >"$d/cap.status"
			return
		fi
		sleep 0.1
	done
	now_ms
	local t_conn=$NOW_MS
	if [ -n "$CAP_AFTER" ]; then
		until grep -q -e "$CAP_AFTER" "$d/stderr" 2>/dev/null; do
			if ! kill -0 "$pid" 2>/dev/null; then
				echo "rc=program-ended-before-capture (no '$CAP_AFTER' on stderr)" >"$d/cap.status"
				return
			fi
			sleep 0.05
		done
	fi
	sleep "$(awk -v m="$CAP_DELAY_MS" 'BEGIN { printf "%.3f", m / 1000 }')"
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "rc=program-ended-before-capture" >"$d/cap.status"
		return
	fi
	now_ms
	local t_a=$NOW_MS
	timeout -k 5 $((CAP_DUR_MS / 1000 + 40)) "$GAPTRACE" capture --pid "$pid" \
		--duration "${CAP_DUR_MS}ms" --socket "$SOCK" >"$d/cap.stdout" 2>"$d/cap.stderr"
	rc=$?
	now_ms
	# What the trace holds when `capture` returns, while the program still
	# runs: the check compares it with the final trace (records that came
	# later would break "capture end delivers in bounded time").
	local alive=0 tp
	tp=$(head -n 1 "$d/cap.stdout" 2>/dev/null)
	if kill -0 "$pid" 2>/dev/null && [ -n "$tp" ] && [ -f "$tp" ]; then
		alive=1
		cp "$tp" "$d/at_return.gtrace" 2>/dev/null
	fi
	echo "rc=$rc connect_ms=$((t_conn - t_launch)) start_ms=$((t_a - t_launch)) wall_ms=$((NOW_MS - t_a)) alive_at_return=$alive" >"$d/cap.status"
}

# row CASE MODE REP COLS...: one line of the results table (columns as
# HEADER from "exit" on), appended to the shared rows file with a sort key
# (case order, then warm-up, untraced, file, run, capture, then rep).
row()
{
	local c=$1 mode=$2 rep=$3 ci=0 mi=9 x IFS=$' \t\n'
	shift 3
	for x in $CASES; do
		[ "$x" = "$c" ] && break
		ci=$((ci + 1))
	done
	case $mode in
	warm-up) mi=0 ;;
	untraced) mi=1 ;;
	file) mi=2 ;;
	run) mi=3 ;;
	capture) mi=4 ;;
	live) mi=5 ;;
	esac
	local IFS=$'\t'
	printf '%03d.%d.%03d\t%s\t%s\t%s\t%s\n' "$ci" "$mi" "$((10#0${rep//[!0-9]/}))" \
		"$c" "$mode" "$rep" "$*" >>"$WORK/rows.tsv"
}

# one_run CASE MODE REP LIMIT_S: run the case's command in MODE under the
# watchdog. Sets R_DIR, R_RC, R_SECS, R_STATE (ok, HANG, CUT).
one_run()
{
	local c=$1 mode=$2 rep=$3 limit=$4
	local d="$WORK/runs/$c.$mode.$rep"
	rm -rf "$d"
	mkdir -p "$d"
	R_DIR=$d
	local envs=() pre=()
	case $mode in
	untraced | warmup) ;;
	file)
		mkdir -p "$d/trace"
		envs=("CUDA_INJECTION64_PATH=$INJECT" "GAPTRACE_OUTPUT=$d/trace/%p.gtrace"
			"GAPTRACE_SOCKET=$WORK/no-collector.sock")
		;;
	run)
		# GAPTRACE_OUTPUT: where a producer that loses its collector falls
		# back to (not the repository root); none is expected
		envs=("GAPTRACE_INJECT_PATH=$INJECT" "GAPTRACE_OUTPUT=$d/fallback.%p.gtrace")
		pre=("$GAPTRACE" run -q -o "$d/trace" --)
		;;
	capture)
		envs=("CUDA_INJECTION64_PATH=$INJECT" "GAPTRACE_DORMANT=1" "GAPTRACE_SOCKET=$SOCK"
			"GAPTRACE_OUTPUT=$d/fallback.%p.gtrace")
		;;
	live)
		envs=("CUDA_INJECTION64_PATH=$INJECT" "GAPTRACE_SOCKET=$LSOCK"
			"GAPTRACE_OUTPUT=$d/fallback.%p.gtrace")
		;;
	esac
	now_ms
	local t0=$NOW_MS
	# The watchdog is cut at the suite's hard end.
	local lim_ms=$((limit * 1000)) cut=0
	if [ $((t0 + lim_ms)) -gt "$T_HARD_MS" ]; then
		lim_ms=$((T_HARD_MS - t0))
		cut=1
	fi
	{
		printf '%q ' env "${envs[@]}" "${CENV[@]}" "${pre[@]}" "${CMD[@]}"
		echo
	} >"$d/cmd"
	# shellcheck disable=SC2016 # $$ and $0 are the inner shell's
	setsid -w bash -c 'echo $$ >"$0"; exec env "$@"' "$d/pid" "${envs[@]}" "${CENV[@]}" \
		"${pre[@]}" "${CMD[@]}" >"$d/stdout" 2>"$d/stderr" </dev/null &
	local bg=$! pid="" i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pid=$(cat "$d/pid" 2>/dev/null)
		[ -n "$pid" ] && break
		sleep 0.05
	done
	[ -n "$pid" ] || pid=$bg
	echo "$pid" >"$WORK/active/$c.$mode.$rep"
	local drv=""
	if [ "$mode" = capture ]; then
		capture_driver "$pid" "$d" "$t0" &
		drv=$!
	fi
	R_STATE=ok
	while kill -0 "$bg" 2>/dev/null; do
		now_ms
		if [ $((NOW_MS - t0)) -gt "$lim_ms" ]; then
			if [ "$cut" = 1 ]; then R_STATE=CUT; else R_STATE=HANG; fi
			break
		fi
		sleep 0.2
	done
	now_ms
	R_SECS=$(awk -v a="$t0" -v b="$NOW_MS" 'BEGIN { printf "%.1f", (b - a) / 1000 }')
	if [ "$R_STATE" != ok ]; then
		log "  [$LANE] $c.$mode.$rep: $R_STATE after ${R_SECS}s (limit $((lim_ms / 1000))s, pid $pid): collecting evidence"
		if [ "$R_STATE" = HANG ]; then
			evidence "$d" "$pid" "$mode"
		else
			sess_pids "$pid" >"$d/threads.txt"
		fi
		kill_session "$pid"
		wait "$bg" 2>/dev/null
		R_RC=137
	else
		wait "$bg"
		R_RC=$?
		# Leftovers of the run's session (e.g. a worker that outlived the
		# program) are ended, one by one.
		local left
		left=$(sess_pids "$pid" | wc -l)
		if [ "$left" -gt 0 ]; then
			echo "$left" >"$d/leftover"
			kill_session "$pid"
		fi
	fi
	if [ -n "$drv" ]; then
		wait "$drv" 2>/dev/null
		# the collector closes the trace when the process's stream ends
		for i in $(seq 1 50); do
			"$GAPTRACE" capture --list --socket "$SOCK" 2>/dev/null | grep -q -E "^$pid +" || break
			sleep 0.1
		done
	fi
	rm -f "$WORK/active/$c.$mode.$rep"
	log "  [$LANE] $c.$mode.$rep: exit $R_RC in ${R_SECS}s ($R_STATE)"
	if [ "$R_RC" -ne 0 ] && [ "$R_STATE" = ok ]; then
		tail -n 8 "$d/stderr" | sed "s/^/    [$LANE] stderr| /" | tee -a "$LOG"
	fi
	return 0
}

# check_run CASE MODE REP: compare a traced run with the untraced one; one row.
check_run()
{
	local c=$1 mode=$2 rep=$3 d=$R_DIR
	local exit_s out_s trace_s="-" tail_s="-" note="" status="PASS" why=()
	if [ "$R_STATE" = HANG ]; then
		row "$c" "$mode" "$rep" "-" "-" "-" "$R_SECS" "-" "-" "watchdog $LIMIT s" \
			"FAIL (HANG: no exit after ${R_SECS}s)"
		return
	fi
	if [ "$R_STATE" = CUT ]; then
		row "$c" "$mode" "$rep" "-" "-" "-" "$R_SECS" "-" "-" "budget end" "SKIP (cut)"
		return
	fi
	if [ "$R_RC" -eq "$BASE_RC" ]; then exit_s=$R_RC; else
		exit_s="$R_RC!=$BASE_RC"
		why+=("exit")
	fi
	local keys=()
	[ -n "$KEYS" ] && keys=(--keys "$KEYS")
	# shellcheck disable=SC2086 # GTCHECK is "python gtcheck.py"
	if timeout 60 $GTCHECK same-output "${keys[@]}" "$BASE_DIR/stdout" "$d/stdout" >"$d/same.txt" 2>&1; then
		out_s=same
	else
		out_s=differs
		why+=("output")
		sed "s/^/    [$LANE] $c.$mode.$rep /" "$d/same.txt" | head -n 6 | tee -a "$LOG"
	fi
	local tr=() opt=()
	case $mode in
	file | run) tr=("$d/trace") ;;
	capture)
		local st p
		st=$(cat "$d/cap.status" 2>/dev/null)
		p=$(head -n 1 "$d/cap.stdout" 2>/dev/null)
		local wall_ms
		wall_ms=$(echo "$st" | sed -n 's/.*wall_ms=\([0-9]*\).*/\1/p')
		if [ -n "$wall_ms" ]; then
			tail_s=$(awk -v w="$wall_ms" -v d="$CAP_DUR_MS" 'BEGIN { printf "%.1f", (w - d) / 1000 }')
		fi
		if grep -q 'left before the capture ended' "$d/cap.stderr" 2>/dev/null; then
			note="exited in window"
		fi
		case $st in
		rc=0*) ;;
		rc=program-ended*)
			why+=("capture window missed: program too short")
			;;
		*)
			why+=("capture: ${st:-no status}")
			sed "s/^/    [$LANE] $c.capture.$rep cap| /" "$d/cap.stderr" 2>/dev/null | tail -n 4 | tee -a "$LOG"
			;;
		esac
		# a program that ended inside the window: the path is on stderr
		[ -n "$p" ] || p=$(sed -n 's/.*its trace is \(.*\)$/\1/p' "$d/cap.stderr" 2>/dev/null | head -n 1)
		[ -n "$p" ] && tr=("$p")
		opt=(--capture)
		log "  [$LANE] $c.capture.$rep: $st; trace ${p:-none}"
		if [ -f "$d/at_return.gtrace" ] && [ -n "$p" ]; then
			local k_ret k_fin
			k_ret=$($GTCHECK counts "$d/at_return.gtrace" 2>/dev/null | grep -o '"kernel": [0-9]*' | grep -o '[0-9]*$')
			k_fin=$($GTCHECK counts "$p" 2>/dev/null | grep -o '"kernel": [0-9]*' | grep -o '[0-9]*$')
			note="${note:+$note; }kernels at return ${k_ret:-0}/${k_fin:-0}"
			[ "${k_ret:-0}" = "${k_fin:-0}" ] || why+=("records after capture returned")
		fi
		;;
	live)
		local lp nm
		lp=$(cat "$d/pid" 2>/dev/null)
		# the collector closes the trace when the process's stream ends
		for i in $(seq 1 50); do
			grep -q -E "^disconnect pid $lp " "$WORK/live.out" 2>/dev/null && break
			sleep 0.1
		done
		[ -n "$lp" ] && [ -f "$WORK/live.d/$lp.gtrace" ] && tr=("$WORK/live.d/$lp.gtrace")
		if [ "${#tr[@]}" -gt 0 ]; then
			nm=$("$GAPTRACE" dump -t mark "${tr[0]}" 2>/dev/null | grep -c '^mark ')
			note="delivery marks ${nm:-0}"
			[ "${nm:-0}" -gt 0 ] || why+=("no delivery marks")
		fi
		;;
	esac
	[ "$EXACT" = 1 ] && [ "$mode" != capture ] && opt+=(--exact)
	if [ "${#tr[@]}" -gt 0 ]; then
		# shellcheck disable=SC2086
		timeout 300 $GTCHECK torture-check --stdout "$d/stdout" --json "$d/counts.json" \
			"${opt[@]}" "${tr[@]}" >"$d/check.txt" 2>&1
		local crc=$?
		trace_s=$(tail -n 1 "$d/check.txt" | cut -c1-60)
		if [ "$crc" -ne 0 ]; then
			why+=("trace")
			grep -E 'MISMATCH|error|loss:' "$d/check.txt" | head -n 8 | sed "s/^/    [$LANE] $c.$mode.$rep /" | tee -a "$LOG"
		fi
	else
		trace_s="no trace"
		why+=("no trace")
	fi
	if [ "${GAPTRACE_STACKS:-0}" = 1 ] && [ "${#tr[@]}" -gt 0 ]; then
		# with host stacks on: what they took, per traced run (their end note)
		local sn
		sn=$(for t in "${tr[@]}"; do "$GAPTRACE" dump -t note "$t" 2>/dev/null; done |
			grep -o 'stacks: [0-9]* taken, [0-9]* distinct, [0-9]* dropped[^;]*; [^;]*;.*Python frames: [^(]*' | head -n 1)
		log "    [$LANE] $c.$mode.$rep ${sn:-stacks: no note}"
	fi
	[ -f "$d/leftover" ] && note="${note:+$note; }$(cat "$d/leftover") leftover procs killed"
	if compgen -G "$d/fallback.*.gtrace" >/dev/null; then
		why+=("collector lost: fallback file")
	fi
	local gl
	gl=$(grep -c '^gaptrace:' "$d/stderr" 2>/dev/null)
	grep '^gaptrace:' "$d/stderr" 2>/dev/null | grep -v -E 'CUPTI [0-9]+ from|restricted API sets|writing |no collector at|cannot connect|done' |
		head -n 3 | sed "s/^/    [$LANE] $c.$mode.$rep stderr| /" | tee -a "$LOG"
	[ "${gl:-0}" -gt 0 ] && log "  [$LANE] $c.$mode.$rep: $gl gaptrace lines on stderr"
	local ratio
	ratio=$(awk -v a="$R_SECS" -v b="$BASE_SECS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
	if [ "${#why[@]}" -gt 0 ]; then
		status="FAIL ($(printf '%s, ' "${why[@]}" | sed 's/, $//'))"
	fi
	row "$c" "$mode" "$rep" "$exit_s" "$out_s" "$trace_s" "$R_SECS" "$ratio" "$tail_s" \
		"${note:--}" "$status"
}

# budget_left_for SECS: is there room to start a run expected to take SECS?
budget_left_for()
{
	now_ms
	[ $((NOW_MS + $1 * 1000)) -le "$T_END_MS" ]
}

# ---------------------------------------------------------------- jobs
# Every run is a job in one queue ($WORK/jobs: "CASE KIND MODE REP" lines,
# KIND warmup, ref or traced), taken by LANES workers in order, the first
# eligible one first: a case's reference waits for its warm-up, its traced
# runs for its reference. A failed warm-up or reference drops the case's
# remaining jobs (its row says why).

job_warmup()
{
	local c=$1
	if ! budget_left_for $((EST * 4)); then
		row "$c" warm-up 0 - - - - - - budget "SKIP (budget)"
		touch "$WORK/state/$c.failed"
		return
	fi
	log "-- [$LANE] $c warm-up: $(printf '%q ' "${CENV[@]}" "${CMD[@]}")"
	one_run "$c" warmup 0 "$UNTRACED_LIMIT"
	if [ "$R_STATE" != ok ] || [ "$R_RC" -ne 0 ]; then
		row "$c" warm-up 0 "$R_RC" - - "$R_SECS" - - "$R_STATE" "FAIL (warm-up run failed)"
		touch "$WORK/state/$c.failed"
		return
	fi
	row "$c" warm-up 0 "$R_RC" - - "$R_SECS" - - "fills caches" ok
	touch "$WORK/state/$c.warm"
}

job_ref()
{
	local c=$1
	if ! budget_left_for $((EST * 2)); then
		row "$c" untraced 0 - - - - - - budget "SKIP (budget)"
		touch "$WORK/state/$c.failed"
		return
	fi
	log "-- [$LANE] $c: $(printf '%q ' "${CENV[@]}" "${CMD[@]}")"
	one_run "$c" untraced 0 "$UNTRACED_LIMIT"
	if [ "$R_STATE" != ok ] || [ "$R_RC" -ne 0 ]; then
		row "$c" untraced 0 "$R_RC" - - "$R_SECS" - - "$R_STATE" "FAIL (example itself fails)"
		touch "$WORK/state/$c.failed"
		return
	fi
	local j limit expect_s
	j=$($GTCHECK example-json "$R_DIR/stdout" 2>/dev/null | cut -c1-400)
	log "  [$LANE] $c reference: $j"
	limit=$(awk -v s="$R_SECS" -v f="$HANG_FLOOR" 'BEGIN { h = 3 * s; if (h < f) h = f; printf "%d", h + 0.999 }')
	expect_s=$(awk -v s="$R_SECS" 'BEGIN { printf "%d", 2 * s + 5 }')
	log "  [$LANE] $c: watchdog ${limit}s (3 x ${R_SECS}s, at least ${HANG_FLOOR}s)"
	row "$c" untraced 0 "$R_RC" reference - "$R_SECS" 1.00 - - ok
	printf 'BASE_RC=%q BASE_SECS=%q BASE_DIR=%q LIMIT=%q EXPECT_S=%q\n' \
		"$R_RC" "$R_SECS" "$R_DIR" "$limit" "$expect_s" >"$WORK/state/$c.ref.tmp"
	mv "$WORK/state/$c.ref.tmp" "$WORK/state/$c.ref"
}

job_traced()
{
	local c=$1 mode=$2 rep=$3
	# shellcheck disable=SC1090 # written by job_ref
	source "$WORK/state/$c.ref"
	if [ "$mode" = capture ] && [ -z "$SOCK" ]; then
		row "$c" "$mode" "$rep" - - - - - - "no collector" "ERROR (collector did not start)"
		return
	fi
	if ! budget_left_for "$EXPECT_S"; then
		row "$c" "$mode" "$rep" - - - - - - budget "SKIP (budget)"
		return
	fi
	one_run "$c" "$mode" "$rep" "$LIMIT"
	check_run "$c" "$mode" "$rep"
}

# eligible "CASE KIND MODE REP": 0 runnable now, 1 not yet, 2 never (dropped).
eligible()
{
	local c k
	read -r c k _ <<<"$1"
	[ -e "$WORK/state/$c.failed" ] && return 2
	case $k in
	warmup) return 0 ;;
	ref)
		case_def "$c" >/dev/null 2>&1
		[ "$WARM" = 0 ] || [ -e "$WORK/state/$c.warm" ]
		;;
	*) [ -e "$WORK/state/$c.ref" ] ;;
	esac
}

# take_job: JOB = the first eligible job (removed from the queue), or WAIT
# when jobs remain that are not eligible yet; returns 1 when none remain.
take_job()
{
	local fd line taken="" waiting="" rc
	exec {fd}>>"$WORK/jobs.lock"
	flock "$fd"
	: >"$WORK/jobs.new"
	while read -r line; do
		[ -n "$line" ] || continue
		if [ -z "$taken" ]; then
			eligible "$line"
			rc=$?
			if [ "$rc" -eq 0 ]; then
				taken=$line
				continue
			fi
		else
			eligible "$line"
			rc=$?
			[ "$rc" -eq 2 ] || rc=1
		fi
		[ "$rc" -eq 2 ] && continue
		echo "$line" >>"$WORK/jobs.new"
		waiting=1
	done <"$WORK/jobs"
	mv "$WORK/jobs.new" "$WORK/jobs"
	flock -u "$fd"
	exec {fd}>&-
	if [ -n "$taken" ]; then
		JOB=$taken
	elif [ -n "$waiting" ]; then
		JOB=WAIT
	else
		return 1
	fi
	return 0
}

# worker: a lane: take jobs until none remain.
worker()
{
	local c k mode rep
	while take_job; do
		if [ "$JOB" = WAIT ]; then
			sleep 0.5
			continue
		fi
		read -r c k mode rep <<<"$JOB"
		case_def "$c"
		case $k in
		warmup) job_warmup "$c" ;;
		ref) job_ref "$c" ;;
		traced) job_traced "$c" "$mode" "$rep" ;;
		esac
	done
}

# ---------------------------------------------------------------- collector
if [[ " $MODES " == *" capture "* ]]; then
	SOCKDIR=$(mktemp -d /tmp/gt-torture-sock.XXXXXX)
	SOCK=$SOCKDIR/collector.sock
	setsid "$GAPTRACE" collector --dir "$WORK/collector.d" --socket "$SOCK" --dormant \
		--nvml-hz 10 >"$WORK/collector.out" 2>"$WORK/collector.err" </dev/null &
	COLL_PID=$!
	ok=0
	for i in $(seq 1 50); do
		if "$GAPTRACE" capture --list --socket "$SOCK" >/dev/null 2>&1; then
			ok=1
			break
		fi
		kill -0 "$COLL_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ "$ok" = 1 ]; then
		log "collector (pid $COLL_PID) listening on $SOCK, dormant, traces in $WORK/collector.d"
	else
		log "collector did not start:"
		sed 's/^/    collector| /' "$WORK/collector.err" | tail -n 5 | tee -a "$LOG"
		SOCK=""
	fi
fi

if [[ " $MODES " == *" live "* ]]; then
	LSOCKDIR=$(mktemp -d /tmp/gt-torture-live.XXXXXX)
	LSOCK=$LSOCKDIR/collector.sock
	setsid "$GAPTRACE" collector --dir "$WORK/live.d" --socket "$LSOCK" --live --window 2s \
		--watermark 1s --mark-period 500ms --nvml-hz 10 >"$WORK/live.out" 2>"$WORK/live.err" </dev/null &
	LIVE_PID=$!
	for i in $(seq 1 50); do
		[ -S "$LSOCK" ] && break
		sleep 0.1
	done
	log "live collector (pid $LIVE_PID) on $LSOCK, traces in $WORK/live.d"
fi

# ---------------------------------------------------------------- pre-warm
# The first import of each framework on a fresh machine reads it from disk;
# import them once (in parallel, untimed, no CUDA), so that this cost does not
# land on a case's first run (its untraced reference) alone.
pw=()
[[ " $CASES " =~ \ (hf_generate|resnet_train|compile_default|compile_reduce_overhead)\  ]] &&
	pw+=("import torch, torchvision, transformers, torch._inductor")
[[ " $CASES " == *" jax_jit "* ]] && pw+=("import jax, jax.numpy")
[[ " $CASES " == *" cupy "* ]] && pw+=("import cupy")
if [ "${#pw[@]}" -gt 0 ]; then
	log "-- pre-warm: ${pw[*]}"
	pw_pids=()
	for i in "${!pw[@]}"; do
		timeout -k 5 120 "$PYTHON" -c "${pw[$i]}" >"$WORK/prewarm.$i.out" 2>&1 &
		pw_pids+=($!)
	done
	for i in "${!pw_pids[@]}"; do
		wait "${pw_pids[$i]}" || log "  pre-warm '${pw[$i]}' failed: $(tail -n 1 "$WORK/prewarm.$i.out")"
	done
	now_ms
	log "  pre-warm done at $(((NOW_MS - T0_MS) / 1000)) s"
fi

# ---------------------------------------------------------------- queue
# CUDA programs: resolved (or built) once, here, not by concurrent lanes.
for c in $CASES; do
	case $c in
	mt_streams | lazy_stress | nvtx_ranges | profiler_range)
		b=$(cbin "$c") && CBIN[$c]=$b
		log "binary $c: ${CBIN[$c]:-none}"
		;;
	esac
done
# Cases by expected cost, largest first (EST x processes); their warm-ups
# and references first, then the traced runs rep by rep, so that the long
# cases' runs spread over the lanes.
mkdir -p "$WORK/state"
order=$(for c in $CASES; do
	if case_def "$c" >/dev/null 2>&1; then
		echo "$((EST * (1 + 4 * WARM + REPS * NMODES))) $c"
	else
		echo "0 $c"
	fi
done | sort -k1,1nr -k2,2 | awk '{ print $2 }')
total=0
: >"$WORK/jobs"
for c in $order; do
	case_def "$c" >/dev/null 2>&1
	rc=$?
	if [ "$rc" -eq 2 ]; then
		row "$c" - - - - - - - - "unknown case" "ERROR (unknown case)"
		continue
	elif [ "$rc" -ne 0 ]; then
		row "$c" - - - - - - - - "no binary" "ERROR (not built)"
		continue
	fi
	[ "$WARM" = 1 ] && echo "$c warmup - 0" >>"$WORK/jobs"
	echo "$c ref - 0" >>"$WORK/jobs"
	total=$((total + EST * (1 + 4 * WARM + REPS * NMODES)))
done
for ((r = 1; r <= REPEAT; r++)); do
	for c in $order; do
		case_def "$c" >/dev/null 2>&1 || continue
		[ "$r" -le "$REPS" ] || continue
		for mode in $MODES; do
			echo "$c traced $mode $r" >>"$WORK/jobs"
		done
	done
done
log "queue: $(wc -l <"$WORK/jobs") runs, ~${total} s of work expected, ~$((total / LANES)) s on $LANES lanes"

# ---------------------------------------------------------------- lanes
lane_pids=()
for ((i = 0; i < LANES; i++)); do
	(
		LANE="L$i"
		worker
	) &
	lane_pids+=($!)
done
# The guard: lanes still running 150 s after the budget's end are stopped,
# with the programs they had started.
while :; do
	alive=0
	for p in "${lane_pids[@]}"; do
		kill -0 "$p" 2>/dev/null && alive=1
	done
	[ "$alive" = 0 ] && break
	now_ms
	if [ "$NOW_MS" -gt $((T_END_MS + 150000)) ]; then
		log "lanes still running 150 s after TIME_BUDGET: stopping them"
		for f in "$WORK"/active/*; do
			[ -f "$f" ] && kill_session "$(cat "$f")"
		done
		for p in "${lane_pids[@]}"; do
			kill -9 "$p" 2>/dev/null
		done
		echo "guard" >"$WORK/guard_fired"
		break
	fi
	sleep 1
done
for p in "${lane_pids[@]}"; do
	wait "$p" 2>/dev/null
done

# stop_collector PID: SIGINT, 5 s to finish, then SIGKILL.
stop_collector()
{
	kill -INT "$1" 2>/dev/null
	for i in $(seq 1 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

if [ -n "$COLL_PID" ]; then
	stop_collector "$COLL_PID"
	log "collector: $(tail -n 1 "$WORK/collector.err")"
	log "collector: $(grep -c '^disconnect' "$WORK/collector.out") disconnects, $(grep '^disconnect' "$WORK/collector.out" | grep -c -v 'missing frames 0') with missing frames"
	rm -rf "${SOCKDIR:?}"
fi

if [ -n "$LIVE_PID" ]; then
	COLUMNS=160 "$GAPTRACE" top --once --socket "$LSOCK" >"$WORK/live.top" 2>&1 || true
	stop_collector "$LIVE_PID"
	log "live collector: $(tail -n 1 "$WORK/live.err")"
	rm -rf "${LSOCKDIR:?}"
fi

# ---------------------------------------------------------------- results
# Jobs the lanes never took (stopped by the guard) are rows too.
if [ -s "$WORK/jobs" ]; then
	while read -r c k mode rep; do
		[ "$k" = traced ] || mode=$([ "$k" = warmup ] && echo warm-up || echo untraced)
		row "$c" "$mode" "$rep" - - - - - - "-" "SKIP (not run: lanes stopped)"
	done <"$WORK/jobs"
fi
if [ -f "$WORK/guard_fired" ]; then
	row guard - 0 - - - - - - "lanes stopped" "FAIL (suite overran TIME_BUDGET + 150 s)"
fi
RES="$WORK/torture.results.tsv"
result_header "${HEADER[@]}"
LC_ALL=C sort -t $'\t' -k1,1 "$WORK/rows.tsv" 2>/dev/null | cut -f2- >>"$RES"

log "-- packing the runs' logs (traces only of failed runs, small ones)"
P="$WORK/torture"
mkdir -p "$P"
cp "$RES" "$P/results.tsv"
cp "$WORK/collector.out" "$WORK/collector.err" "$P/" 2>/dev/null
ntr=0
for d in "$WORK"/runs/*; do
	[ -d "$d" ] || continue
	n=$(basename "$d")
	q="$P/$n"
	mkdir -p "$q"
	for f in cmd stdout same.txt check.txt counts.json cap.status cap.stdout cap.stderr \
		threads.txt stacks.txt leftover; do
		[ -f "$d/$f" ] && cp "$d/$f" "$q/"
	done
	cp "$d"/fallback.*.gtrace "$q/" 2>/dev/null
	[ -f "$d/stderr" ] && tail -n 300 "$d/stderr" >"$q/stderr.tail"
	if grep -q -E "^${n%%.*}"$'\t'"$(echo "$n" | cut -d. -f2)"$'\t'"$(echo "$n" | cut -d. -f3)"$'\t.*\tFAIL' "$RES" &&
		[ "$ntr" -lt 3 ]; then
		sz=$(du -sk "$d/trace" 2>/dev/null | cut -f1)
		if [ -n "$sz" ] && [ "$sz" -le 4096 ]; then
			cp -r "$d/trace" "$q/" && ntr=$((ntr + 1))
		fi
	fi
done
pack torture "$P"

{
	echo
	echo "== torture: every run"
	$GTCHECK table "$RES"
	echo
	echo "== torture: per case and mode (secs: wall time of a run, in its lane; x_untraced: traced/untraced)"
	$GTCHECK torture-summary "$RES"
	nf=$(tail -n +2 "$RES" | awk -F'\t' '$NF ~ /^(FAIL|ERROR|TIMEOUT)/' | wc -l)
	if [ "$nf" -gt 0 ]; then
		echo
		echo "== torture: the $nf failed runs (first 20; details in torture.tar.gz, one folder per run)"
		tail -n +2 "$RES" | awk -F'\t' '$NF ~ /^(FAIL|ERROR|TIMEOUT)/ { print "  " $1 "." $2 "." $3 ": " $NF "  [" $6 "]" }' | head -n 20
	fi
	now_ms
	echo
	echo "suite wall time: $(((NOW_MS - T0_MS) / 1000)) s (TIME_BUDGET ${TIME_BUDGET} s, LANES ${LANES}, REPEAT ${REPEAT})"
} | tee -a "$LOG"
pass=$(tail -n +2 "$RES" | awk -F'\t' '$NF ~ /^(PASS|ok)/' | wc -l)
fail=$(tail -n +2 "$RES" | awk -F'\t' '$NF ~ /^(FAIL|ERROR|TIMEOUT)/' | wc -l)
skip=$(tail -n +2 "$RES" | awk -F'\t' '$NF ~ /^SKIP/' | wc -l)
hang=$(tail -n +2 "$RES" | awk -F'\t' '$NF ~ /HANG/' | wc -l)
echo "hangs: $hang" | tee -a "$LOG"
echo "torture: $pass passed, $fail failed, $skip skipped" | tee -a "$LOG"
[ "$fail" -eq 0 ]
