#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/jax_crash.sh: is the abort of examples/jax/host_step.py under
# gaptrace (XLA bfc_allocator checks, glibc "double free", SIGSEGV; about 1
# run in 3 with the default kinds, never with -k default,-nvtx: run 13)
# ours or CUPTI's? The same program under tests/gpu/cupti_min.c (CUPTI alone,
# the same activity kinds, no code of ours) and under gaptrace, interleaved.
#   bash tests/gpu/jax_crash.sh                # -> $OUT/jax_crash.txt
# Variables: VARIANTS (the list below), N (runs per variant, 6), LANES (2:
# runs in parallel), MEMFRAC (XLA_PYTHON_CLIENT_MEM_FRACTION of each run,
# 0.4; empty: JAX's default preallocation, as in run 13), PREALLOC (empty;
# "false": XLA_PYTHON_CLIENT_PREALLOCATE=false, as capture_parity.sh and
# torture.sh run JAX: the abort of run 10), SECONDS_RUN (host_step
# --seconds, 6), CMIN (the built library; built with cc when missing).
# Variant gt_gdb: gaptrace's file mode under cuda-gdb (batch): when the
# program dies, every thread's stack lands in RUN.stdout. Variant nvtx_null:
# an NVTX tool that records nothing (tests/gpu/nvtx_null.c, NVNULL; built
# with cc when missing), no CUPTI, no gaptrace: does a tool behind XLA's
# NVTX calls alone make the abort?
source "$(dirname "$0")/lib.sh"
gt_init jax_crash
N=${N:-6}
LANES=${LANES:-2}
MEMFRAC=${MEMFRAC-0.4}
SECONDS_RUN=${SECONDS_RUN:-6}
CMIN=${CMIN:-.gpu/bin/cupti_min.so}
VARIANTS=${VARIANTS:-untraced gt_default gt_nonvtx cmin_all cmin_marker cmin_nomarker}
CUPTI_DIR=""
for d in "$CUDA_HOME/targets/x86_64-linux/lib" "$CUDA_HOME/extras/CUPTI/lib64"; do
	[ -e "$d/libcupti.so.13" ] && CUPTI_DIR=$d && break
done
log "libcupti: $CUPTI_DIR"
if [ ! -f "$CMIN" ]; then
	mkdir -p "$(dirname "$CMIN")"
	run_logged cmin_build cc -O2 -shared -fPIC -I"$CUDA_HOME/include" tests/gpu/cupti_min.c \
		-o "$CMIN" -L"$CUPTI_DIR" -lcupti -Wl,-rpath,"$CUPTI_DIR"
fi
CMIN=$(realpath "$CMIN")
NVNULL=${NVNULL:-.gpu/bin/nvtx_null.so}
if [ ! -f "$NVNULL" ]; then
	mkdir -p "$(dirname "$NVNULL")"
	run_logged nvnull_build cc -O2 -shared -fPIC -I"$CUDA_HOME/include" tests/gpu/nvtx_null.c -o "$NVNULL"
fi
NVNULL=$(realpath "$NVNULL")
NVTXI="NVTX_INJECTION64_PATH=$CUPTI_DIR/libcupti.so.13"
PROG=(python3 examples/jax/host_step.py --seconds "$SECONDS_RUN")

