#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run_hostile.sh GAPTRACE INPUTS_DIR WORKDIR
#
# Runs every command of every golden hostile input (tests/hostile/README.md):
# for each INPUTS_DIR/NAME.cmds, the input NAME.gtrace, NAME.json or the
# directory NAME/, each line of the sidecar a gaptrace command with {IN}
# replaced by the input's path and {OUT} by a fresh empty directory. Lines
# starting with # are comments; a first line
#     # limits: mem_mb=N rss_mb=N time_s=N out_factor=N
# overrides the defaults (2048 MB of address space, 256 MB resident at the
# peak, 60 s, 1000).
#
# Each command must: finish within time_s (else a hang), not die by a
# signal, exit 0, 1, 2 or 3 (a clear error is allowed), stay under rss_mb
# resident at its peak (GNU time's %M; skipped with a note without
# /usr/bin/time), and write at most max(1 MiB, out_factor x input bytes)
# under {OUT} and to stdout together. The peak matters besides the
# address-space limit: a program whose huge allocation fails under ulimit
# degrades quietly, and the same input on a machine without the limit
# takes the memory.
# Address space is limited with ulimit -v unless HOSTILE_NO_VLIMIT=1 (the
# sanitizer builds: their shadow memory needs terabytes of it; their peak
# RSS limits are 4 times the input's).
#
# A sanitizer's report (UBSan's "runtime error:", ASan's "ERROR:") fails the
# command whatever its exit status; ASAN_OPTIONS and UBSAN_OPTIONS get
# exitcode=86 so it cannot pass for a clear error.
#
# One line per command, PASS or FAIL and why; exits 1 when any FAIL.
set -u

