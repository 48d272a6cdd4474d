# SPDX-License-Identifier: MIT
# tests/gpu/lib.sh: sourced by the scripts in tests/gpu/ (and bench/overhead,
# bench/realworld).
#
# Conventions of every script:
#   - runs from the repository root (it cd's there itself);
#   - never stops at the first failure: each step is logged with its exit
#     status and time, and a summary table ends the run;
#   - writes results to $OUT (default ./out): one NAME.txt (log + summary) and
#     at most one NAME.tar.gz per script, flat (the device returns <= 8 files);
#     scratch (traces, stdout of each run) goes to $WORK (default /tmp/...).
# Paths come from variables, all overridable from the environment:
#   BUILD (build-gpu), GAPTRACE ($BUILD/tools/gaptrace),
#   INJECT ($BUILD/inject/libgaptrace_inject.so), PYTHON (python3),
#   CUDA_HOME (/usr/local/cuda), NVCC, STEP_TIMEOUT (seconds per run, 180),
#   FLOOR and CUPTI_LIB (floor_lib).
set -u

_gt_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GT_ROOT=$(cd "$_gt_here/../.." && pwd)
# Resolve OUT before changing directory so a relative $OUT means the caller's.
OUT=$(realpath -m "${OUT:-out}")
cd "$GT_ROOT" || exit 1
mkdir -p "$OUT"

BUILD=${BUILD:-build-gpu}
GAPTRACE=${GAPTRACE:-$BUILD/tools/gaptrace}
INJECT=${INJECT:-$BUILD/inject/libgaptrace_inject.so}
PYTHON=${PYTHON:-python3}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo "$CUDA_HOME/bin/nvcc")}
STEP_TIMEOUT=${STEP_TIMEOUT:-180}
GTCHECK="$PYTHON $GT_ROOT/tests/gpu/gtcheck.py"
export GAPTRACE

GT_NAME=""
LOG=/dev/null
RES=/dev/null
WORK=${WORK:-}
RC=0
SECS=0
# shellcheck disable=SC2034 # MODE is read by the scripts that source this file
MODE=""

# gt_init NAME: start a script's log ($OUT/NAME.txt) and results table.
gt_init()
{
	GT_NAME=$1
	WORK=${WORK:-/tmp/gaptrace-gpu.$GT_NAME.$$}
	mkdir -p "$WORK"
	LOG="$OUT/$GT_NAME.txt"
	RES="$WORK/$GT_NAME.results.tsv"
	: >"$LOG"
	: >"$RES"
	log "== $GT_NAME  (repo $GT_ROOT, commit $(git -C "$GT_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown))"
	log "OUT=$OUT WORK=$WORK BUILD=$BUILD GAPTRACE=$GAPTRACE INJECT=$INJECT PYTHON=$PYTHON"
}

log()
{
	echo "[$(date +%T)] $*" | tee -a "$LOG"
}

# A line of the results table: result COL1 COL2 ... (tab-separated).
result()
{
	local IFS=$'\t'
	echo "$*" >>"$RES"
}

# result_header COL1 COL2 ...: first line of the results table.
result_header()
{
	local IFS=$'\t'
	echo "$*" >"$RES"
}

# run_logged ID CMD...: run CMD with a timeout; stdout -> $WORK/ID.stdout,
# stderr -> $WORK/ID.stderr; sets RC and SECS; logs a line (and the stderr
# tail when it failed). Never fails itself.
run_logged()
{
	local id=$1
	shift
	local t0 t1
	t0=$(date +%s.%N)
	timeout -k 10 "$STEP_TIMEOUT" "$@" >"$WORK/$id.stdout" 2>"$WORK/$id.stderr"
	RC=$?
	t1=$(date +%s.%N)
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
		log "  $id: TIMEOUT after ${STEP_TIMEOUT}s: $*"
	else
		log "  $id: exit $RC in ${SECS}s"
	fi
	if [ "$RC" -ne 0 ]; then
		log "  $id: command: $*"
		tail -n 15 "$WORK/$id.stderr" | sed 's/^/    stderr| /' | tee -a "$LOG"
	fi
	return 0
}

# have_cmd SUB: does the gaptrace CLI have subcommand SUB?
have_cmd()
{
	[ -x "$GAPTRACE" ] && "$GAPTRACE" "$1" --help >/dev/null 2>&1
}

# ex_bin NAME: path of a built CUDA example; builds it with plain nvcc into
# $BUILD/examples-nvcc/ when the CMake build does not have it. Prints the
# path; returns 1 (and logs why) when it cannot.
ex_bin()
{
	local name=$1 src="examples/cuda/$1.cu" dir="$BUILD/examples-nvcc"
	if [ -x "$BUILD/examples/$name" ]; then
		echo "$BUILD/examples/$name"
		return 0
	fi
	if [ -x "$dir/$name" ] && [ "$dir/$name" -nt "$src" ]; then
		echo "$dir/$name"
		return 0
	fi
	mkdir -p "$dir"
	local extra=""
	[ "$name" = driver_launch ] && extra="-lcuda"
	if "$NVCC" -arch=sm_90 -O2 -std=c++17 -o "$dir/$name" "$src" $extra >"$dir/$name.log" 2>&1; then
		echo "$dir/$name"
		return 0
	fi
	log "  nvcc failed for $src:" >&2
	tail -n 10 "$dir/$name.log" | sed 's/^/    nvcc| /' | tee -a "$LOG" >&2
	return 1
}

