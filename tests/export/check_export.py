#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole-output checks of `gaptrace export` on synthetic traces.

    check_export.py CHECK --gaptrace BIN --work DIR [--keep PNG]

CHECK is one of:
  perfetto    the JSON parses (strictly: UTF-8, no NaN); event counts equal the
              synthetic ground truth; every flow start has exactly one end, the
              pairs equal the correlation ids found on both sides in the records
              (read independently with `gaptrace dump`), and both ends sit inside
              their API call / kernel slice, the start never after the end (also
              on every trace of examples/traces/); slices nest on every track;
              async begins and ends pair; gap markers equal the gaptrace_gaps table
  truncated   traces cut at many offsets and with corrupt bytes still give
              closed, valid JSON with paired flows; csv/json/html still work
  counts      on every bundled trace, a synthetic pair (also --pid of one
              process) and a damaged copy: the traces, records and problems
              that every export prints ("wrote ...: 2 traces, 18529 records")
              are the input's (report --json traces[]), whatever the format
              and tables (-r all added each table's reading: twice the
              records), and no warning is printed twice
  csv         the tables parse; totals equal the analysis and the ground truth;
              Med/StdDev/Min/Max equal a recomputation from cuda_gpu_trace;
              CSV and JSON give the same values; units are in the headers
  html        the report is well-formed, self-contained (no script, no URL),
              has one timeline per GPU (1 or 8 GPUs), and its size does not grow
              with the trace; on every bundled trace (examples/traces/) its
              "where the wall time went" bar and table show the text report's
              parts, shares and denominator, and each id has one color on the
              whole page; each finding's share badge names its denominator
              (steady state or window) as the text does; its Steps, Longest
              gaps and NVTX ranges sections (also on synthetic traces) print the
              text report's lines and rows (the HTML's first rows) and the JSON
              report's counts and lengths, to the printed rounding
  screenshot  headless Chromium renders the report (of the first recorded trace
              under examples/traces/, else of a synthetic one): a PNG of the
              expected size, not blank, with the chart colors in it. Exits 77
              (skip) when no Chromium is installed (Debian package: chromium).
              --keep PATH copies the PNG (how docs/report-synthetic.png is made).

