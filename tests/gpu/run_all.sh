#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/run_all.sh [STAGE...]: run GPU-machine stages in order and end
# with every stage's summary table (so the last lines of the output say it
# all). Stages: build validate crosscheck diagnose record overhead realworld.
# Default: build validate crosscheck (~5 min); then, in a second command
# (each device command may run at most 10 min):
#   tests/gpu/run_all.sh diagnose record      (~4.5 min)
#   tests/gpu/run_all.sh overhead             (~5 min)
#   tests/gpu/run_all.sh realworld            (~7 min, TIME_BUDGET-bounded)
# Results: $OUT (default ./out): one NAME.txt per stage + a few .tar.gz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=$(realpath -m "${OUT:-out}")
export OUT
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
cd "$root" || exit 1
declare -A name=([build]=build [validate]=validate_inject [crosscheck]=crosscheck_torch
	[diagnose]=diagnose_all [record]=record_traces [overhead]=overhead [realworld]=realworld)
[ $# -gt 0 ] || set -- build validate crosscheck
summary=()
for s in "$@"; do
	t0=$(date +%s)
	echo "######## stage $s ($(date +%T))"
	case $s in
	build) bash tests/gpu/build.sh ;;
	validate) bash tests/gpu/validate_inject.sh ;;
	crosscheck) "$PYTHON" tests/gpu/crosscheck_torch.py ;;
	diagnose) bash tests/gpu/diagnose_all.sh ;;
	record) bash tests/gpu/record_traces.sh ;;
	overhead) bash bench/overhead/run_overhead.sh ;;
	realworld) bash bench/realworld/run_realworld.sh ;;
	*) echo "unknown stage '$s' (build validate crosscheck diagnose record overhead realworld)"; continue ;;
	esac
	rc=$?
	summary+=("$(printf '%-11s exit %-3s %4ss  %s' "$s" "$rc" "$(($(date +%s) - t0))" \
		"$(grep -E '^(\[[0-9:]+\] )?[a-z_]+: [0-9]+ passed, [0-9]+ failed' "$OUT/${name[$s]}.txt" 2>/dev/null | tail -n 1)")")
done
echo
echo "######## summaries"
for s in "$@"; do
	f="$OUT/${name[$s]:-none}.txt"
	[ -f "$f" ] && sed -n '/== [a-z_]* summary/,$p' "$f"
done
echo
echo "######## stages"
printf '%s\n' "${summary[@]}"
ls -la "$OUT"
