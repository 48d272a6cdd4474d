#!/bin/sh
# SPDX-License-Identifier: MIT
# The slicing options of report and export (tools/cli_opts.c, collector/model/src/slice.c): what the slice
# line says, the exit statuses (2 for a bad value naming the option, 1 for a
# slice that keeps nothing, with nothing on stdout), and that text, JSON and
# the CSV tables of one slice agree. Usage: slice_cli.sh GAPTRACE TRACEDIR
set -u
G=$1
T=$2
D=$(mktemp -d "${TMPDIR:-/tmp}/gt-slice-XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$G" synth -p steps -o "$D/st" > /dev/null || fail "synth"

# usage errors name the option; exit 2
for bad in "--from 5" "--to -1s" "--pid x" "--from @garbage" "--gpu ''"; do
	eval "\"$G\" report $bad \"$T\"" > "$D/out" 2> "$D/err"
	[ $? -eq 2 ] || fail "report $bad: want exit 2"
	[ -s "$D/out" ] && fail "report $bad: printed on stdout"
done
grep -q -- "--gpu" "$D/err" || fail "the error names the option: $(cat "$D/err")"
"$G" report --from 2s --to 1s "$T" > /dev/null 2>&1
[ $? -eq 2 ] || fail "--from after --to: want exit 2"

# a slice that keeps nothing: exit 1, nothing on stdout
for empty in "--range nope" "--gpu 9" "--pid 424242" "--from 100s"; do
	eval "\"$G\" report $empty \"$D/st\"" > "$D/out" 2> "$D/err"
	[ $? -eq 1 ] || fail "report $empty: want exit 1, got: $(cat "$D/err")"
	[ -s "$D/out" ] && fail "report $empty: printed on stdout"
	eval "\"$G\" export -f csv -r gaptrace_gpu_sum $empty \"$D/st\"" > "$D/out" 2> /dev/null
	[ $? -eq 1 ] || fail "export $empty: want exit 1"
done

# the slice line; relative bounds from the printed origin
"$G" report --from 2ms --to 5ms --gpu 0 "$D/st" > "$D/r.txt" || fail "report sliced"
grep -q "^slice: +0.002000 s .. +0.005000 s of the capture (3.00 ms), GPU 0 of 1 (shown as GPU 0); [0-9]* of 96 kernels kept (--from 2ms --to 5ms --gpu 0)$" "$D/r.txt" ||
	fail "slice line: $(grep '^slice' "$D/r.txt")"
grep -q "^Window .* from +0.00[2-4][0-9]* s" "$D/r.txt" || fail "window: $(grep '^Window' "$D/r.txt")"

# absolute bounds: ISO UTC and realtime ns (the bundled trace's origin is
# 2026-12-02 11:47:58.866782924 UTC = 1796212078866782924 ns)
"$G" report --from @2026-12-02T11:47:59.5Z --to @1796212081866782924 "$T" > "$D/abs.txt" ||
	fail "absolute bounds"
grep -q "^slice: +0.633217 s .. +3.000000 s of the capture" "$D/abs.txt" ||
	fail "absolute slice line: $(grep '^slice' "$D/abs.txt")"

# --range: the steps, from the first start to the last end
"$G" report --range train_step -j "$D/st" > "$D/r.json" || fail "report --range"
python3 - "$D/r.json" <<'PY' || fail "JSON of --range"
import json, sys
r = json.load(open(sys.argv[1]))
s, g = r["slice"], r["gpus"][0]
assert s["asked"] == "--range train_step", s
st = g["steps"]
assert st["count"] == 12 and st["range"] == "train_step", st
assert s["from_ns"] == st["items"][0]["start"] and s["to_ns"] == st["items"][-1]["end"], s
slow = max(st["items"], key=lambda x: x["dur_ns"])
assert slow["index"] == 7 and slow["top_cause"] == "host_busy", slow
assert [x["name"] for x in r["nvtx_sum"]["ranges"]] == ["train_step", "forward"]
PY

# text, JSON and CSV of one slice agree
"$G" report -j --from 3ms --skip-startup "$D/st" > "$D/a.json" || fail "json"
"$G" export -f csv -r gaptrace_gpu_sum -r gaptrace_steps -r nvtx_sum --from 3ms --skip-startup \
	"$D/st" > "$D/a.csv" 2> /dev/null || fail "csv"
python3 - "$D/a.json" "$D/a.csv" <<'PY' || fail "JSON and CSV disagree"
import csv, io, json, sys
r = json.load(open(sys.argv[1]))
tables, name = {}, None
for line in open(sys.argv[2]).read().splitlines(True):
    if line.startswith("# "):
        name = line[2:].strip(); tables[name] = ""
    else:
        tables[name] += line
rows = {k: list(csv.DictReader(io.StringIO(v))) for k, v in tables.items()}
g, c = r["gpus"][0], rows["gaptrace_gpu_sum"][0]
for k, col in (("t0", "Start (ns)"), ("window_ns", "Window (ns)"), ("busy_ns", "Busy (ns)")):
    assert int(c[col]) == g[k], (k, c[col], g[k])
steps = rows["gaptrace_steps"]
assert len(steps) == g["steps"]["count"], (len(steps), g["steps"]["count"])
for a, b in zip(steps, g["steps"]["items"]):
    assert int(a["Duration (ns)"]) == b["dur_ns"] and int(a["Busy (ns)"]) == b["busy_ns"]
assert [x["Range"] for x in rows["nvtx_sum"]] == [x["name"] for x in r["nvtx_sum"]["ranges"]]
PY
# steps from the utilization period (no NVTX ranges), or not
"$G" synth -p periodic -o "$D/per" > /dev/null || fail "synth periodic"
"$G" report "$D/per" | grep -q "^Steps .* x period .*(no NVTX step ranges: the whole utilization periods after the start-up and its warm-up)" ||
	fail "no period steps: $("$G" report "$D/per" | grep -i '^steps\|shape')"
"$G" report --step-period off "$D/per" | grep -q "^Steps" && fail "--step-period off"
"$G" report --step-period 10ms "$D/per" | grep -q "^Steps .* x period 10.00 ms" || fail "--step-period 10ms"
"$G" report --step-period 1ns "$D/per" > /dev/null 2>&1
[ $? -eq 2 ] || fail "--step-period 1ns: want exit 2"
echo "slice_cli: ok"