Exit status 0 = pass, 1 = fail, 77 = skipped. Standard library only.
"""
import argparse
import collections
import csv
import glob
import html.parser
import io
import json
import math
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
G = None
WORK = None
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "traces")


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def sanitizer_clean(p, what):
    """An ASan/UBSan report fails the check even when the exit status is one
    a damaged input may give (sanitizers exit 1 by default)."""
    for mark in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
        check(mark not in p.stderr, "%s: sanitizer report:\n%s" % (what, p.stderr[-3000:]))


def run(*args, ok=(0,)):
    p = subprocess.run([G, *args], capture_output=True, text=True)
    sanitizer_clean(p, "gaptrace " + " ".join(args))
    if p.returncode not in ok:
        raise Fail("gaptrace %s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def synth(name, preset, *sets):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    args = ["synth", "-p", preset, "--json", "-o", d, "-s", "truth=1"]
    for s in sets:
        args += ["-s", s]
    truth = json.loads(run(*args).stdout)
    return d, truth


def strict_json(path):
    def bad_constant(c):
        raise Fail("%s: non-standard JSON constant %s" % (path, c))

    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")  # strict: invalid UTF-8 fails the test
    return json.loads(text, parse_constant=bad_constant)


def ns(us):
    """Perfetto ts/dur (us, 3 decimals) back to integer ns."""
    return int(round(us * 1000))


def export_perfetto(src, out, *extra, ok=(0,)):
    run("export", "-q", "-f", "perfetto", *extra, "-o", out, src, ok=ok)
    return strict_json(out)


def dump_corrs(trace):
    """Correlation ids of API calls and of GPU work, read with gaptrace dump."""
    api, work = set(), set()
    p = run("dump", trace, ok=(0, 1))
    for line in p.stdout.splitlines():
        m = re.search(r"\bcorr=(\d+)", line)
        if not m or int(m.group(1)) == 0:
            continue
        c = int(m.group(1))
        if line.startswith("api "):
            api.add(c)
        elif line.startswith(("kernel ", "memcpy ", "memset ")):
            work.add(c)
    return api, work


# ---------------------------------------------------------------- perfetto


def check_events(doc, src, expect_flows=None):
    """Structural checks of one Perfetto document; returns the events."""
    check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "no traceEvents")
    ev = doc["traceEvents"]
    check(doc["otherData"]["events"] == len(ev), "otherData.events != number of events")
    slices = {}
    flows = {"s": {}, "f": {}}
    asyncs = {}
    for e in ev:
        ph = e.get("ph")
        check(ph in ("X", "M", "C", "s", "f", "b", "e", "i"), "unexpected phase %r" % ph)
        check(isinstance(e.get("pid"), int) and isinstance(e.get("ts"), (int, float)), "bad event %r" % e)
        check(e["ts"] >= 0, "negative ts in %r" % e)
        if ph == "X":
            check(e["dur"] >= 0, "negative dur %r" % e)
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
        elif ph in "sf":
            check(e.get("cat") == "launch" and e.get("name") == "launch", "flow cat/name %r" % e)
            check(e["id"] not in flows[ph], "flow id %d twice in %s" % (e["id"], ph))
            flows[ph][e["id"]] = e
            if ph == "f":
                check(e.get("bp") == "e", "flow end without bp=e")
        elif ph in "be":
            key = (e["pid"], e["cat"], e["id"], e["name"])
            asyncs[key] = asyncs.get(key, 0) + (1 if ph == "b" else -1)
        elif ph == "C":
            for v in e["args"].values():
                check(isinstance(v, (int, float)) and math.isfinite(v), "counter value %r" % e)
    check(set(flows["s"]) == set(flows["f"]), "flow starts and ends differ: %d vs %d" %
          (len(flows["s"]), len(flows["f"])))
    # an arrow goes forward in time: the launch call before its work
    back = [i for i, f in flows["f"].items() if i in flows["s"] and ns(flows["s"][i]["ts"]) > ns(f["ts"])]
    check(not back, "%d of %d flow arrows point backwards in time, e.g. id %s" %
          (len(back), len(flows["f"]), back[:3]))
    if expect_flows is not None:
        check(len(flows["s"]) == expect_flows, "flows %d, expected %d from the records" %
              (len(flows["s"]), expect_flows))
    check(all(v == 0 for v in asyncs.values()), "async begin/end do not pair")
    # slices nest on every track (Perfetto drops partial overlaps)
    for track, ss in slices.items():
        ss.sort(key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        stack = []
        for e in ss:
            s, t = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while stack and stack[-1] <= s:
                stack.pop()
            check(not stack or t <= stack[-1], "slices overlap on track %r at %r" % (track, e))
            stack.append(t)
    # both flow ends inside the slice of their correlation id
    by_corr = {}
    for track, ss in slices.items():
        for e in ss:
            c = e.get("args", {}).get("correlation")
            if c:
                by_corr.setdefault((track, c), []).append(e)
    for ph, cats in (("s", ("cuda_runtime", "cuda_driver")), ("f", ("kernel", "memcpy", "memset"))):
        for fid, f in flows[ph].items():
            t = ns(f["ts"])
            corr = fid & 0xFFFFFFFF
            hit = [e for e in by_corr.get(((f["pid"], f["tid"]), corr), [])
                   if ns(e["ts"]) <= t <= ns(e["ts"]) + ns(e["dur"]) and e["cat"] in cats]
            check(hit, "flow %s %d is not inside its slice (corr %d)" % (ph, fid, corr))
    return ev


def expected_flows(src):
    n = 0
    for t in sorted(glob.glob(os.path.join(src, "*.gtrace"))):
        api, work = dump_corrs(t)
        n += len(api & work)
    return n


def cat_count(ev, cat, ph="X"):
    return sum(1 for e in ev if e.get("ph") == ph and e.get("cat") == cat)


def do_perfetto():
    cases = [
        ("mixed", "mixed", ["steps=30", "sync_records=1"], []),
        ("multi", "multi-gpu", ["steps=10"], []),
        ("launch", "launch-bound", ["steps=20"], []),
        ("fine", "mixed", ["steps=10"], ["--min-gap", "10us"]),
    ]
    for name, preset, sets, opts in cases:
        src, truth = synth("pf_" + name, preset, *sets)
        out = os.path.join(WORK, name + ".json")
        doc = export_perfetto(src, out, *opts)
        ev = check_events(doc, src, expected_flows(src))
        check(cat_count(ev, "kernel") == truth["kernels"], "%s: kernels %d != %d" %
              (name, cat_count(ev, "kernel"), truth["kernels"]))
        check(cat_count(ev, "memcpy") == truth["memcpys"], "%s: memcpys" % name)
        api = cat_count(ev, "cuda_runtime") + cat_count(ev, "cuda_driver")
        check(api == truth["api_calls"], "%s: api calls %d != %d" % (name, api, truth["api_calls"]))
        gpus = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"
                and e["pid"] >= 0x7F000000]
        check(len(gpus) == len(truth["gpus"]), "%s: %d GPU processes, %d GPUs" %
              (name, len(gpus), len(truth["gpus"])))
        util = [e for e in ev if e["ph"] == "C" and e["name"] == "utilization"]
        check(util and all(0 <= e["args"]["%"] <= 100 for e in util), "%s: utilization" % name)
        if truth["nvml_samples"]:
            # the samples from before the time origin (the synthetic sampler
            # starts before the processes) are dropped and counted
            clk = [e for e in ev if e["ph"] == "C" and e["name"] == "SM clock"]
            nv = [int(l.split()[1]) for l in run("dump", os.path.join(src, "nvml.gtrace")).stdout.splitlines()
                  if l.startswith("nvml ")]
            check(len(nv) == truth["nvml_samples"], "%s: %d NVML samples, %d in truth" %
                  (name, len(nv), truth["nvml_samples"]))
            origin = doc["otherData"]["time_origin_ns"]
            kept = sum(t >= origin for t in nv)
            check(len(clk) == kept, "%s: %d SM clock samples, %d of %d at or after the origin" %
                  (name, len(clk), kept, len(nv)))
            check(doc["otherData"]["before_origin"]["dropped"] >= len(nv) - kept,
                  "%s: dropped samples not counted" % name)
        if truth["sync_calls"] and "sync_records=1" in sets:
            check(cat_count(ev, "sync", "b") == truth["sync_calls"], "%s: sync records" % name)
        # gap markers == the gaps table at the same threshold
        gaps = [e for e in ev if e["ph"] == "X" and e["cat"] == "gap"]
        rows = json.loads(run("export", "-q", "-f", "json", "-r", "gaptrace_gaps", *opts, src).stdout)
        check(len(gaps) == len(rows), "%s: %d gap markers, %d gap rows" % (name, len(gaps), len(rows)))
        check(sum(ns(e["dur"]) for e in gaps) == sum(r["Duration (ns)"] for r in rows),
              "%s: gap durations differ" % name)
        for e in gaps:
            check(sum(v for k, v in e["args"].items() if k.endswith(" ns")) == ns(e["dur"]),
                  "%s: gap causes do not sum to its length: %r" % (name, e))
        base = doc["otherData"]["base_realtime_ns"]
        starts = sorted(ns(e["ts"]) + base for e in gaps)
        check(starts == sorted(r["Start (ns)"] for r in rows), "%s: gap starts differ" % name)
        # records only: same timeline without the analysis tracks
        doc2 = export_perfetto(src, out, "--no-analysis")
        ev2 = check_events(doc2, src, expected_flows(src))
        check(not any(e.get("cat") == "gap" for e in ev2), "--no-analysis still has gaps")
        check(cat_count(ev2, "kernel") == truth["kernels"], "--no-analysis kernels")
        print("ok perfetto %s: %d events, %d flows, %d gaps" %
              (name, len(ev), len([e for e in ev if e["ph"] == "s"]), len(gaps)))


    # the bundled H200 recordings: real clocks, long launch calls
    for src in sorted(glob.glob(os.path.join(EXAMPLES, "*", ""))):
        name = os.path.basename(os.path.dirname(src))
        doc = export_perfetto(src, os.path.join(WORK, "ex_" + name + ".json"))
        ev = check_events(doc, src)
        # one time origin: the report's capture start, also without the
        # analysis; what predates it (the collector's NVML samples from
        # before the process started) is counted, never at a negative ts
        origin = json.loads(run("report", "-q", "--json", src).stdout)["time_origin_ns"]
        od = doc["otherData"]
        check(od["time_origin_ns"] == origin == od["base_realtime_ns"],
              "%s: perfetto origin %r, report's %r" % (name, od["time_origin_ns"], origin))
        bo = od["before_origin"]
        doc2 = export_perfetto(src, os.path.join(WORK, "ex_" + name + "_na.json"), "--no-analysis")
        check_events(doc2, src)
        check(doc2["otherData"]["time_origin_ns"] == origin,
              "%s: --no-analysis origin %r, report's %r" % (name, doc2["otherData"]["time_origin_ns"], origin))
        check(doc2["otherData"]["before_origin"] == bo, "%s: --no-analysis before_origin %r != %r" %
              (name, doc2["otherData"]["before_origin"], bo))
        print("ok perfetto examples/traces/%s: %d events, %d flows, before the origin %d clipped, "
              "%d dropped" % (name, len(ev), len([e for e in ev if e["ph"] == "s"]),
                              bo["clipped"], bo["dropped"]))


    # --max-output-mb: the user's budget; the timeline stays JSON and says it was cut
    src, _ = synth("pf_budget", "launch-bound", "steps=200")
    out = os.path.join(WORK, "budget.json")
    p = run("export", "-f", "perfetto", "--max-output-mb", "1", "-o", out, src)
    size = os.path.getsize(out)
    check(size <= (1 << 20) + (1 << 20), "--max-output-mb 1: %d bytes" % size)
    doc = strict_json(out)
    check("NOT ALL WRITTEN" in doc["otherData"].get("not_all_written", ""),
          "--max-output-mb 1: no not_all_written in otherData")
    check("NOT ALL WRITTEN: output budget of 1048576 bytes reached (--max-output-mb)" in p.stderr,
          "--max-output-mb 1: stderr %r" % p.stderr)
    p = run("export", "-f", "perfetto", "--max-output-mb", "0", "-o", out, src)
    check("NOT ALL WRITTEN" not in p.stderr and
          "not_all_written" not in strict_json(out)["otherData"], "--max-output-mb 0 cut")
    print("ok perfetto --max-output-mb: %d bytes at 1 MiB, whole at 0" % size)


# ---------------------------------------------------------------- truncated


def do_truncated():
    # enough records for several frames, so cuts and flips keep some of them
    src, truth = synth("tr_src", "mixed", "steps=1200")
    main = os.path.join(src, "1000.gtrace")
    data = open(main, "rb").read()
    n = len(data)
    cuts = sorted(set([1, 16, 100, 300, n // 10, n // 3, n // 2, (2 * n) // 3, n - 40, n - 1]))
    variants = [("cut%d" % c, data[:c]) for c in cuts if 0 < c < n]
    for off in (n // 4, n // 2, (3 * n) // 4):
        b = bytearray(data)
        for i in range(16):
            b[off + i] ^= 0x5A
        variants.append(("flip%d" % off, bytes(b)))
    variants.append(("garbage", b"\x00garbage" * 100))
    full = None
    for name, blob in variants:
        d = os.path.join(WORK, "tr_" + name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d)
        with open(os.path.join(d, "1000.gtrace"), "wb") as f:
            f.write(blob)
        out = os.path.join(WORK, "tr_%s.json" % name)
        p = subprocess.run([G, "export", "-f", "perfetto", "-o", out, d], capture_output=True, text=True)
        sanitizer_clean(p, name)
        check(p.returncode in (0, 1), "%s: exit %d: %s" % (name, p.returncode, p.stderr))
        # exit 1 only when nothing at all could be read
        check(p.returncode == 0 or "no trace could be read" in p.stderr,
              "%s: exit 1 with traces read: %s" % (name, p.stderr))
        check(os.path.exists(out), "%s: no output" % name)
        doc = strict_json(out)
        ev = check_events(doc, d, expected_flows(d))
        check("warning" in p.stderr, "%s: the damage was not reported: %r" % (name, p.stderr))
        if full is None:
            full = len(export_perfetto(src, os.path.join(WORK, "tr_full.json"))["traceEvents"])
        check(len(ev) <= full + 64, "%s: more events than the intact trace" % name)
        for fmt in ("csv", "json", "html"):
            # csv: several tables go to a directory (-o DIR/)
            q = subprocess.run([G, "export", "-q", "-f", fmt, "-o",
                                out + "." + fmt + ("/" if fmt == "csv" else ""), d],
                               capture_output=True, text=True)
            sanitizer_clean(q, "%s -f %s" % (name, fmt))
            check(q.returncode == 0, "%s: export -f %s failed: %s" % (name, fmt, q.stderr))
        json.loads(open(out + ".json", encoding="utf-8").read())
        check_html_file(out + ".html", None)
        print("ok truncated %s: %d events" % (name, len(ev)))


# ---------------------------------------------------------------- counts

WROTE = re.compile(r"gaptrace export: wrote [^:]*: (\d+) traces?, (\d+) records?,.*?"
                   r"(?:\((\d+) problems? reading the traces\))?$", re.M)

# (label, format and tables, output under WORK: a trailing / is a directory)
COUNT_EXPORTS = [
    ("csv -r all", ["-f", "csv", "-r", "all"], "all/"),
    ("csv", ["-f", "csv"], "default/"),
    ("json -r all", ["-f", "json", "-r", "all"], "all.json"),
    ("csv -r gaptrace_gaps", ["-f", "csv", "-r", "gaptrace_gaps"], "gaps.csv"),
    ("csv -r cuda_gpu_trace -r cuda_api_sum", ["-f", "csv", "-r", "cuda_gpu_trace", "-r",
                                               "cuda_api_sum"], "two/"),
    ("perfetto", ["-f", "perfetto"], "timeline.json"),
    ("html", ["-f", "html"], "report.html"),
]


def input_counts(src, *sl):
    """(traces read, their records, problems) as `report --json` lists them."""
    tr = json.loads(run("report", "-q", "--json", *sl, src).stdout)["traces"]
    return (sum(1 for t in tr if t["header_ok"]), sum(t["reader"]["records"] for t in tr),
            sum(t["problems"] + (1 if t["status"] else 0) for t in tr))


def check_counts(name, src, *sl):
    """Every export's 'wrote ...' line gives the input's traces, records and
    problems (whatever the tables and the format), and no warning twice."""
    want = input_counts(src, *sl)
    os.makedirs(os.path.join(WORK, "counts"), exist_ok=True)
    for label, args, out in COUNT_EXPORTS:
        path = os.path.join(WORK, "counts", out)
        p = run("export", *args, *sl, "-o", path, src)
        m = WROTE.search(p.stderr)
        check(m, "%s: export %s printed no counts: %r" % (name, label, p.stderr))
        got = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
        check(got == want, "%s: export %s: %d traces, %d records, %d problems; the traces "
              "hold %d, %d, %d (report --json traces[])" % ((name, label) + got + want))
        warn = [ln for ln in p.stderr.splitlines() if "warning" in ln]
        dup = sorted(set(ln for ln in warn if warn.count(ln) > 1))
        check(not dup, "%s: export %s warned more than once: %s" % (name, label, dup))


def do_counts():
    dirs = sorted(glob.glob(os.path.join(EXAMPLES, "*", "")))
    for d in dirs:
        check_counts(os.path.basename(os.path.dirname(d)), d)
    src, _ = synth("counts_src", "two-proc")
    check_counts("two-proc", src)
    pid = sorted(os.path.basename(f)[:-7] for f in glob.glob(os.path.join(src, "*.gtrace"))
                 if not f.endswith("nvml.gtrace"))[0]
    check_counts("two-proc --pid " + pid, src, "--pid", pid)
    # a damaged copy: a flipped frame and a cut tail
    bad = os.path.join(WORK, "counts_bad")
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(src, bad)
    main = os.path.join(bad, pid + ".gtrace")
    b = bytearray(open(main, "rb").read())
    for i in range(16):
        b[len(b) // 2 + i] ^= 0x5A
    open(main, "wb").write(bytes(b[:-40]))
    check(input_counts(bad)[2] > 0, "the damaged copy has no problem")
    check_counts("two-proc damaged", bad)
    print("ok counts: %d bundled traces, a synthetic pair, one process of it, a damaged copy"
          % len(dirs))


# ---------------------------------------------------------------- csv


def num(s):
    if s == "":
        return None
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    return head, [dict(zip(head, (num(v) for v in r))) for r in rows[1:]]


UNITS = re.compile(r"\((ns|bytes|%|MB/s)\)$")
UNITLESS = {"Instances", "Count", "Num Calls", "Name", "Operation", "CorrId", "GrdX", "GrdY",
            "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd", "SrcMemKd", "DstMemKd", "Device", "Ctx",
            "Strm", "Pid", "GPU", "UUID", "Gaps", "Kernels", "Memcpys", "Memsets", "Main Cause",
            "Next", "Next Pid", "Next Stream", "Prev", "Feeding Tid", "Last Call", "Rank", "Title",
            "Evidence", "Fix", "Severity", "Finding", "Readings", "Step", "Top Cause", "Range",
            "Site", "Role", "Frames"}


def close(a, b, tol):
    return abs(a - b) <= tol + 1e-9 * abs(b)


def do_csv():
    src, truth = synth("csv_src", "mixed", "steps=40", "kernel_jitter_ns=7777")
    d = os.path.join(WORK, "csv_out")
    shutil.rmtree(d, ignore_errors=True)
    run("export", "-q", "-f", "csv", "-r", "all", "-o", d + "/", src)
    t = {}
    for path in sorted(glob.glob(os.path.join(d, "*.csv"))):
        name = os.path.basename(path)[:-4]
        head, rows = read_csv(path)
        for h in head:
            check(UNITS.search(h) or h in UNITLESS, "%s: column %r has no unit" % (name, h))
        t[name] = rows
    check(set(t) >= {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                     "cuda_api_sum", "cuda_gpu_trace", "gaptrace_gpu_sum", "gaptrace_gaps"},
          "missing tables: %s" % sorted(t))
    gs = t["gaptrace_gpu_sum"]
    ks = t["cuda_gpu_kern_sum"]
    check(sum(r["Instances"] for r in ks) == truth["kernels"], "kernel count")
    check(sum(r["Total Time (ns)"] for r in ks) == sum(r["Kernel Time (ns)"] for r in gs),
          "kernel time: kern_sum != analysis")
    check(close(sum(r["Time (%)"] for r in ks), 100.0, 0.5), "Time (%) does not sum to 100")
    # Med / StdDev / Min / Max / totals recomputed from the per-kernel rows
    by = {}
    for r in t["cuda_gpu_trace"]:
        if r["GrdX"] is not None:
            by.setdefault(r["Name"], []).append(r["Duration (ns)"])
    check(len(by) == len(ks), "kernel names: trace %d, sum %d" % (len(by), len(ks)))
    for r in ks:
        v = by[r["Name"]]
        check(r["Instances"] == len(v) and r["Total Time (ns)"] == sum(v), "%s totals" % r["Name"])
        check(r["Min (ns)"] == min(v) and r["Max (ns)"] == max(v), "%s min/max" % r["Name"])
        check(close(r["Med (ns)"], statistics.median(v), 0.05), "%s median %r != %r" %
              (r["Name"], r["Med (ns)"], statistics.median(v)))
        sd = statistics.stdev(v) if len(v) > 1 else 0.0
        check(close(r["StdDev (ns)"], sd, 0.05), "%s stddev %r != %r" % (r["Name"], r["StdDev (ns)"], sd))
        check(close(r["Avg (ns)"], sum(v) / len(v), 0.05), "%s mean" % r["Name"])
    mt, ms = t["cuda_gpu_mem_time_sum"], t["cuda_gpu_mem_size_sum"]
    check(sum(r["Count"] for r in mt) == truth["memcpys"], "memcpy count")
    check(sum(r["Total Time (ns)"] for r in mt) == sum(r["Memcpy Time (ns)"] for r in gs),
          "memcpy time: mem_time_sum != analysis")
    check(sum(r["Total (bytes)"] for r in ms) == sum(r["Memcpy (bytes)"] for r in gs),
          "memcpy bytes: mem_size_sum != analysis")
    check(sum(r["Num Calls"] for r in t["cuda_api_sum"]) == truth["api_calls"], "api calls")
    # the per-GPU table equals the ground truth to the nanosecond
    for r, g in zip(gs, truth["gpus"]):
        for col, key in (("Window (ns)", "window_ns"), ("Busy (ns)", "busy_ns"),
                         ("Idle (ns)", "idle_ns"), ("Gaps", "ngaps")):
            check(r[col] == g[key], "gpu_sum %s %r != truth %r" % (col, r[col], g[key]))
        # the synthetic truth knows no start-up: what the analysis calls
        # start-up (a leading stretch far less busy than the rest) comes
        # out of the truth's causes, to the nanosecond
        taken = 0
        for cause, v in g["causes"].items():
            if cause in ("startup", "data_lost"):
                continue
            got = r["Idle %s (ns)" % cause]
            check(got <= v, "gpu_sum cause %s %r > truth %r" % (cause, got, v))
            taken += v - got
        check(taken == r.get("Idle startup (ns)", 0) + r.get("Idle data_lost (ns)", 0),
              "gpu_sum: startup %r != what it took from the truth's causes %r"
              % (r.get("Idle startup (ns)", 0), taken))
    for r in t["gaptrace_gaps"]:
        causes = sum(v for k, v in r.items() if k.endswith(" (ns)") and k.split(" ")[0] in
                     truth["gpus"][0]["causes"])
        check(causes == r["Duration (ns)"] == r["End (ns)"] - r["Start (ns)"], "gap row sums %r" % r)
    # CSV and JSON carry the same values
    for name, rows in t.items():
        js = json.loads(run("export", "-q", "-f", "json", "-r", name, src).stdout)
        check(len(js) == len(rows), "%s: json %d rows, csv %d" % (name, len(js), len(rows)))
        for a, b in zip(rows, js):
            check(list(a) == list(b), "%s: columns differ" % name)
            for k in a:
                x, y = a[k], b[k]
                if isinstance(x, float) or isinstance(y, float):
                    check(y is not None and close(float(x), float(y), 1e-9), "%s %s: %r vs %r" % (name, k, x, y))
                else:
                    check(x == y, "%s %s: csv %r json %r" % (name, k, x, y))
    # all tables in one JSON object, keyed by report name
    alljs = json.loads(run("export", "-q", "-f", "json", src).stdout)
    check("cuda_gpu_kern_sum" in alljs and "cuda_gpu_trace" not in alljs, "default json tables")
    print("ok csv: %d tables, %d kernels, %d trace rows" % (len(t), len(ks), len(t["cuda_gpu_trace"])))


# ---------------------------------------------------------------- html

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class WellFormed(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.tags = [], [], {}
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            if k in ("src", "srcset", "action") or (k in ("href", "xlink:href") and v and not v.startswith("#")):
                self.errors.append("external reference %s=%r" % (k, v))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else "nothing"))
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def check_html_file(path, ngpus):
    raw = open(path, "rb").read()
    text = raw.decode("utf-8")
    check(text.startswith("<!DOCTYPE html>"), "no doctype")
    for bad in ("<script", "@import", "url(", "http://", "https://", "<link", "<iframe", "<img"):
        check(bad not in text, "%s: found %r" % (path, bad))
    p = WellFormed()
    p.feed(text)
    p.close()
    check(not p.errors, "%s: %s" % (path, p.errors[:5]))
    check(not p.stack, "%s: unclosed %s" % (path, p.stack))
    check('id="findings"' in text or 'id="summary"' in text, "no findings or summary section")
    check(text.index('id="gpus"') > text.index('id="findings"' if 'id="findings"' in text
                                                else 'id="summary"'), "findings are not first")
    for sec in ("gpus", "steps", "gaps", "kernels", "copies", "nvtx", "syncs", "inputs"):
        check('id="%s"' % sec in text, "section %s missing" % sec)
    if ngpus is not None:
        check(text.count('aria-label="utilization over time"') == ngpus, "timelines != GPUs")
        check(text.count('aria-label="idle time by cause"') == ngpus, "cause charts != GPUs")
    return len(raw), "".join(p.text)


def same_findings(src, page, text):
    """The HTML shows the report's findings (same analysis options), in order."""
    rep = json.loads(run("report", "--json", src).stdout)
    titles = [f["title"] for f in rep.get("findings", [])]
    pos = [text.find(t) for t in titles]
    check(all(p >= 0 for p in pos) and pos == sorted(pos),
          "%s: findings differ from gaptrace report's: %r" % (page, titles))
    check(open(page, encoding="utf-8").read().count('<div class="finding ') == len(titles),
          "%s: number of findings differs from the report" % page)
    return len(titles)


