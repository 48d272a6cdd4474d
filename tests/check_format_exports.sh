#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/check_format_exports.sh HEADER LIB MAP VERSIONED [NM]: the ABI of
# libgaptrace_format.so is exactly the GT_API functions of HEADER.
#
# The three lists that must agree:
#   declared  every `GT_API ... name(` of HEADER (gaptrace/format.h; one
#             declaration starts a line with GT_API, the name before its '(')
#   exported  what `nm -D --defined-only` finds defined in LIB
#   listed    the global: names of MAP (format/libgaptrace_format.map)
# Prints, one line each,
#   exported, not declared GT_API in HEADER: SYM   (an internal leaked)
#   declared, not exported: SYM                    (the map or GT_API missing)
#   listed in MAP, not declared: SYM               (a stale map entry)
# and, when VERSIONED is 1 (the linker took the version script),
#   exported without a version: SYM                (not in a version node)
# Exit 1 on any of them; 2 when a file is missing or a list is empty (the
# check would be checking nothing); 0 and one summary line otherwise.
set -u
header=${1:?usage: check_format_exports.sh HEADER LIB MAP VERSIONED [NM]}
lib=${2:?}
map=${3:?}
versioned=${4:?}
nm=${5:-nm}
for f in "$header" "$lib" "$map"; do
	[ -r "$f" ] || {
		echo "check_format_exports: no $f (build first)"
		exit 2
	}
done

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# declared: "GT_API const char *gt_strerror(int err);" -> gt_strerror
sed -n -E 's/^GT_API[^(]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/p' "$header" | sort -u >"$tmp/declared"
# exported, as "name version" (version "-" when none); type A entries are
# the version nodes themselves (GAPTRACE_FORMAT_1), not functions
"$nm" -D --defined-only -P --with-symbol-versions "$lib" >"$tmp/nm" || exit 2
awk '$2 != "A" { n = $1; v = "-"
	if ((i = index(n, "@")) > 0) { v = substr(n, i); sub(/^@+/, "", v); n = substr(n, 1, i - 1) }
	print n, v }' "$tmp/nm" | sort -u >"$tmp/exported_v"
cut -d' ' -f1 "$tmp/exported_v" | sort -u >"$tmp/exported"
# listed: the names between "global:" and "local:" of each node
sed -e 's:/\*.*\*/::' -e '/\/\*/,/\*\//d' "$map" | awk '
	/global:/ { g = 1; next } /local:/ { g = 0; next }
	g { gsub(/[ \t;]/, ""); if ($0 != "" && $0 !~ /[{}]/) print }' | sort -u >"$tmp/listed"

for l in declared exported listed; do
	[ -s "$tmp/$l" ] || {
		echo "check_format_exports: no $l symbol found: $header, $lib or $map is not what this check reads"
		exit 2
	}
done

bad=0
while read -r s; do
	echo "exported, not declared GT_API in $header: $s"
	bad=1
done < <(comm -13 "$tmp/declared" "$tmp/exported")
while read -r s; do
	echo "declared, not exported: $s"
	bad=1
done < <(comm -23 "$tmp/declared" "$tmp/exported")
while read -r s; do
	echo "listed in $map, not declared: $s"
	bad=1
done < <(comm -13 "$tmp/declared" "$tmp/listed")
if [ "$versioned" = 1 ]; then
	while read -r s v; do
		[ "$v" = - ] && {
			echo "exported without a version: $s"
			bad=1
		}
	done <"$tmp/exported_v"
fi
[ "$bad" = 0 ] || exit 1
printf 'check_format_exports: %s exports the %d GT_API functions of %s and nothing else%s\n' \
	"$lib" "$(wc -l <"$tmp/declared")" "$header" \
	"$([ "$versioned" = 1 ] && echo ', every one versioned')"