# need_build: build gaptrace (tests/gpu/build.sh) when the CLI is missing,
# e.g. on a fresh machine.
need_build()
{
	if [ ! -x "$GAPTRACE" ]; then
		log "no $GAPTRACE: running tests/gpu/build.sh first"
		WORK="" bash "$GT_ROOT/tests/gpu/build.sh" >/dev/null 2>&1
		log "build.sh finished (see $OUT/build.txt)"
	fi
}

# floor_lib: the CUPTI floor library (bench/overhead/libcupti_floor.c) in
# $FLOOR. A FLOOR that names an existing file (a prebuilt library) is used as
# is; otherwise it is built with cc into $FLOOR (default
# $BUILD/bench/libcupti_floor.so) against $CUPTI_LIB (the directory of
# libcupti.so, found under $CUDA_HOME when unset). Returns 1 when there is no
# floor library.
floor_lib()
{
	if [ -n "${FLOOR:-}" ] && [ -f "$FLOOR" ]; then
		log "-- floor: prebuilt $FLOOR"
		return 0
	fi
	FLOOR=${FLOOR:-$BUILD/bench/libcupti_floor.so}
	if [ -z "${CUPTI_LIB:-}" ]; then
		local dir
		for dir in "$CUDA_HOME/targets/x86_64-linux/lib" "$CUDA_HOME/extras/CUPTI/lib64" "$CUDA_HOME/lib64"; do
			if [ -e "$dir/libcupti.so" ]; then
				CUPTI_LIB=$dir
				break
			fi
		done
	fi
	CUPTI_LIB=${CUPTI_LIB:-$CUDA_HOME/lib64}
	log "-- building $FLOOR against $CUPTI_LIB"
	mkdir -p "$(dirname "$FLOOR")"
	run_logged floor_build cc -std=c11 -D_GNU_SOURCE -O2 -shared -fPIC -fvisibility=hidden \
		-Wall -Wextra -I"$CUDA_HOME/include" -I"$CUDA_HOME/extras/CUPTI/include" \
		"$GT_ROOT/bench/overhead/libcupti_floor.c" -o "$FLOOR" \
		-L"$CUPTI_LIB" -lcupti -lpthread -Wl,-rpath,"$CUPTI_LIB"
	[ "$RC" -eq 0 ] && [ -f "$FLOOR" ]
}

# trace_env DIR: environment assignments (for `env`) that inject gaptrace
# into a process and write its trace into DIR/<pid>.gtrace, no collector.
trace_env()
{
	echo "CUDA_INJECTION64_PATH=$(realpath -m "$INJECT")" "GAPTRACE_OUTPUT=$1/%p.gtrace"
}

# record ID DIR CMD...: run CMD traced into DIR: under `gaptrace run -q -o DIR`
# when that command exists, else by injection with GAPTRACE_OUTPUT. Sets
# RC/SECS like run_logged and MODE to "run" or "file".
record()
{
	local id=$1 dir=$2
	shift 2
	rm -rf "$dir"
	if have_cmd run; then
		MODE="run"
		run_logged "$id" "$GAPTRACE" run -q -o "$dir" -- "$@"
	else
		# shellcheck disable=SC2034
		MODE="file"
		mkdir -p "$dir"
		# shellcheck disable=SC2046
		run_logged "$id" env $(trace_env "$dir") "$@"
	fi
}

# pack NAME DIR [MAX_MB]: tar DIR into $OUT/NAME.tar.gz (cap: 15 MB).
pack()
{
	local name=$1 dir=$2 max=${3:-15}
	local tgz="$OUT/$name.tar.gz"
	tar -C "$(dirname "$dir")" -czf "$tgz" "$(basename "$dir")" 2>>"$LOG"
	local sz
	sz=$(stat -c %s "$tgz" 2>/dev/null || echo 0)
	if [ "$sz" -gt $((max * 1024 * 1024)) ]; then
		log "  $tgz is $((sz / 1024)) KiB > ${max} MiB: removed (the device returns <= 16 MiB per file)"
		rm -f "$tgz"
		return 1
	fi
	log "  packed $tgz ($((sz / 1024)) KiB)"
}

# finish: print the results table and the pass/fail line; exit status 0
# when no row says FAIL/ERROR.
finish()
{
	local pass fail
	pass=$(tail -n +2 "$RES" | grep -c -E $'\t(PASS|ok)[^\t]*$' || true)
	fail=$(tail -n +2 "$RES" | grep -c -E $'\t(FAIL|ERROR|TIMEOUT)[^\t]*$' || true)
	{
		echo
		echo "== $GT_NAME summary"
		$GTCHECK table "$RES"
		echo
		echo "$GT_NAME: $pass passed, $fail failed"
	} | tee -a "$LOG"
	[ "$fail" -eq 0 ]
}