def do_html():
    src, truth = synth("html1", "compute", "steps=3")
    out = os.path.join(WORK, "one.html")
    run("export", "-q", "-f", "html", "-o", out, src)
    check_html_file(out, 1)
    src, truth = synth("html8", "multi-gpu", "gpus=8", "steps=20")
    out = os.path.join(WORK, "eight.html")
    run("export", "-q", "-f", "html", "-o", out, src)
    size8, text = check_html_file(out, 8)
    gs = json.loads(run("export", "-q", "-f", "json", "-r", "gaptrace_gpu_sum", src).stdout)
    for r in gs:
        check("%.1f%%" % r["Utilization (%)"] in text, "GPU %d utilization not shown" % r["GPU"])
    same_findings(src, out, text)
    check(check_wall(src, out) == 8, "eight.html: not 8 breakdowns")
    check_parity(src, out)
    sizes = []
    for steps in (50, 2000):
        src, truth = synth("html_s%d" % steps, "mixed", "steps=%d" % steps)
        out = os.path.join(WORK, "mixed%d.html" % steps)
        run("export", "-q", "-f", "html", "-o", out, src)
        size, text = check_html_file(out, 1)
        sizes.append(size)
        n = same_findings(src, out, text)
        check(n > 0, "mixed preset: no finding to compare")
        check_parity(src, out)
        print("ok html mixed steps=%d: %d kernels, %d bytes" % (steps, truth["kernels"], sizes[-1]))
    check(sizes[1] < 1.6 * sizes[0] and sizes[1] < 2_000_000, "report grows with the trace: %r" % sizes)
    src, truth = synth("html_steps", "steps")  # NVTX steps and ranges, one slow step
    out = os.path.join(WORK, "steps.html")
    run("export", "-q", "-f", "html", "-o", out, src)
    check_html_file(out, 1)
    seen = check_parity(src, out)
    check(seen["nvtx steps"] and seen["nvtx ranges"], "steps preset: %r" % dict(seen))
    print("ok html steps preset: Steps, Longest gaps and NVTX ranges as in the text report")
    print("ok html: 1 GPU, 8 GPUs (%d bytes), size bounded %r" % (size8, sizes))
    do_wall()


