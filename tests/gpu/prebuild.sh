#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/prebuild.sh: compile the CUDA examples that tests/gpu/torture.sh
# runs into $BIN_DIR (default .gpu/bin, ignored by git), on a machine with
# nvcc but no GPU, so that the H200 run spends no device time on nvcc
# (lazy_stress alone, 384 template kernels, takes ~1 min). Carry the folder
# to the device (run's carry: [".gpu/bin"]); torture.sh uses it, and builds
# whatever is missing there with nvcc itself.
#
#   bash tests/gpu/prebuild.sh [example...]   # default: the torture suite's four
# Variables: BIN_DIR (.gpu/bin), CUDA_HOME (/usr/local/cuda), NVCC, ARCH (sm_90).
# A binary newer than its source and gt_example.h is kept.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
BIN_DIR=${BIN_DIR:-.gpu/bin}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo "$CUDA_HOME/bin/nvcc")}
ARCH=${ARCH:-sm_90}
list=("$@")
[ "${#list[@]}" -gt 0 ] || list=(lazy_stress mt_streams nvtx_ranges profiler_range)
mkdir -p "$BIN_DIR"

pids=()
names=()
for ex in "${list[@]}"; do
	src=examples/cuda/$ex.cu
	out=$BIN_DIR/$ex
	if [ ! -f "$src" ]; then
		echo "prebuild: no $src" >&2
		exit 2
	fi
	if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt examples/cuda/gt_example.h ]; then
		echo "prebuild: $out is up to date"
		continue
	fi
	extra=()
	[ "$ex" = driver_launch ] && extra=(-lcuda)
	echo "prebuild: $NVCC -arch=$ARCH -O2 -std=c++17 -o $out $src ${extra[*]}"
	"$NVCC" -arch="$ARCH" -O2 -std=c++17 -o "$out" "$src" "${extra[@]}" >"$out.log" 2>&1 &
	pids+=($!)
	names+=("$ex")
done
fail=0
for i in "${!pids[@]}"; do
	if wait "${pids[$i]}"; then
		rm -f "$BIN_DIR/${names[$i]}.log"
		echo "prebuild: built $BIN_DIR/${names[$i]}"
	else
		echo "prebuild: nvcc failed for ${names[$i]}:" >&2
		tail -n 20 "$BIN_DIR/${names[$i]}.log" >&2
		fail=1
	fi
done
ls -l "$BIN_DIR"
exit "$fail"
