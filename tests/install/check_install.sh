#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check_install.sh BUILD SOURCE LIBDIR INJECT CC [FLAGS] - install a build
# into a temporary prefix and use it from outside, like a newcomer would:
#  1. `cmake --install BUILD --prefix P`, then the layout the README
#     documents (P/bin/gaptrace, P/LIBDIR/gaptrace/libgaptrace_inject.so when
#     INJECT is 1, P/include/gaptrace/format.h, the format library, its
#     pkg-config file and its CMake package, a man page per command, the
#     bash completion);
#  2. the installed `gaptrace run`, with no GAPTRACE_INJECT_PATH, gives its
#     program CUDA_INJECTION64_PATH = the installed injection library;
#  3. tests/install/consumer/ built with find_package(gaptrace) (shared and
#     static library) and count_records.c built with
#     `CC $(pkg-config --cflags --libs gaptrace-format)` read a bundled
#     trace (examples/traces/exact_counts) and count what the installed
#     `gaptrace dump` counts, and the kernels the example program launched.
# LIBDIR is the build's CMAKE_INSTALL_LIBDIR (relative), CC its C compiler,
# FLAGS the sanitizer flags of the build (a consumer of an instrumented
# library needs them too). Registered with ctest as "install".
#
# Writes only under a temporary directory (removed at the end), except what
# `cmake --install` itself writes: BUILD/install_manifest.txt.
set -euo pipefail
if [ $# -lt 5 ]; then
	echo "usage: check_install.sh BUILD SOURCE LIBDIR INJECT CC [FLAGS]" >&2
	exit 2
fi
build=$1 src=$2 libdir=$3 inject=$4 cc=$5 flags=${6:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gaptrace-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp XDG_RUNTIME_DIR=$tmp
unset GAPTRACE_INJECT_PATH
P=$tmp/prefix
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

echo "== cmake --install $build --prefix P   (P = $P)"
cmake --install "$build" --prefix "$P" >"$tmp/install.log" || {
	cat "$tmp/install.log"
	fail "cmake --install"
}
(cd "$P" && find . -mindepth 1 | LC_ALL=C sort)

echo "== layout"
expect=(bin/gaptrace include/gaptrace/format.h
	"$libdir/libgaptrace_format.a" "$libdir/libgaptrace_format.so"
	"$libdir/pkgconfig/gaptrace-format.pc"
	"$libdir/cmake/gaptrace/gaptraceConfig.cmake"
	"$libdir/cmake/gaptrace/gaptraceConfigVersion.cmake"
	"$libdir/cmake/gaptrace/gaptraceTargets.cmake"
	share/doc/gaptrace/README.md share/doc/gaptrace/LICENSE
	share/man/man1/gaptrace.1 share/man/man1/gaptrace-run.1 share/man/man1/gaptrace-report.1
	share/bash-completion/completions/gaptrace)
[ "$inject" = 1 ] && expect+=("$libdir/gaptrace/libgaptrace_inject.so")
for f in "${expect[@]}"; do
	[ -f "$P/$f" ] || fail "$f not installed"
done
[ -x "$P/bin/gaptrace" ] || fail "bin/gaptrace is not executable"
echo "all ${#expect[@]} files there"

trace=$(ls "$src"/examples/traces/exact_counts/[0-9]*.gtrace | head -1)
[ -f "$trace" ] || fail "no bundled trace in $src/examples/traces/exact_counts"
# What the example program launched (examples/traces/exact_counts.stdout).
kernels_expected=770

echo "== installed gaptrace dump -s $trace"
dump=$("$P/bin/gaptrace" dump -s "$trace" | tail -1)
echo "$dump"
records_expected=$(sed -n 's/.* records=\([0-9]*\) .*/\1/p' <<<"$dump")
[ -n "$records_expected" ] && [ "$records_expected" -gt 0 ] || fail "no record count in dump's output"
want="records=$records_expected kernels=$kernels_expected"

check_count() { # NAME PROGRAM
	local got
	got=$("$2" "$trace") || fail "$1: $2 failed"
	echo "$1: $got"
	[ "$got" = "$want" ] || fail "$1 read '$got', expected '$want'"
}

if [ "$inject" = 1 ]; then
	echo "== installed gaptrace run finds the installed injection library by itself"
	got=$(cd "$tmp" && "$P/bin/gaptrace" run -q -o "$tmp/run" -- \
		sh -c 'printf "%s\n" "$CUDA_INJECTION64_PATH"') || fail "gaptrace run"
	lib=$(realpath "$P/$libdir/gaptrace/libgaptrace_inject.so")
	echo "CUDA_INJECTION64_PATH=$got"
	[ "$got" = "$lib" ] || fail "gaptrace run chose '$got', not $lib"
fi

echo "== consumer built with find_package(gaptrace)"
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$P" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/consumer.log" 2>&1 || {
	cat "$tmp/consumer.log"
	fail "configuring the consumer"
}
grep "gaptrace .* from" "$tmp/consumer.log"
grep -q "gaptrace .* from $P/" "$tmp/consumer.log" || fail "find_package found another gaptrace"
cmake --build "$tmp/consumer" >"$tmp/consumer-build.log" 2>&1 || {
	cat "$tmp/consumer-build.log"
	fail "building the consumer"
}
check_count "find_package, gaptrace::format" "$tmp/consumer/count_records"
check_count "find_package, gaptrace::format_static" "$tmp/consumer/count_records_static"

echo "== consumer built with pkg-config gaptrace-format"
export PKG_CONFIG_PATH="$P/$libdir/pkgconfig"
pcflags=$(pkg-config --cflags --libs gaptrace-format) || fail "pkg-config gaptrace-format"
echo "pkg-config --cflags --libs gaptrace-format: $pcflags"
# shellcheck disable=SC2086 # the flags are words
"$cc" $flags -o "$tmp/count_records_pc" "$src/tests/install/consumer/count_records.c" \
	$pcflags -Wl,-rpath,"$P/$libdir" || fail "building with pkg-config's flags"
check_count "pkg-config" "$tmp/count_records_pc"
echo "== install: all checks passed"