WALL_HEAD = "Where the wall time went, "
LABEL_W = 6.8  # SVG units per character of an 11px label, as ex_html.c assumes


def text_breakdowns(src):
    """{gpu: (caption, [(id, share, time)])} from `gaptrace report`'s "Where
    the wall time went" blocks (read unwrapped: --width 100000)."""
    res, cur = {}, None
    for line in run("report", "--width", "100000", src).stdout.splitlines():
        m = re.match(r"Where the wall time went, GPU (\d+) ", line)
        if m:
            cur = int(m.group(1))
            check(line.endswith(":"), "unexpected breakdown header %r" % line)
            res[cur] = (line[len(WALL_HEAD):-1], [])
            continue
        m = re.match(r"  (\S+) +(\d+\.\d%) +(\S+ \S+)(  \(.*\))?$", line) if cur is not None else None
        if m:
            res[cur][1].append(m.groups()[:3])
        else:
            cur = None
    return res


def check_wall(src, page):
    """The HTML breakdown of every GPU equals the text report's: caption (and
    so its denominator), part ids, shares and times in order; each bar segment
    is a part with its share as its width and the table's color; labels fit."""
    want = text_breakdowns(src)
    check(want, "%s: the text report has no breakdown" % src)
    text = open(page, encoding="utf-8").read()
    figs = {int(g): body for g, body in
            re.findall(r'<figure class="wall" data-gpu="(\d+)">(.*?)</figure>', text, re.S)}
    check(sorted(figs) == sorted(want), "%s: breakdowns for GPUs %r, text has %r" %
          (page, sorted(figs), sorted(want)))
    for gpu, (head, parts) in want.items():
        body = figs[gpu]
        where = "%s GPU %d" % (page, gpu)
        cap = re.search(r"<figcaption>(.*?)</figcaption>", body, re.S).group(1)
        denom = html.unescape(re.search(r'<b class="denom">(.*?)</b>', cap).group(1))
        cap = html.unescape(re.sub(r"<[^>]+>", "", cap))
        win = re.search(r"busy \d+\.\d% of (\S+ \S+),", head).group(1)
        m = re.search(r"; (shares are of the (\S+ \S+) steady state \(.* of start-up set aside[^()]*\))$", head)
        if m:
            check(cap == head, "%s: caption %r, text %r" % (where, cap, head))
            check(denom == m.group(1), "%s: denominator %r, text %r" % (where, denom, m.group(1)))
            of = "the %s steady state" % m.group(2)
        else:
            check(cap == head + "; shares are of the %s window" % win,
                  "%s: caption %r, text %r" % (where, cap, head))
            check(denom == "shares are of the %s window" % win, "%s: denominator %r" % (where, denom))
            of = "the %s window" % win
        rows = [(i, c, html.unescape(sh), html.unescape(t)) for i, c, sh, t in re.findall(
            r'<tr data-part="([^"]+)"><td class="l"><i class="sw" data-id="\1" '
            r'style="background:(#[0-9a-f]{6})"></i>\1</td><td>([^<]*)</td><td>([^<]*)</td>', body)]
        check([(i, sh, t) for i, c, sh, t in rows] == [tuple(p) for p in parts],
              "%s: table %r, text %r" % (where, rows, parts))
        color = {i: c for i, c, sh, t in rows}
        check(len(set(color.values())) == len(color), "%s: two parts share a color: %r" % (where, color))
        segs = re.findall(r'<g><title>([^<]*)</title><rect data-id="([^"]+)" x="([\d.]+)" '
                          r'y="([\d.]+)" width="([\d.]+)" height="[\d.]+" fill="(#[0-9a-f]{6})"/>'
                          r'(?:<text [^>]*>([^<]*)</text>)?</g>', body)
        share = {i: sh for i, sh, t in parts}
        drawn, steady_w = set(), 0.0
        for title, i, x, y, w, fill, label in segs:
            title, w = html.unescape(title), float(w)
            check(i in color, "%s: segment %r is no part of the text" % (where, i))
            check(fill == color[i], "%s: %s drawn %s, table says %s" % (where, i, fill, color[i]))
            seg_of = "the %s window" % win if i == "startup" else of
            check(title.startswith("%s: %s of %s, " % (i, share[i], seg_of)) or
                  (i == "startup" and title.startswith("startup %s of %s" % (share[i], seg_of))),
                  "%s: segment title %r (share %s of %s)" % (where, title, share[i], seg_of))
            check(abs(w / 960 - float(share[i][:-1]) / 100) <= 0.0006,
                  "%s: %s is %.1f units wide for %s" % (where, i, w, share[i]))
            check(float(y) == 38.0 if i == "startup" else float(y) == 2.0,
                  "%s: %s not on its bar" % (where, i))
            if i != "startup":
                steady_w += w
                if label:
                    check(LABEL_W * len(html.unescape(label)) + 10 <= w,
                          "%s: label %r clipped in %.1f units" % (where, label, w))
            drawn.add(i)
        for i, sh, t in parts:
            check((i in drawn) == (t != "0 ns"), "%s: part %s (%s) drawn: %r" % (where, i, t, i in drawn))
        check(abs(steady_w - 960) <= 0.1 * len(segs) + 0.5, "%s: the bar is %.1f units" % (where, steady_w))
    # one color per id on the whole page: bars, tables, legends, charts
    ids = {}
    for i, c in re.findall(r'data-id="([^"]+)"[^>]*?(?:fill="|background:)(#[0-9a-f]{6})', text):
        ids.setdefault(i, set()).add(c)
    multi = {i: c for i, c in ids.items() if len(c) > 1}
    check(not multi, "%s: ids drawn in several colors: %r" % (page, multi))
    return len(want)


