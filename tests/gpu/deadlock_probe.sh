#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/deadlock_probe.sh: find the lock cycle behind the generate() hang
# of gaptrace 0.1 (issue 10), and try the candidate changes against it.
#
# Each case runs a program injected with a given libgaptrace_inject.so and
# environment, under a watchdog. A run that outlives HANG_S is a hang: its
# stacks (cuda-gdb), its lock table (tests/gpu/lockwit, when preloaded) and
# its threads' kernel wait channels are saved, then it is killed.
#
#   OLD=.gpu/old/inject/libgaptrace_inject.so EXP=.gpu/exp/inject/libgaptrace_inject.so \
#   GT=.gpu/old/tools/gaptrace bash tests/gpu/deadlock_probe.sh
# Results: $OUT/deadlock_probe.txt (+ the stacks, packed).
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
EXP=$(realpath "${EXP:-.gpu/exp/inject/libgaptrace_inject.so}")
GT=$(realpath "${GT:-.gpu/old/tools/gaptrace}")
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
log "OLD=$OLD EXP=$EXP HANG_S=$HANG_S"

GEN=("$PY" examples/torch/hf_generate.py --rounds 6 --new-tokens 48)
log "-- untraced generate"
probe gen.untraced - "" "${GEN[@]}"
HANG_S=$(awk -v s="$LAST_SECS" 'BEGIN { h = 3 * s; if (h < 25) h = 25; printf "%d", h }')
log "   watchdog for generate: ${HANG_S}s (3x untraced, at least 25)"

log "-- gaptrace 0.1 (periodic cuptiActivityFlushAll(0) from our thread) + lock witness"
for i in 1 2; do
	probe "gen.old.lw.$i" "$OLD" "LD_PRELOAD=$W/lockwit.so LOCKWIT_DIR=$W/lw" "${GEN[@]}"
	[ "$LAST" = HANG ] && break
done

log "-- no flush from our thread; CUPTI's worker flushes (cuptiActivityFlushPeriod 200 ms)"
for i in 1 2 3; do
	probe "gen.noflush.$i" "$EXP" "GAPTRACE_X_NOFLUSH=1 GAPTRACE_X_PERIOD=200 GAPTRACE_X_STATS=1" "${GEN[@]}"
done

STACKS=0
log "-- old flush, CUPTI profiling buffers in pinned host memory"
probe gen.pinned.1 "$EXP" "GAPTRACE_X_PINNED=1 GAPTRACE_X_STATS=1" "${GEN[@]}"

log "-- old flush, per-thread activity buffers off"
probe gen.global.1 "$EXP" "GAPTRACE_X_PERTHREAD=0 GAPTRACE_X_STATS=1" "${GEN[@]}"

STACKS=1
LAZY=(.gpu/bin/lazy_stress)
log "-- lazy-loading stress (CUDA C, 3 threads)"
HANG_S=60
probe lazy.untraced - "" "${LAZY[@]}"
HANG_S=$(awk -v s="$LAST_SECS" 'BEGIN { h = 3 * s; if (h < 20) h = 20; printf "%d", h }')
log "   watchdog for lazy_stress: ${HANG_S}s"
for i in 1 2; do
	probe "lazy.old.$i" "$OLD" "LD_PRELOAD=$W/lockwit.so LOCKWIT_DIR=$W/lw" "${LAZY[@]}"
	[ "$LAST" = HANG ] && break
done
probe lazy.noflush.1 "$EXP" "GAPTRACE_X_NOFLUSH=1 GAPTRACE_X_PERIOD=200 GAPTRACE_X_STATS=1" "${LAZY[@]}"

JAX=("$PY" examples/jax/jit_loop.py --steps 300)
HANG_S=120
log "-- JAX: buffers (old flush, stats)"
probe jax.old.stats "$EXP" "GAPTRACE_X_STATS=1" "${JAX[@]}"
probe jax.noflush.stats "$EXP" "GAPTRACE_X_NOFLUSH=1 GAPTRACE_X_PERIOD=200 GAPTRACE_X_STATS=1 GAPTRACE_BUFFERS=256 GAPTRACE_BUFFER_KB=1024" "${JAX[@]}"

log "== summary"
printf '%s\n' "${RES[@]}" | tee -a "$LOG"
tar -C "$W" --exclude='*.gtrace' -czf "$OUT/deadlock_probe_cases.tar.gz" cases 2>/dev/null
ls -la "$OUT"
