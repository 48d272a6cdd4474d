#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/deadlock_probe.sh: try to reproduce the generate() hang of
# gaptrace 0.1 (issue 10) and the same workloads under the current library.
#
# Each case runs a program injected with a given libgaptrace_inject.so under
# a watchdog (3x the untraced time). A run that outlives it is a hang: its
# stacks (cuda-gdb), its lock table (tests/gpu/lockwit, when preloaded) and
# its threads' kernel wait channels are saved, then it is killed.
#
#   NEW=.gpu/new/inject/libgaptrace_inject.so GT=.gpu/new/tools/gaptrace \
#   bash tests/gpu/deadlock_probe.sh
# NEW is the current library: a longer generate() with CUPTI's profiling
# buffers in device memory (GAPTRACE_CUPTI_PINNED=0, under the lock witness)
# and in pinned host memory (the default), and the lazy-loading stress.
# (Run 3 also had OLD, 0.1's library built from commit 81b0d14.)
# Results: $OUT/deadlock_probe.txt and $OUT/deadlock_probe_cases.tar.gz.
# PROBE_BUDGET (seconds, default 170) stops it before the device's limit.
# DEVBUF=0 skips the device-memory case (it hangs, by design of the probe:
# runs 3 and 4 have its evidence).
# (Run 1, tests/gpu/results/deadlock_probe.run1.txt, used an experimental
# build with GAPTRACE_X_* switches for the flush variants; they are gone.)
set -u
OUT=$(realpath -m "${OUT:-out}")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
mkdir -p "$OUT"
W=/tmp/dprobe
rm -rf "$W" && mkdir -p "$W/cases"
LOG="$OUT/deadlock_probe.txt"
: >"$LOG"
PY=${PYTHON:-python3}
HANG_S=${HANG_S:-45}
OLD=$(realpath "${OLD:-.gpu/old/inject/libgaptrace_inject.so}")
NEW=$(realpath "${NEW:-.gpu/new/inject/libgaptrace_inject.so}")
GT=$(realpath "${GT:-.gpu/new/tools/gaptrace}")
BUDGET=${PROBE_BUDGET:-170}
T_START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T_START))); }
export PYTHONUNBUFFERED=1
log() { echo "[$(date +%T)] $*" | tee -a "$LOG"; }
gcc -O2 -shared -fPIC -o "$W/lockwit.so" tests/gpu/lockwit/lockwit.c -ldl -pthread 2>>"$LOG" ||
	log "lockwit build failed"
RES=()

# probe NAME SO "ENV..." CMD...: one run; SO "-" = untraced.
probe()
{
	local name=$1 so=$2 envs=$3
	shift 3
	local d="$W/cases/$name"
	mkdir -p "$d"
	local pre=()
	[ "$so" != "-" ] && pre=(CUDA_INJECTION64_PATH="$so" GAPTRACE_OUTPUT="$d/%p.gtrace" GAPTRACE_DEBUG=1)
	# shellcheck disable=SC2086
	setsid bash -c 'echo $$ >"$0/pid"; exec env "$@"' "$d" "${pre[@]}" $envs "$@" \
		>"$d/stdout" 2>"$d/stderr" &
	local bg=$! t0 st="ok" pid
	t0=$(date +%s.%N)
	sleep 0.2
	pid=$(cat "$d/pid" 2>/dev/null)
	while kill -0 "$bg" 2>/dev/null; do
		if awk -v a="$t0" -v b="$(date +%s.%N)" -v h="$HANG_S" 'BEGIN { exit !(b - a > h) }'; then
			st="HANG"
			break
		fi
		sleep 0.25
	done
	local secs
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	if [ "$st" = HANG ]; then
		log "  $name: HANG after ${secs}s (pid $pid): collecting evidence"
		for t in /proc/"$pid"/task/*; do
			echo "$(basename "$t") $(cat "$t/comm") wchan=$(cat "$t/wchan" 2>/dev/null) $(awk '{print "state="$3}' "$t/stat")"
		done >"$d/threads.txt" 2>&1
		ls "$W/lw"/*.lw >/dev/null 2>&1 && "$PY" tests/gpu/lockwit/lockwit_dump.py "$W/lw/$pid.lw" >"$d/lockwit.txt" 2>&1
		if [ "${STACKS:-1}" = 1 ]; then
			timeout 90 cuda-gdb -p "$pid" -batch -ex "set pagination off" \
				-ex "thread apply all bt" >"$d/stacks.txt" 2>&1
			log "    stacks: $(grep -c '^Thread' "$d/stacks.txt") threads"
		fi
		kill -9 -- "-$pid" 2>/dev/null
		wait "$bg" 2>/dev/null
		sed -n '1,120p' "$d/lockwit.txt" 2>/dev/null | tee -a "$LOG"
	else
		wait "$bg"
		local rc=$?
		[ "$rc" -ne 0 ] && st="exit $rc"
		log "  $name: $st in ${secs}s"
	fi
	grep -h -E 'gaptrace: X' "$d/stderr" | head -6 | sed 's/^/    /' | tee -a "$LOG"
	grep -h -E 'gaptrace:' "$d/stderr" | grep -v -E 'gaptrace: X|gaptrace: done' | head -4 |
		sed 's/^/    /' | tee -a "$LOG"
	grep -h -E '^\{' "$d/stdout" | cut -c1-300 | sed 's/^/    out| /' | tee -a "$LOG"
	for f in "$d"/*.gtrace; do
		[ -f "$f" ] || continue
		"$GT" dump "$f" 2>/dev/null | awk '$1=="kernel"{k++} $1=="loss"{print "    "$0} /^# frames=/{print "    "$0} END{print "    kernels="k+0}' | tee -a "$LOG"
	done
	RES+=("$(printf '%-28s %-10s %6ss' "$name" "$st" "$secs")")
	LAST=$st
	LAST_SECS=$secs
}

log "== machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
log "OLD=$OLD NEW=$NEW budget ${BUDGET}s"

GEN=("$PY" examples/torch/hf_generate.py --rounds 12 --new-tokens 96)
log "-- a longer generate() (growing prompts and caches)"
HANG_S=120
probe gen.untraced - "" "${GEN[@]}"
HANG_S=$(awk -v s="${LAST_SECS:-30}" 'BEGIN { h = 3 * s; if (h < 25) h = 25; printf "%d", h }')
log "   watchdog: ${HANG_S}s"
# CUPTI's profiling buffers in device memory (CUPTI's default since CUDA
# 12.0.1): run 3 hung here with no flush of ours. With the lock witness.
[ "${DEVBUF:-1}" = 1 ] && probe gen.devbuf.lw.1 "$NEW" "GAPTRACE_CUPTI_PINNED=0 LD_PRELOAD=$W/lockwit.so LOCKWIT_DIR=$W/lw" "${GEN[@]}"
# ... and in pinned host memory (gaptrace's default).
for i in 1 2 3; do
	[ "$(left)" -gt $((HANG_S + 40)) ] || break
	probe "gen.pinned.$i" "$NEW" "" "${GEN[@]}"
done

LAZY=(.gpu/bin/lazy_stress --malloc-churn 1)
log "-- lazy-loading stress with allocation churn (CUDA C, 4 threads)"
HANG_S=30
for i in 1 2; do
	[ "$(left)" -gt 45 ] || break
	probe "lazy.pinned.$i" "$NEW" "" "${LAZY[@]}"
done

log "== summary"
printf '%s\n' "${RES[@]}" | tee -a "$LOG"
tar -C "$W" --exclude='*.gtrace' -czf "$OUT/deadlock_probe_cases.tar.gz" cases 2>/dev/null
ls -la "$OUT"