def do_wall():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "traces")
    traces = sorted(d for d in glob.glob(os.path.join(root, "*"))
                    if os.path.isdir(d) and glob.glob(os.path.join(d, "*.gtrace")))
    names = {os.path.basename(d) for d in traces}
    check({"item_metric", "two_procs", "periodic_ckpt", "nvtx_steps", "exact_counts"} <= names,
          "bundled traces missing: %r" % names)
    seen = collections.Counter()
    for d in traces:
        out = os.path.join(WORK, "wall_%s.html" % os.path.basename(d))
        run("export", "-q", "-f", "html", "-o", out, d)
        check_html_file(out, None)
        n = check_wall(d, out)
        here = check_badges(d, out) + check_parity(d, out)
        for kind in PARITY_EXPECT.get(os.path.basename(d), ()):
            check(here[kind], "%s: no %s compared: %r" % (d, kind, dict(here)))
        seen.update(here)
        print("ok html wall time, steps, longest gaps, NVTX ranges, badges %s: %d GPU(s) as in the "
              "text report" % (os.path.basename(d), n))
    # the bundled traces have every kind: the checks above compared something
    for kind in ("steady state badge", "window badge", "nvtx steps", "period steps", "no steps",
                 "nvtx ranges", "no nvtx ranges", "gaps"):
        check(seen[kind], "no bundled trace has %s: %r" % (kind, dict(seen)))
    print("ok html parity with the text report: %r" % dict(seen))


