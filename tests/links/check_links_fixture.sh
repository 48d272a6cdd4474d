#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest links_fixture: tests/check_links.sh can fail, and fails on exactly
# the wrong calls. Builds tests/links/fixture/ (a small project with known
# links, its CMakeLists.txt says which) in a scratch directory with the
# manifest of cmake/link_manifest.cmake, then:
#   1. with its wrong calls: exit 1 and exactly the three lines expected
#      (an upward call by a local prototype, a call into a dependency's
#      PRIVATE link, a shared library's object calling what it does not link)
#   2. without them (-DFX_CLEAN=ON): exit 0
#   3. a manifest naming an archive that is not there: exit 2
# usage: check_links_fixture.sh CHECK_LINKS_SH CMAKE CC NM
set -u
check=$1 cmake=$2 cc=$3 nm=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

build() { # CLEAN(ON/OFF) -> the fixture built in $tmp/b
	if ! { "$cmake" -S "$here/fixture" -B "$tmp/b" -DCMAKE_C_COMPILER="$cc" -DFX_CLEAN="$1" &&
		"$cmake" --build "$tmp/b"; } >"$tmp/log" 2>&1; then
		echo "links_fixture: the fixture did not build (FX_CLEAN=$1):"
		cat "$tmp/log"
		exit 2
	fi
}

build OFF
bash "$check" "$tmp/b/links_manifest.txt" "$nm" >"$tmp/out" 2>&1
rc=$?
sort "$tmp/out" >"$tmp/got"
sort >"$tmp/want" <<'W'
fx_helper: calls fx_top_fn, defined by fx_top (fx_helper may call only: fx_base)
fx_top: calls fx_helper_fn, defined by fx_helper (fx_top may call only: fx_base fx_mid)
fx_inj: calls fx_mid_fn, defined by fx_mid (fx_inj may call only: fx_base)
W
if [ "$rc" != 1 ] || ! cmp -s "$tmp/want" "$tmp/got"; then
	echo "links_fixture: with the wrong calls: exit $rc (want 1), output differs from what is wanted:"
	diff "$tmp/want" "$tmp/got"
	echo "(the manifest:)"
	cat "$tmp/b/links_manifest.txt"
	fail=1
fi

build ON
if ! bash "$check" "$tmp/b/links_manifest.txt" "$nm" >"$tmp/out" 2>&1; then
	echo "links_fixture: without the wrong calls, the check still fails:"
	cat "$tmp/out"
	fail=1
fi

echo "fx_gone|$tmp/b/libfx_gone.a|" >"$tmp/gone.txt"
bash "$check" "$tmp/gone.txt" "$nm" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" != 2 ] || ! grep -q "fx_gone: no .*libfx_gone.a" "$tmp/out"; then
	echo "links_fixture: a missing archive: exit $rc (want 2):"
	cat "$tmp/out"
	fail=1
fi

[ "$fail" = 0 ] && echo "links_fixture: the check names each wrong call, and only those"
exit "$fail"
