#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest format_exports_fixture: check_format_exports.sh can fail. Against
# the real library, each case breaks one list on purpose (a copy of the
# header or the map, or an nm that drops a version) and the check must exit
# 1 naming exactly the symbol that was broken; the untouched lists must pass.
# Usage: check_format_exports_fixture.sh CHECK HEADER LIB MAP VERSIONED [NM]
set -u
check=${1:?usage: check_format_exports_fixture.sh CHECK HEADER LIB MAP VERSIONED [NM]}
header=${2:?}
lib=${3:?}
map=${4:?}
versioned=${5:?}
nm=${6:-nm}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect NAME RC LINE HEADER MAP NM: the check exits RC and prints LINE
expect() {
	local name=$1 rc=$2 line=$3 out got
	out=$(bash "$check" "$4" "$lib" "$5" "$versioned" "$6" 2>&1)
	got=$?
	if [ "$got" != "$rc" ] || ! grep -qxF -- "$line" <<<"$out"; then
		printf 'FAIL %s: wanted rc %s and the line [%s], got rc %s:\n%s\n' \
			"$name" "$rc" "$line" "$got" "$out"
		fail=1
	else
		echo "ok   $name"
	fi
}

expect clean 0 "$(bash "$check" "$header" "$lib" "$map" "$versioned" "$nm" | tail -1)" \
	"$header" "$map" "$nm"

# an export the header does not declare: gt_version's declaration removed
grep -v '^GT_API const char \*gt_version(void);' "$header" >"$tmp/undeclared.h"
expect undeclared_export 1 "exported, not declared GT_API in $tmp/undeclared.h: gt_version" \
	"$tmp/undeclared.h" "$map" "$nm"

# a declared function the library does not export
{ cat "$header"; echo 'GT_API int gt_fixture_missing(void);'; } >"$tmp/missing.h"
expect missing_export 1 "declared, not exported: gt_fixture_missing" "$tmp/missing.h" "$map" "$nm"

# a map entry naming nothing of the header
sed 's/^\([ \t]*\)gt_version;/&\n\1gt_fixture_stale;/' "$map" >"$tmp/stale.map"
expect stale_map 1 "listed in $tmp/stale.map, not declared: gt_fixture_stale" \
	"$header" "$tmp/stale.map" "$nm"

# an export outside every version node (an nm that shows gt_version bare)
if [ "$versioned" = 1 ]; then
	printf '#!/bin/sh\n"%s" "$@" | sed "s/^gt_version@@[A-Z0-9_]*/gt_version/"\n' "$nm" >"$tmp/nm"
	chmod +x "$tmp/nm"
	expect unversioned 1 "exported without a version: gt_version" "$header" "$map" "$tmp/nm"
fi
exit "$fail"