# The HTML's Steps, Longest gaps and NVTX ranges sections against the text
# report's (the same figures, printed the same) and the JSON report's (the
# same numbers, to the printed rounding).

DUR_UNIT = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
TOP_ROWS = 20  # the HTML's table rows (GT_EXPORT_DEFAULT_TOP_ROWS)
TEXT_ROWS = {"steps": 5, "gaps": 5, "nvtx": 20}  # the text report's (report_text.c, report_steps.c)
# what these bundled traces must have had compared (the other kinds, each
# badge wording among them, by some bundled trace: do_wall)
PARITY_EXPECT = {"nvtx_steps": ("nvtx steps", "nvtx ranges", "gaps"),
                 "exact_counts": ("no nvtx ranges", "gaps")}


def dur_ns(s):
    """A printed duration ("7.97 ms") -> (ns, half a unit of its last digit)."""
    m = re.fullmatch(r"(\d+)(?:\.(\d+))? (ns|us|ms|s)", s)
    check(m, "not a printed duration: %r" % s)
    unit, dec = DUR_UNIT[m.group(3)], len(m.group(2) or "")
    return float("%s.%s" % (m.group(1), m.group(2) or "0")) * unit, 0.5 * unit * 10 ** -dec


def same_dur(printed, ns, what):
    v, tol = dur_ns(printed)
    check(abs(v - ns) <= tol * 1.0001, "%s: printed %s, JSON %d ns" % (what, printed, ns))


T_REL = r"[+-]\d+\.\d{6} s"
T_DUR = r"\d+(?:\.\d+)? (?:ns|us|ms|s)"
T_SLOW = re.compile(r"  #(\d+) +(%s) +(%s)(?: \((\d+\.\dx) median\))?  busy (\d+%%), "
                    r"(?:mostly (\S+) (%s)|no idle time)$" % (T_REL, T_DUR, T_DUR))
