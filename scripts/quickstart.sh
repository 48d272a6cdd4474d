#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job in one command: install what is missing, build gaptrace,
# install it into a local prefix (.local/ in the repository, or
# $GAPTRACE_PREFIX: bin/gaptrace, lib/gaptrace/libgaptrace_inject.so, ...),
# then, with that gaptrace:
#  - on a machine with an NVIDIA GPU: profile an example program with
#    `gaptrace run` and print the diagnosis;
#  - on a machine without one: say so, and analyze a trace recorded on an
#    NVIDIA H200 that ships with the repository.
# It ends with the line that puts gaptrace on your PATH, then what this
# build left out, if anything (the "no" lines of `gaptrace --version`, and
# packages scripts/deps.sh build could not install).
# Usage: scripts/quickstart.sh [EXAMPLE]   (EXAMPLE: a CUDA example name,
# default sync_host_work; see examples/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
example=${1:-sync_host_work}
prefix=${GAPTRACE_PREFIX:-$PWD/.local}
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac
bundled=${GAPTRACE_QUICKSTART_TRACE:-examples/traces/item_metric}
jobs=$(nproc 2>/dev/null || echo 2)

deps_failed=0
if ! scripts/deps.sh build; then
	deps_failed=1
	# A machine without a package mirror (a GPU node) may still have all it needs.
	if command -v cmake >/dev/null && pkg-config --exists libzstd; then
		echo "deps: could not install packages, but cmake and libzstd are present: going on" >&2
	else
		echo "deps: installing packages failed (scripts/deps.sh said why above);" \
			"gaptrace needs cmake, pkg-config and libzstd-dev to build" >&2
		exit 1
	fi
fi
have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	have_gpu=1
fi
have_nvcc=0
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] && have_nvcc=1

build_opts=(-DGAPTRACE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	-DCMAKE_INSTALL_PREFIX="$prefix")
if [ $have_gpu = 1 ] && [ $have_nvcc = 1 ]; then
	export PATH="$PATH:/usr/local/cuda/bin"
	build_opts+=(-DGAPTRACE_BUILD_EXAMPLES=ON)
fi
echo "== building gaptrace (build-quick/)"
cmake -S . -B build-quick "${build_opts[@]}" >/dev/null
cmake --build build-quick -j"$jobs" >/dev/null
echo "== installing gaptrace into $prefix"
cmake --install build-quick --prefix "$prefix" >/dev/null
export PATH="$prefix/bin:$PATH"
path_line="export PATH=\"$prefix/bin:\$PATH\""
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; } # for the lines we print
# The last lines: what this build left out, or that it left out nothing.
left_out() {
	local parts pkgs
	parts=$(gaptrace --version | grep -E '^[^:]+: no ' || true)
	pkgs=""
	if [ $deps_failed = 1 ] && command -v dpkg-query >/dev/null; then
		pkgs=$(scripts/deps.sh --check build 2>/dev/null | tr '\n' ' ' || true)
	fi
	if [ -z "$parts" ] && [ -z "$pkgs" ]; then
		echo "== nothing left out: gaptrace --version lists every part as built in"
		return
	fi
	echo "== left out of this build:"
	[ -z "$parts" ] || printf '%s\n' "$parts" | sed 's/^/      /'
	[ -z "$pkgs" ] || echo "      packages not installed: ${pkgs% } (scripts/deps.sh build failed above)"
}

have_inject=0
gaptrace --version | grep -q '^injection library: yes' && have_inject=1

if [ $have_gpu = 1 ] && [ $have_nvcc = 1 ] && [ $have_inject = 1 ] &&
	[ -x "build-quick/examples/$example" ]; then
	out="quickstart-$example"
	echo "== profiling build-quick/examples/$example with: gaptrace run -o $out -- ..."
	gaptrace run --force-overwrite --report text,html -o "$out" -- "build-quick/examples/$example"
	echo
	echo "== the full report: gaptrace report $out"
	gaptrace report "$out"
	echo
	echo "== gaptrace is installed in $prefix; to use it from your shell:"
	echo "      $path_line"
	echo "      gaptrace report $(abs "$out")   # the report again"
	echo "      gaptrace run -- python3 train.py  # your own program"
	left_out
	exit 0
fi

if [ $have_gpu = 1 ] && [ $have_inject = 0 ]; then
	echo "NOTE: an NVIDIA GPU is present but the injection library was not built (the last"
	echo "      lines say why), so nothing can be profiled yet."
elif [ $have_gpu = 1 ]; then
	echo "NOTE: an NVIDIA GPU is present but nvcc is not, so the CUDA examples cannot be built."
	echo "      Profile your own program instead (see the last lines)."
else
	echo "NOTE: no NVIDIA GPU on this machine (nvidia-smi -L failed), so nothing can be profiled here."
fi
echo "      Analyzing the bundled trace $bundled (recorded on an NVIDIA H200) instead:"
echo
gaptrace report "$bundled"
echo
echo "== gaptrace is installed in $prefix; to use it from your shell:"
echo "      $path_line"
echo "      gaptrace report $(abs "$bundled")   # this report again"
echo "      gaptrace run -- python3 train.py   # on a machine with an NVIDIA GPU"
left_out
