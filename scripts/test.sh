#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite: installs missing packages, builds, runs every ctest
# suite (the formatting check, ctest `style`, among them: every C file as
# .clang-format says, with clang-format 14), then builds the CPU parts with
# ASan+UBSan and runs them again.
# Exit status is non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (RelWithDebInfo)"
cmake -S . -B build -DGAPTRACE_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
echo "== ctest"
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "${GAPTRACE_SKIP_ASAN:-0}" != 1 ]; then
	# gcc: its shared sanitizer runtime also serves libgaptrace_inject.so
	# (clang's static one leaves the .so's sanitizer symbols undefined).
	# The fuzz targets (tests/fuzz, clang) cover UBSan's pointer-overflow check.
	echo "== build (ASan+UBSan)"
	CC=gcc cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGAPTRACE_SANITIZE="address;undefined" \
		-DGAPTRACE_WERROR=ON >/dev/null
	cmake --build build-asan -j"$jobs"
	echo "== ctest (ASan+UBSan)"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi
echo "== all tests passed"