T_GAP = re.compile(r" +(\d+)  (%s) +(%s)  (\S+) +(\d+%%)  (.*) -> (.*?)"
                   r"(?: \(tid (\d+)(?:, after (.*))?\))?$" % (T_REL, T_DUR))
T_NVTX = re.compile(r" +(\d+\.\d%%) +(%s) +(\d+) +(%s) +(%s) +(%s) +(%s)  (.*)$" % ((T_DUR,) * 5))


def text_sections(src):
    """From `gaptrace report` (unwrapped): per GPU its Steps line (after the
    label), slowest-step rows and longest-gap rows, as the HTML's cells; and
    the NVTX range rows."""
    gpus, nvtx, cur, mode = {}, [], None, None
    for line in run("report", "--width", "100000", src).stdout.splitlines():
        m = re.match(r"== GPU (\d+):", line)
        if m:
            cur, mode = gpus.setdefault(int(m.group(1)), {"steps": None, "slow": [], "gaps": []}), None
            continue
        m = re.match(r"Steps +(.*)$", line)
        if m and cur is not None:
            cur["steps"], mode = m.group(1), "slow"
            continue
        if line.startswith("Longest gaps") or line.startswith("NVTX ranges"):
            mode = "gaps" if line.startswith("Longest") else "nvtx"
            continue
        m = {"slow": T_SLOW, "gaps": T_GAP, "nvtx": T_NVTX}.get(mode)
        m = m and m.match(line)
        if mode == "slow" and m:
            i, start, length, xm, busy, cause, ct = m.groups()
            cur["slow"].append(["#" + i, start, length, xm or "-", busy, cause or "no idle time",
                                ct or "-"])
        elif mode == "gaps" and m:
            i, start, length, cause, pc, prev, nxt, tid, call = m.groups()
            feed = "-" if not tid else "tid %s" % tid + (", after %s" % call if call else "")
            cur["gaps"].append([i, start, length, cause, pc, prev, nxt, feed])
        elif mode == "nvtx" and m:
            nvtx.append([m.group(8), *m.groups()[:7]])
        elif not line.startswith("  "):  # a table's header row is indented
            mode = None
    return gpus, nvtx


def html_section(text, sec):
    """The body of <h2 id=sec> up to the next <h2>."""
    check('<h2 id="%s">' % sec in text, "no %s section" % sec)
    i = text.index('<h2 id="%s">' % sec)
    return text[i:text.index("<h2", i + 1)]


def html_rows(tab):
    """The cells (text) of each row of a table but its header."""
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", tab, re.S) if "<th" not in tr]


def html_per_gpu(body):
    return {int(g): b for g, b in re.findall(r"<details(?: open)?><summary>GPU (\d+)</summary>(.*?)</details>",
                                             body, re.S)}


def same_label(text, page, what):
    """The text cuts a name to its width and ends it with '...'."""
    ok = page.startswith(text[:-3]) if text.endswith("...") else page == text
    check(ok, "%s: HTML %r, text %r" % (what, page, text))


def check_steps(src, gi, want, body, js, seen):
    where = "%s GPU %d steps" % (src, gi)
    m = re.search(r'<p class="steps" data-gpu="%d">(.*?)</p>' % gi, body, re.S)
    st = js.get("steps")
    if want["steps"] is None:
        check(not m and "No steps" in body and not st, "%s: HTML %r, text none, JSON %r" %
              (where, m and m.group(1), st))
        seen["no steps"] += 1
        return
    line = html.unescape(m.group(1)) if m else None
    check(line == want["steps"], "%s: HTML %r, text %r" % (where, line, want["steps"]))
    rows = html_rows(body)
    check(rows[:len(want["slow"])] == want["slow"] and len(rows) == min(st["count"], TOP_ROWS) and
          len(want["slow"]) == min(st["count"], TEXT_ROWS["steps"]),
          "%s: HTML rows %r, text %r" % (where, rows[:len(want["slow"])], want["slow"]))
    c = re.match(r"(\d+) x .*: median (%s), p90 (%s), max (%s);" % (T_DUR, T_DUR, T_DUR), line)
    check(c and int(c.group(1)) == st["count"], "%s: count %r, JSON %d" % (where, line, st["count"]))
    for k, v in zip(("median_ns", "p90_ns", "max_ns"), c.groups()[1:]):
        same_dur(v, st[k], "%s %s" % (where, k))
    slow = sorted(st["items"], key=lambda s: (-s["dur_ns"], s["index"]))[0]
    if st["source"] != "period":
        check(rows[0][0] == "#%d" % slow["index"], "%s: slowest %r, JSON #%d" % (where, rows[0], slow["index"]))
        same_dur(rows[0][2], slow["dur_ns"], where + " slowest length")
    seen["period steps" if st["source"] == "period" else "nvtx steps"] += 1


# The cause names a person reads (gt_cause_label) -> JSON cause keys.
CAUSE_OF_LABEL = {"host_work": "host_busy", "after_sync": "sync_turnaround",
                  "launching": "launch_bound"}


def check_gaps(src, gi, want, body, js, seen):
    where = "%s GPU %d longest gaps" % (src, gi)
    rows, lg = html_rows(body), js.get("longest_gaps", [])
    check(len(rows) == min(len(lg), TOP_ROWS), "%s: %d rows, JSON %d gaps" % (where, len(rows), len(lg)))
    check(len(want["gaps"]) == min(TEXT_ROWS["gaps"], len(lg)), "%s: text %d rows" % (where, len(want["gaps"])))
    for r, t, j in zip(rows, want["gaps"], lg):
        check(r[:5] + r[7:] == t[:5] + t[7:], "%s: HTML %r, text %r" % (where, r, t))
        same_label(t[5], r[5], where + " work before")
        same_label(t[6], r[6], where + " work after")
        same_dur(r[2], j["length"], where + " length")
        check(CAUSE_OF_LABEL.get(r[3], r[3]) == j["main_cause"],
              "%s: cause %s, JSON %s" % (where, r[3], j["main_cause"]))
    seen["gaps"] += bool(rows)


