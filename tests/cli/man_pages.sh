#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# man_pages.sh GAPTRACE MANDIR: the man pages the build wrote (MANDIR/man1)
# render with `man -l` without a warning, there is one per command
# (`gaptrace help --commands`) and one for gaptrace, and each says what the
# command's --help says: its NAME line is the summary `gaptrace --help`
# lists, and every option of `gaptrace CMD --help` is in it. Exits 77
# (skipped) when man is not installed. Registered with ctest as "man_pages".
set -u
G=$1
M=$2/man1
command -v man >/dev/null 2>&1 || { echo "SKIP: man is not installed (apt-get install man-db)"; exit 77; }
fail() { echo "FAIL: $*"; bad=1; }
bad=0
T=$(mktemp -d "${TMPDIR:-/tmp}/gt-man-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export MANWIDTH=80 LC_ALL=C.UTF-8 MANPAGER=cat PAGER=cat

render() { # PAGE: the page as text in $T/page.txt, warnings in $T/page.err
	man --warnings=w -l "$1" >"$T/page.txt" 2>"$T/page.err" || fail "$1: man -l exit $?"
	[ -s "$T/page.err" ] && fail "$1: warnings: $(head -3 "$T/page.err")"
	[ -s "$T/page.txt" ] || fail "$1: renders empty"
}

render "$M/gaptrace.1"
grep -q "^       gaptrace - why your GPU is idle and what to change$" "$T/page.txt" ||
	fail "gaptrace.1: NAME line: $(sed -n 4p "$T/page.txt")"
n=0
for c in $("$G" help --commands); do
	n=$((n + 1))
	page=$M/gaptrace-$c.1
	[ -f "$page" ] || { fail "no page for $c: $page"; continue; }
	render "$page"
	grep -q "^GAPTRACE-${c^^}(1) " "$T/page.txt" || fail "$c: title: $(head -1 "$T/page.txt")"
	# NAME: the summary gaptrace --help lists (joined: man may wrap it)
	summary=$("$G" --help | sed -n "s/^  $c  *//p" | head -1)
	name=$(sed -n '/^NAME$/,/^SYNOPSIS$/p' "$T/page.txt" | sed '1d;$d' | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
	case "$name" in
	"gaptrace-$c - $summary"*) ;;
	*) fail "$c: NAME is '$name', want 'gaptrace-$c - $summary...'" ;;
	esac
	# every option --help lists is documented in the page
	"$G" "$c" --help >"$T/help.txt" || fail "$c --help: exit $?"
	for o in $(grep -oE '^  (-[a-zA-Z], |    )--[a-z0-9-]+' "$T/help.txt" | grep -oE -- '--[a-z0-9-]+$'); do
		grep -qE -- "^       (-[a-zA-Z], )?$o( |$)" "$T/page.txt" || fail "$c: $o is in --help, not in the man page"
	done
	grep -q "^EXIT STATUS$" "$T/page.txt" || fail "$c: no EXIT STATUS"
	grep -q "^EXAMPLES$" "$T/page.txt" || fail "$c: no EXAMPLES"
done
[ "$n" -ge 12 ] || fail "only $n commands listed"
[ "$bad" = 0 ] && echo "man_pages: $((n + 1)) pages render, each with the options of its --help"
exit "$bad"
