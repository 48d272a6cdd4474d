#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/check_links.sh MANIFEST [NM]: every library calls only what it links.
#
# MANIFEST has one line per library (tests/links.cmake writes it from the
# build system; the fixture test writes its own):
#   NAME|FILE FILE...|ALLOWED ALLOWED...
# FILEs are the library's archive (or objects); ALLOWED the libraries it may
# call: those it links and what they pass on, transitively.
#
# For each library, every symbol its FILEs leave undefined (nm: U, w) that
# some library of the manifest defines must be defined by the library itself
# or by one of its ALLOWED; anything no library of ours defines (libc, libm,
# zstd, pthread, CUPTI, cJSON...) is external and fine. A violation is an
# upward or sideways call the #include check (check_layering.sh) cannot see:
# a function declared by hand in a .c file. Prints every violation as
#   LIB: calls SYMBOL, defined by OTHER (LIB may call only: ALLOWED)
# and exits 1 if any; 2 if the manifest or a file is missing, or if no
# library calls into another at all (the check would be checking nothing).
set -u
manifest=${1:?usage: check_links.sh MANIFEST [NM]}
nm=${2:-nm}
[ -r "$manifest" ] || {
	echo "check_links: no manifest $manifest (configure with the tests on)"
	exit 2
}

# One stream for awk: "A lib allowed...", then "D lib sym" and "U lib sym".
stream=$(mktemp) || exit 2
trap 'rm -f "$stream"' EXIT
nlibs=0
while IFS='|' read -r name files allowed; do
	[ -n "$name" ] || continue
	nlibs=$((nlibs + 1))
	echo "A $name $allowed" >>"$stream"
	for f in $files; do
		[ -r "$f" ] || {
			echo "check_links: $name: no $f (build first)"
			exit 2
		}
	done
	# -P: "sym TYPE [value size]"; archive member headers end in ':'
	# shellcheck disable=SC2086 # FILEs are a space-separated list
	"$nm" -g -P --defined-only $files | awk -v l="$name" \
		'NF >= 2 && $1 !~ /:$/ && $2 !~ /^[Uwv]$/ { print "D", l, $1 }' >>"$stream" || exit 2
	# shellcheck disable=SC2086
	"$nm" -u -P $files | awk -v l="$name" \
		'NF >= 2 && $1 !~ /:$/ { print "U", l, $1 }' >>"$stream" || exit 2
done <"$manifest"
[ "$nlibs" -gt 0 ] || {
	echo "check_links: $manifest lists no library"
	exit 2
}

awk -v nlibs="$nlibs" '
$1 == "A" { for (i = 3; i <= NF; i++) may[$2, $i] = 1; allowed[$2] = ""
	    for (i = 3; i <= NF; i++) allowed[$2] = allowed[$2] " " $i; next }
$1 == "D" { if (!(($3, $2) in defd)) { defd[$3, $2] = 1; by[$3] = by[$3] " " $2 }; next }
$1 == "U" { if (!(($2, $3) in seen)) { seen[$2, $3] = 1; und[++n] = $2 " " $3 }; next }
END {
	bad = 0; cross = 0
	for (i = 1; i <= n; i++) {
		split(und[i], u, " "); lib = u[1]; sym = u[2]
		if (!(sym in by)) continue            # external: libc, zstd, CUPTI...
		k = split(by[sym], defs, " ")
		ok = 0; others = ""
		for (j = 1; j <= k; j++) {
			if (defs[j] == lib) { ok = 1; break }
			if ((lib, defs[j]) in may) { ok = 1; cross++; break }
			others = others (others == "" ? "" : ", ") defs[j]
		}
		if (!ok) {
			a = allowed[lib]; sub(/^ /, "", a)
			printf "%s: calls %s, defined by %s (%s may call only: %s)\n", \
				lib, sym, others, lib, (a == "" ? "itself" : a)
			bad = 1
		}
	}
	if (bad) exit 1
	if (cross == 0) {
		print "check_links: no library calls into another: the manifest or nm output is not what this check reads"
		exit 2
	}
	printf "check_links: %d libraries call only what they link (%d calls across libraries)\n", nlibs, cross
}' "$stream"