def check_parity(src, page):
    """The page's Steps, Longest gaps and NVTX ranges equal the text report's
    rows (its first ones: the HTML has more) and the JSON report's numbers."""
    text = open(page, encoding="utf-8").read()
    want, nvtx = text_sections(src)
    rep = json.loads(run("report", "--json", src).stdout)
    seen = collections.Counter()
    steps, gaps = html_per_gpu(html_section(text, "steps")), html_per_gpu(html_section(text, "gaps"))
    for g in rep["gpus"]:
        gi = g["index"]
        if not g["window_ns"]:
            continue
        check(gi in want and gi in steps and gi in gaps, "%s: GPU %d not in every section" % (src, gi))
        check_steps(src, gi, want[gi], steps[gi], g, seen)
        check_gaps(src, gi, want[gi], gaps[gi], g, seen)
    body = html_section(text, "nvtx")
    rows, js = html_rows(body), (rep.get("nvtx_sum") or {}).get("ranges", [])
    check(rows[:len(nvtx)] == nvtx and len(rows) == min(len(js), TOP_ROWS) and
          len(nvtx) == min(len(js), TEXT_ROWS["nvtx"]),
          "%s nvtx: HTML %r, text %r, JSON %d" % (src, rows, nvtx, len(js)))
    for r, j in zip(rows, js):
        check(r[0] == j["name"] and int(r[3]) == j["count"], "%s nvtx: %r, JSON %r" % (src, r, j))
        same_dur(r[2], j["total_ns"], "%s nvtx %s total" % (src, r[0]))
    check(rows or "No NVTX ranges" in body, "%s: empty NVTX section unexplained" % src)
    seen["nvtx ranges" if rows else "no nvtx ranges"] += 1
    return seen


def check_badges(src, page):
    """Each finding's share badge says what the share is of, as the text
    report's breakdown of its GPU does: the steady state when start-up was
    set aside, else the window."""
    heads = {gpu: head for gpu, (head, parts) in text_breakdowns(src).items()}
    text = open(page, encoding="utf-8").read()
    seen = collections.Counter()
    for title, gpu in re.findall(r'<span class="badge" title="([^"]*)">[\d.]+% of GPU (\d+)</span>', text):
        title, head = html.unescape(title), heads[int(gpu)]
        m = re.search(r"; (shares are of the \S+ \S+ steady state \(.* of start-up set aside[^()]*\))$", head)
        if m:
            want = "share of the steady state the finding explains: " + m.group(1)
        else:
            win = re.search(r"busy \d+\.\d% of (\S+ \S+),", head).group(1)
            want = "share of this GPU's window the finding explains: shares are of the %s window" % win
        check(title == want, "%s GPU %s: badge title %r, want %r" % (page, gpu, title, want))
        seen["steady state badge" if m else "window badge"] += 1
    check(len(re.findall(r'<span class="badge" title="share of', text)) == sum(seen.values()),
          "%s: a share badge not matched" % page)
    return seen


# ---------------------------------------------------------------- screenshot


def find_chromium():
    env = os.environ.get("GAPTRACE_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        p = shutil.which(name)
        if p:
            return p
    return None


def png_pixels(path):
    """Decode an 8-bit RGB/RGBA non-interlaced PNG: (width, height, rows)."""
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    pos, idat, w = 8, [], None
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if ctype == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            check(depth == 8 and color in (2, 6) and interlace == 0, "PNG kind %d/%d" % (depth, color))
            bpp = 3 if color == 2 else 4
        elif ctype == b"IDAT":
            idat.append(body)
        pos += 12 + length
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ft == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ft == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ft == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def recorded_trace():
    """The first trace directory under examples/traces/ (recorded on the GPU
    machine), or None while the repository has none."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "traces")
    for d in sorted(glob.glob(os.path.join(root, "*"))):
        if os.path.isdir(d) and glob.glob(os.path.join(d, "*.gtrace")):
            return d
    return None


def do_screenshot(keep, trace):
    chrome = find_chromium()
    if not chrome:
        print("SKIP: no Chromium found (install the Debian package 'chromium', or set "
              "GAPTRACE_CHROMIUM); the HTML report was not rendered")
        return SKIP
    src = trace or recorded_trace()
    page = os.path.join(WORK, "report.html")
    if src:
        run("export", "-q", "-f", "html", "-o", page, src)
    else:
        src, truth = synth("shot_src", "mixed", "steps=60")
        run("export", "-q", "-f", "html", "--title", "synthetic trace (gaptrace synth -p mixed)",
            "-o", page, src)
    png = os.path.join(WORK, "report.png")
    if os.path.exists(png):
        os.unlink(png)
    width, height = 1280, 1800
    profile = tempfile.mkdtemp(prefix="gt-chromium-", dir=WORK)
    cmd = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-extensions", "--hide-scrollbars", "--force-device-scale-factor=1",
           "--user-data-dir=" + profile, "--screenshot=" + png,
           "--window-size=%d,%d" % (width, height), "file://" + os.path.abspath(page)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)  # chromium, not ours
    shutil.rmtree(profile, ignore_errors=True)
    check(os.path.exists(png), "chromium wrote no screenshot (exit %d): %s" % (p.returncode, p.stderr[-2000:]))
    w, h, bpp, rows = png_pixels(png)
    check((w, h) == (width, height), "screenshot is %dx%d, expected %dx%d" % (w, h, width, height))
    colors, nonwhite, total = set(), 0, 0
    for y in range(0, h, 3):
        r = rows[y]
        for x in range(0, w, 3):
            px = r[x * bpp:x * bpp + 3]
            colors.add(px)
            total += 1
            if px != b"\xff\xff\xff":
                nonwhite += 1

    def near(c):
        want = bytes.fromhex(c)
        return any(all(abs(a - b) <= 6 for a, b in zip(px, want)) for px in colors)

    check(len(colors) >= 64, "screenshot has only %d colors: blank?" % len(colors))
    check(nonwhite / total >= 0.05, "screenshot is %.1f%% non-white: blank?" % (100 * nonwhite / total))
    check(near("2f6fbd"), "the busy color of the utilization chart is not in the screenshot")
    causes = ["e8a317", "d1242f", "8250df", "1b9aaa", "9a6700", "e85aad", "8c959f"]
    check(sum(near(c) for c in causes) >= 2, "idle-cause colors are not in the screenshot")
    if keep:
        shutil.copyfile(png, keep)
    print("ok screenshot %s: %dx%d, %d colors, %.0f%% non-white" %
          (png, w, h, len(colors), 100 * nonwhite / total))
    return 0


def main():
    global G, WORK
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["perfetto", "truncated", "counts", "csv", "html",
                                      "screenshot"])
    ap.add_argument("--gaptrace", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--keep", help="screenshot: also copy the PNG here")
    ap.add_argument("--trace", help="screenshot: report of this trace (default: the first "
                    "directory of examples/traces/, else a synthetic trace)")
    a = ap.parse_args()
    G = os.path.abspath(a.gaptrace)
    WORK = os.path.abspath(a.work)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    try:
        if a.check == "perfetto":
            do_perfetto()
        elif a.check == "truncated":
            do_truncated()
        elif a.check == "counts":
            do_counts()
        elif a.check == "csv":
            do_csv()
        elif a.check == "html":
            do_html()
        else:
            return do_screenshot(a.keep, a.trace)
    except Fail as e:
        print("FAIL %s: %s" % (a.check, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