# cmd_of VARIANT RUNDIR: the command line (for env) of a variant.
cmd_of()
{
	case $1 in
	untraced) echo "${PROG[*]}" ;;
	gt_default) echo "$GAPTRACE run -q -o $2 -- ${PROG[*]}" ;;
	gt_nonvtx) echo "$GAPTRACE run -q -k default,-nvtx -o $2 -- ${PROG[*]}" ;;
	gt_kernel) echo "$GAPTRACE run -q -k kernel -o $2 -- ${PROG[*]}" ;;
	gt_nolat) echo "$GAPTRACE run -q -k default,-latency -o $2 -- ${PROG[*]}" ;;
	gt_noapi) echo "$GAPTRACE run -q -k default,-runtime,-driver -o $2 -- ${PROG[*]}" ;;
	gt_nohold) echo "GAPTRACE_HOLD_CUPTI=0 $GAPTRACE run -q -o $2 -- ${PROG[*]}" ;;
	cmin_lat) echo "CUDA_INJECTION64_PATH=$CMIN $NVTXI CMIN_LATENCY=1 ${PROG[*]}" ;;
	cmin_all) echo "CUDA_INJECTION64_PATH=$CMIN $NVTXI ${PROG[*]}" ;;
	cmin_marker) echo "CUDA_INJECTION64_PATH=$CMIN $NVTXI CMIN_KINDS=marker,name ${PROG[*]}" ;;
	cmin_nomarker)
		echo "CUDA_INJECTION64_PATH=$CMIN $NVTXI CMIN_KINDS=kernel,memcpy,memset,sync,runtime,driver,overhead ${PROG[*]}"
		;;
	nvtx_null) echo "NVTX_INJECTION64_PATH=$NVNULL ${PROG[*]}" ;;
	gt_gdb)
		echo "cuda-gdb -q -batch -x $WORK/gdb.cmds --args env CUDA_INJECTION64_PATH=$INJECT GAPTRACE_OUTPUT=$2.gtrace ${PROG[*]}"
		;;
	*) return 1 ;;
	esac
}

# one VARIANT I: run it once, print "variant i rc secs first-error-line".
one()
{
	local v=$1 i=$2 id="$1.$2" t0 t1 rc
	local c
	c=$(cmd_of "$v" "$WORK/$id.d") || return 0
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	timeout -k 5 90 env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
		${MEMFRAC:+XLA_PYTHON_CLIENT_MEM_FRACTION=$MEMFRAC} \
		${PREALLOC:+XLA_PYTHON_CLIENT_PREALLOCATE=$PREALLOC} \
		$c >"$WORK/$id.stdout" 2>"$WORK/$id.stderr"
	rc=$?
	t1=$(date +%s.%N)
	local err
	err=$(cat "$WORK/$id.stderr" "$WORK/$id.stdout" |
		grep -m1 -E 'Check failed|double free|corruption|Segmentation|signal|Aborted|free\(\)' |
		cut -c1-160)
	# under gdb the program's death is not gdb's exit status
	[ "$v" = gt_gdb ] && [ "$rc" -eq 0 ] && grep -q 'received signal SIG' "$WORK/$id.stdout" && rc=99
	printf '%s\t%s\t%s\t%.1f\t%s\n' "$v" "$i" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$err"
}

cat >"$WORK/gdb.cmds" <<'GDB'
set pagination off
set print thread-events off
handle SIGUSR1 SIGUSR2 SIGPIPE SIGALRM SIGPROF SIGCHLD nostop noprint pass
run
info threads
thread apply all bt 40
GDB
result_header variant run rc secs error
jobs_list=()
for i in $(seq "$N"); do
	for v in $VARIANTS; do
		jobs_list+=("$v $i")
	done
done
export -f one cmd_of
export WORK GAPTRACE INJECT CMIN NVNULL NVTXI SECONDS_RUN MEMFRAC PREALLOC
PROG_S="${PROG[*]}"
export PROG_S
printf '%s\n' "${jobs_list[@]}" |
	xargs -P "$LANES" -L 1 bash -c 'PROG=($PROG_S); one "$0" "$1"' >>"$RES"
sed 's/^/  /' "$RES" | tee -a "$LOG"
log "aborts per variant (rc not 0):"
awk -F'\t' 'NR > 1 { n[$1]++; if ($3 != 0) bad[$1]++ } END { for (v in n) printf "  %-14s %d of %d\n", v, bad[v] + 0, n[v] }' "$RES" |
	sort | tee -a "$LOG"
for f in "$WORK"/gt_gdb.*.stdout; do
	[ -f "$f" ] && grep -q 'received signal SIG' "$f" && cp "$f" "$OUT/" &&
		log "  $(basename "$f"): the stacks at the signal, in \$OUT"
done
for f in "$WORK"/cmin_*.stderr; do
	[ -f "$f" ] && grep -m1 '^cupti_min: [0-9]' "$f" | sed "s|^|  $(basename "$f"): |" | tee -a "$LOG"
done
