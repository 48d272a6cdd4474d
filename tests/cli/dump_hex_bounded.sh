#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 25 row 17: `dump --hex` reads a trace one header or frame at a time,
# so a large file needs no more memory than a small one. A bundled trace with
# 512 MiB of (sparse) zeros after it is dumped under a 256 MiB address-space
# limit; before, the whole file was read into memory and the dump stopped
# with "out of memory" before printing anything. grep -m1 stops reading at
# the first line about the zeros, so the test does not format 512 MiB.
# Sanitizer builds (DUMP_NO_VLIMIT=1: their shadow memory needs terabytes of
# address space) drop the limit and check the peak RSS (GNU time) instead:
# at most 256 MiB there too, where the old dump held the whole file.
# usage: dump_hex_bounded.sh GAPTRACE TRACE_FILE
set -u
G=$1
T=$2
D=$(mktemp -d "${TMPDIR:-/tmp}/gt-dumphex.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT
cp "$T" "$D/big.gtrace" && truncate -s +512M "$D/big.gtrace" || exit 1
limit="ulimit -v 262144"
[ "${DUMP_NO_VLIMIT:-0}" = 1 ] && limit=true
timer=
[ -x /usr/bin/time ] && timer="/usr/bin/time -o $D/rss -f %M"
# shellcheck disable=SC2086
line=$( ($limit && $timer "$G" dump --hex "$D/big.gtrace" 2>"$D/err") |
	grep -m1 'not a frame: 536870912 bytes to the end')
if [ -z "$line" ]; then
	echo "FAIL: no line about the 512 MiB after the frames; stderr:"
	cat "$D/err"
	exit 1
fi
if grep -q 'out of memory' "$D/err"; then
	echo "FAIL: out of memory under a 256 MiB limit"
	exit 1
fi
rss=$(tail -n 1 "$D/rss" 2>/dev/null)
case $rss in
'' | *[!0-9]*) rss= ;;
esac
if [ -n "$rss" ] && [ "$rss" -gt 262144 ]; then
	echo "FAIL: peak RSS ${rss} KiB, over 256 MiB"
	exit 1
fi
echo "PASS: $line (peak RSS ${rss:-not measured} KiB)"
