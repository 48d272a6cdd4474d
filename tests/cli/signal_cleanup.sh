#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# signal_cleanup.sh GAPTRACE WORKDIR
#
# Issue 25 row 10: `export` killed mid-write by SIGTERM, SIGINT or SIGHUP
# left its hidden temporary (.NAME.XXXXXXXX, 150-190 MB after 3 s). Now
# collector/outfile/src/outfile.c's handler removes it and the command dies by the signal:
# exit status 143, 130, 129, nothing left beside the output's name.
set -u
if [ $# -ne 2 ]; then
	echo "usage: signal_cleanup.sh GAPTRACE WORKDIR" >&2
	exit 2
fi
gaptrace=$1
work=$2
rm -rf "$work" && mkdir -p "$work/out" || exit 2
# a trace whose timeline takes seconds to write (19 MB -> 3 GB)
"$gaptrace" synth -q -p bench -o "$work/trace" || exit 1
# job control: without it a background job starts with SIGINT ignored
set -m
fails=0
for sig in TERM INT HUP; do
	"$gaptrace" export -f perfetto --no-analysis -o "$work/out/t.json" "$work/trace" \
		2>"$work/stderr" &
	pid=$!
	grown=0
	for _ in $(seq 300); do # up to 30 s for the temporary to hold 1 MB
		tmp=$(find "$work/out" -name '.t.json.*' -size +1M | head -n 1)
		if [ -n "$tmp" ]; then
			grown=1
			break
		fi
		sleep 0.1
	done
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	want=$((128 + $(kill -l "$sig")))
	left=$(find "$work/out" -mindepth 1 | head -n 3)
	if [ "$grown" != 1 ]; then
		echo "FAIL SIG$sig: the temporary never reached 1 MB (exit $rc)"
		fails=$((fails + 1))
	elif [ "$rc" -ne "$want" ]; then
		echo "FAIL SIG$sig: exit status $rc, expected $want"
		fails=$((fails + 1))
	elif [ -n "$left" ]; then
		echo "FAIL SIG$sig: left behind: $left"
		fails=$((fails + 1))
	else
		echo "PASS SIG$sig: exit $rc, nothing left in the output directory"
	fi
	rm -rf "$work/out" && mkdir -p "$work/out"
done
rm -rf "$work"
[ "$fails" -eq 0 ]