if [ $# -ne 3 ]; then
	echo "usage: run_hostile.sh GAPTRACE INPUTS_DIR WORKDIR" >&2
	exit 2
fi
gaptrace=$1
inputs=$2
work=$3
fifo=/tmp/gaptrace-hostile.fifo # named by inputs/module-special-files.gtrace

rm -rf "$work" && mkdir -p "$work" || exit 2
# The FIFO an input's module record names: made here, so a reader that opens
# it blocks (the bug) instead of failing to find it. Left in place: another
# run may be using it, and it holds nothing.
if [ ! -p "$fifo" ]; then
	rm -f "$fifo" 2>/dev/null
	mkfifo -m 0666 "$fifo" 2>/dev/null || echo "note: cannot make $fifo"
fi
rss_scale=1
if [ "${HOSTILE_NO_VLIMIT:-0}" = 1 ]; then
	echo "note: HOSTILE_NO_VLIMIT=1 (sanitizer build): no address-space limit," \
		"peak-RSS limits x4 (shadow memory, redzones, quarantine)"
	rss_scale=4
fi

# A sanitizer's report exits 1 by default, which reads as a clear error:
# make it exit 86, and look for its report in stderr too.
export ASAN_OPTIONS="exitcode=86:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="exitcode=86:halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"

fails=0 total=0

# input_of NAME: the input's path, or nothing
input_of() {
	local n=$1
	for p in "$inputs/$n.gtrace" "$inputs/$n.json" "$inputs/$n"; do
		if [ -e "$p" ]; then
			echo "$p"
			return
		fi
	done
}

timer=/usr/bin/time
if ! "$timer" -f %M -o /dev/null true 2>/dev/null; then
	echo "note: no GNU time at $timer: peak memory not checked"
	timer=""
fi

# run_one NAME INPUT BYTES MEM_MB RSS_MB TIME_S OUT_FACTOR LINE K
run_one() {
	local name=$1 in=$2 bytes=$3 mem=$4 rss=$5 tsec=$6 factor=$7 line=$8 k=$9
	local out="$work/$name.$k.out" so="$work/$name.$k.stdout" se="$work/$name.$k.stderr"
	mkdir -p "$out"
	local cmd=${line//\{IN\}/$in}
	cmd=${cmd//\{OUT\}/$out}
	local vlim=""
	if [ "${HOSTILE_NO_VLIMIT:-0}" != 1 ]; then
		vlim="ulimit -v $((mem * 1024)) || exit 125;"
	fi
	# read -a splits like the shell would, minus globbing and expansion
	local -a argv
	read -r -a argv <<<"$cmd"
	(
		eval "$vlim"
		if [ -n "$timer" ]; then
			exec timeout -k 5 "$tsec" "$timer" -f %M -o "$work/rss" \
				"$gaptrace" "${argv[@]}" </dev/null >"$so" 2>"$se"
		fi
		exec timeout -k 5 "$tsec" "$gaptrace" "${argv[@]}" </dev/null >"$so" 2>"$se"
	)
	local rc=$?
	local peak_kb=0
	if [ -n "$timer" ] && [ -s "$work/rss" ]; then
		peak_kb=$(tail -n 1 "$work/rss")
		[[ $peak_kb =~ ^[0-9]+$ ]] || peak_kb=0
	fi
	rm -f "$work/rss"
	local written
	written=$(find "$out" "$so" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	local limit=$((factor * bytes))
	[ "$limit" -lt 1048576 ] && limit=1048576
	local why=""
	if [ "$rc" -eq 124 ]; then
		why="timeout after ${tsec}s (a hang)"
	elif [ "$rc" -eq 125 ]; then
		why="could not set the address-space limit"
	elif [ "$rc" -gt 128 ]; then
		why="killed by signal $((rc - 128))"
	elif grep -qE "runtime error:|ERROR: (Address|Leak|Undefined)Sanitizer" "$se"; then
		why="sanitizer report (exit $rc)"
	elif [ "$rc" -gt 3 ]; then
		why="exit status $rc (expected 0..3)"
	elif [ "$peak_kb" -gt $((rss * 1024)) ]; then
		why="peak resident memory $((peak_kb / 1024)) MB, more than $rss MB"
	elif [ "$written" -gt "$limit" ]; then
		why="wrote $written bytes, more than $limit"
	fi
	total=$((total + 1))
	if [ -n "$why" ]; then
		fails=$((fails + 1))
		echo "FAIL $name: $line: $why"
		{ grep -m 1 -E "runtime error:|ERROR: [A-Za-z]+Sanitizer" "$se" || tail -n 3 "$se"; } |
			sed 's/^/    stderr: /'
	else
		echo "PASS $name: $line (exit $rc, $written bytes out, peak $((peak_kb / 1024)) MB)"
	fi
	rm -rf "$out"
}

shopt -s nullglob
for cmds in "$inputs"/*.cmds; do
	name=$(basename "$cmds" .cmds)
	in=$(input_of "$name")
	if [ -z "$in" ]; then
		echo "FAIL $name: no input $name.gtrace, $name.json or $name/"
		fails=$((fails + 1))
		continue
	fi
	bytes=$(du -sb --apparent-size "$in" | cut -f1)
	mem=2048 rss=256 tsec=60 factor=1000
	first=$(head -n 1 "$cmds")
	if [[ $first == "# limits:"* ]]; then
		for kv in ${first#\# limits:}; do
			case $kv in
			mem_mb=*) mem=${kv#*=} ;;
			rss_mb=*) rss=${kv#*=} ;;
			time_s=*) tsec=${kv#*=} ;;
			out_factor=*) factor=${kv#*=} ;;
			*) echo "FAIL $name: unknown limit $kv"; fails=$((fails + 1)) ;;
			esac
		done
	fi
	k=0
	while IFS= read -r line || [ -n "$line" ]; do
		[[ -z ${line//[[:space:]]/} || $line == \#* ]] && continue
		k=$((k + 1))
		run_one "$name" "$in" "$bytes" "$mem" $((rss * rss_scale)) "$tsec" "$factor" "$line" "$k"
	done <"$cmds"
done

echo "hostile inputs: $total commands, $fails failed"
[ "$total" -gt 0 ] || { echo "no commands found under $inputs"; exit 1; }
[ "$fails" -eq 0 ]
