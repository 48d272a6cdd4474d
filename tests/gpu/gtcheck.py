#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gtcheck: the checks behind the tests/gpu/*.sh scripts.

Subcommands (each prints what it compared; exit 0 = pass, 1 = fail,
2 = could not check):
  example-json STDOUT            print the example's JSON line found in a stdout file
  timing STDOUT KEY              print the example's timing[KEY] (nothing when absent)
  same-output [--keys K,K] A B   the two stdout files carry the same example result
                                 (keys example/result/expect/expect_min, or --keys;
                                 timing ignored)
  counts TRACE...                record counts of traces (files or directories) as JSON
  check-counts --stdout F TRACE...
                                 compare a trace's counts with the example's "expect"
                                 (exact) and "expect_min" (at least)
  notes TRACE...                 the GT_REC_NOTE records of traces (code and text)
  torture-check --stdout F [--exact] [--capture] [--json OUT] TRACE...
                                 tests/gpu/torture.sh's verdict on one run's traces:
                                 no loss record, no bad/missing frame, no torn tail,
                                 at least one kernel; --exact: also "expect" (==) and
                                 "expect_min" (>=) of the example; --capture: an ARMED
                                 note. Last line: a short summary for the table
  findings --report R --stdout F --name N
                                 check that the finding the example expects ranks
                                 first in `gaptrace report --json` output R
  table TSV                      print a tab-separated file as an aligned table
  torture-summary TSV            tests/gpu/torture.sh's rows folded per case and mode:
                                 runs, passed, failed, hangs, skipped, median wall
                                 time, traced/untraced ratio, capture return time

Traces are read through `gaptrace dump` (option --gaptrace, default
$GAPTRACE or build-gpu/tools/gaptrace), so this file depends only on the
dump's text form, parsed by key=value tokens.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

# API calls that launch work: a kernel's correlation id matches one of these.
LAUNCH_APIS = {"__cudaLaunchKernel", "cudaLaunchKernel", "cudaLaunchKernelExC",
               "cudaLaunchCooperativeKernel", "cudaGraphLaunch", "cuLaunchKernel",
               "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "cuGraphLaunch"}


# ----------------------------------------------------------------------------
# Example stdout
# ----------------------------------------------------------------------------
def example_json(path):
    """The last JSON object line with an "example" key in a stdout file."""
    found = None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{") and '"example"' in line:
                    try:
                        found = json.loads(line)
                    except ValueError:
                        pass
    except OSError:
        return None
    return found


SAME_KEYS = ("example", "result", "expect", "expect_min")


def comparable(obj, keys=SAME_KEYS):
    return {k: obj.get(k) for k in keys}


def cmd_timing(a):
    """Print timing[KEY] of the example's JSON line (nothing when absent)."""
    obj = example_json(a.stdout)
    v = (obj or {}).get("timing", {}).get(a.key)
    if v is not None:
        print(v)
    return 0


def cmd_example_json(a):
    obj = example_json(a.stdout)
    if obj is None:
        print("no example JSON line in %s" % a.stdout)
        return 2
    print(json.dumps(obj))
    return 0


def cmd_same_output(a):
    x, y = example_json(a.a), example_json(a.b)
    if x is None or y is None:
        print("missing example JSON line: %s" % (a.a if x is None else a.b))
        return 1
    keys = tuple(k for k in a.keys.split(",") if k) if a.keys else SAME_KEYS
    cx, cy = comparable(x, keys), comparable(y, keys)
    if cx == cy:
        print("same result: %s" % json.dumps(cx.get("result"), sort_keys=True))
        return 0
    for k in cx:
        if cx[k] != cy[k]:
            print("differs in %s:\n  %s\n  %s" % (k, json.dumps(cx[k], sort_keys=True),
                                                  json.dumps(cy[k], sort_keys=True)))
    return 1


# ----------------------------------------------------------------------------
# Traces, through `gaptrace dump`
# ----------------------------------------------------------------------------
_SUFFIX = re.compile(r"(_v\d+|_ptsz|_ptds)$")
_NVTX_NAME = re.compile(r" tid=\d+ (.*)$")


def norm_api(name):
    """cudaLaunchKernel_ptsz_v7000 -> cudaLaunchKernel, cuMemcpyHtoD_v2 -> cuMemcpyHtoD."""
    while True:
        m = _SUFFIX.search(name)
        if not m:
            return name
        name = name[:m.start()]


def trace_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "*.gtrace")))
        else:
            out.append(p)
    return out


def kv(tokens):
    d = {}
    for t in tokens:
        k, sep, v = t.partition("=")
        if sep:
            d[k] = v
    return d


def dump_lines(gaptrace, path):
    """Run `gaptrace dump PATH`; yields lines; raises RuntimeError on failure.
    Its stderr goes to a temporary file (a pipe could fill and stall it)."""
    with tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen([gaptrace, "dump", path], stdout=subprocess.PIPE, stderr=err,
                             text=True, errors="replace")
        done = False
        try:
            for line in p.stdout:
                yield line.rstrip("\n")
            done = True
        finally:
            if not done:  # the caller stopped early
                p.kill()
            p.stdout.close()
            rc = p.wait()
        if rc != 0:
            err.seek(0)
            raise RuntimeError("gaptrace dump %s failed (exit %d): %s"
                               % (path, rc, err.read().strip()[-300:]))


def count_traces(gaptrace, paths, keep_kernels=False):
    """Counts of records by kind (see the module doc). Traces written by the
    collector (producer=2: NVML samples) are counted under "collector_traces"
    only."""
    c = collections.Counter()
    notes = []
    kernels = []  # (name, duration ns) when keep_kernels
    files = trace_files(paths)
    if not files:
        raise RuntimeError("no .gtrace files in %s" % " ".join(paths))
    for f in files:
        api_corr = set()
        kern_corr, mcpy_corr = [], []
        launch_tids, streams = set(), set()
        producer = None
        for line in dump_lines(gaptrace, f):
            if line.startswith("# format"):
                producer = kv(line.split()).get("producer")
                if producer == "2":
                    break
                continue
            if line.startswith("# frames="):
                s = kv(line[2:].split())
                for k in ("bad_frames", "missing_frames", "tail_bytes"):
                    c[k] += int(s.get(k, 0))
                c["records"] += int(s.get("records", 0))
                continue
            tok = line.split()
            if not tok:
                continue
            t = tok[0]
            if t == "kernel":
                d = kv(tok)
                name = line.split(" name=", 1)[1] if " name=" in line else "?"
                c["kernel"] += 1
                c["kernel:" + name] += 1
                if d.get("graph", "0") != "0":
                    c["kernel_graph"] += 1
                kern_corr.append(d.get("corr"))
                streams.add((d.get("ctx"), d.get("stream")))
                if keep_kernels:
                    kernels.append((name, int(tok[2].lstrip("+"))))
            elif t == "memcpy":
                d = kv(tok)
                kind = tok[3] if len(tok) > 3 else "?"
                src, _, dst = (tok[4] if len(tok) > 4 else "?->?").partition("->")
                c["memcpy"] += 1
                c["memcpy:" + kind] += 1
                host = src if kind.startswith("Hto") else dst if kind.endswith("toH") else None
                if host:
                    c["memcpy:%s:%s" % (kind, host)] += 1
                mcpy_corr.append(d.get("corr"))
            elif t == "memset":
                c["memset"] += 1
            elif t == "sync":
                c["sync"] += 1
                c["sync:" + (tok[3] if len(tok) > 3 else "?")] += 1
            elif t == "api":
                d = kv(tok)
                name = norm_api(tok[-1])
                c["api"] += 1
                c["api:" + name] += 1
                api_corr.add(d.get("corr"))
                if name in LAUNCH_APIS:
                    launch_tids.add(d.get("tid"))
            elif t == "loss":
                d = kv(tok)
                c["loss"] += int(d.get("count", 0))
                c["loss_records"] += 1
                c["loss:" + (tok[2] if len(tok) > 2 else "?")] += int(d.get("count", 0))
            elif t == "nvtx":
                # nvtx TS id=N flags=F tid=T NAME (NAME "-" on END records)
                d = kv(tok)
                try:
                    flags = int(d.get("flags", "0"))
                except ValueError:
                    flags = 0
                kind = ("instant" if flags & 1 else "start" if flags & 2
                        else "end" if flags & 4 else "other")
                c["nvtx"] += 1
                c["nvtx:" + kind] += 1
                m = _NVTX_NAME.search(line)
                if m and kind in ("start", "instant") and m.group(1) != "-":
                    c["nvtx:" + m.group(1)] += 1
            elif t == "note":
                d = kv(tok)
                code = d.get("code", "?")
                c["note:" + code] += 1
                notes.append((code, line.split(" code=%s " % code, 1)[-1]))
        if producer == "2":
            c["collector_traces"] += 1
            continue
        c["traces"] += 1
        c["kernel_corr_matched"] += sum(1 for x in kern_corr if x in api_corr)
        c["memcpy_corr_matched"] += sum(1 for x in mcpy_corr if x in api_corr)
        c["launch_threads"] += len(launch_tids)
        c["streams_with_kernels"] += len(streams)
    return c, notes, kernels


def gaptrace_bin(a):
    return a.gaptrace or os.environ.get("GAPTRACE") or "build-gpu/tools/gaptrace"


def cmd_counts(a):
    """`counts` prints the counts as JSON; `notes` prints the notes."""
    try:
        c, notes, _ = count_traces(gaptrace_bin(a), a.traces)
    except RuntimeError as e:
        print("error: %s" % e)
        return 2
    if a.cmd == "notes":
        for code, text in notes:
            print("note code=%s %s" % (code, text))
    else:
        print(json.dumps(dict(sorted(c.items()))))
    return 0


def cmd_check_counts(a):
    ex = example_json(a.stdout)
    if ex is None:
        print("no example JSON line in %s" % a.stdout)
        return 2
    try:
        c, _, _ = count_traces(gaptrace_bin(a), a.traces)
    except RuntimeError as e:
        print("error: %s" % e)
        return 2
    rows = []
    for k, v in (ex.get("expect") or {}).items():
        got = c.get(k, 0)
        if v == "all" and k.endswith("_corr_matched"):
            v = c.get(k[:-len("_corr_matched")], 0)
        rows.append((k, "== %s" % v, got, got == v))
    for k, v in (ex.get("expect_min") or {}).items():
        got = c.get(k, 0)
        rows.append((k, ">= %s" % v, got, got >= v))
    # Implicit: a clean run of a program that exited normally is read whole.
    for k in ("bad_frames", "missing_frames", "tail_bytes"):
        rows.append((k + " (implicit)", "== 0", c.get(k, 0), c.get(k, 0) == 0))
    rows.append(("traces (implicit)", ">= 1", c.get("traces", 0), c.get("traces", 0) >= 1))
    bad = [r for r in rows if not r[3]]
    w = max(len(r[0]) for r in rows)
    for k, want, got, ok in rows:
        print("  %-*s  want %-10s got %-10s %s" % (w, k, want, got, "ok" if ok else "MISMATCH"))
    info = {k: v for k, v in c.items() if k in ("kernel", "memcpy", "memset", "api", "sync",
                                                 "records", "loss", "launch_threads")}
    print("  counts: %s" % json.dumps(dict(sorted(info.items()))))
    print("%d/%d count checks passed" % (len(rows) - len(bad), len(rows)))
    return 1 if bad else 0


def cmd_torture_check(a):
    """One run of tests/gpu/torture.sh: zero loss and whole frames always;
    the example's exact counts with --exact; with --capture an ARMED note,
    API records, and launch calls for 95 % of the kernels.
    The last line is short, for the suite's table: "k=N loss=0" when every
    check passed, else "MISMATCH key got/want ..."."""
    ex = example_json(a.stdout) if a.stdout else None
    try:
        c, notes, _ = count_traces(gaptrace_bin(a), a.traces)
    except RuntimeError as e:
        print("error: %s" % e)
        print("no trace")
        return 2
    if a.json:
        try:
            with open(a.json, "w") as f:
                json.dump(dict(sorted(c.items())), f)
        except OSError as e:
            print("cannot write %s: %s" % (a.json, e))
    rows = []  # (key, want text, got, ok)
    for k in ("loss", "loss_records", "bad_frames", "missing_frames", "tail_bytes"):
        rows.append((k, "== 0", c.get(k, 0), c.get(k, 0) == 0))
    rows.append(("traces", ">= 1", c.get("traces", 0), c.get("traces", 0) >= 1))
    rows.append(("kernel", ">= 1", c.get("kernel", 0), c.get("kernel", 0) >= 1))
    if a.capture:
        rows.append(("note:3", ">= 1", c.get("note:3", 0), c.get("note:3", 0) >= 1))
        # issue 22: a capture armed mid-run records the launch calls too,
        # those of threads and contexts made before the arm; a kernel at the
        # window's edges may have had its launch call before the arm
        k, m = c.get("kernel", 0), c.get("kernel_corr_matched", 0)
        rows.append(("api", ">= 1", c.get("api", 0), c.get("api", 0) >= 1))
        rows.append(("kernel_corr_matched", ">= 0.95 x kernel", m, m >= 0.95 * k))
    if a.exact:
        if ex is None:
            rows.append(("example JSON", "present", "none", False))
        else:
            for k, v in (ex.get("expect") or {}).items():
                got = c.get(k, 0)
                if v == "all" and k.endswith("_corr_matched"):
                    v = c.get(k[:-len("_corr_matched")], 0)
                rows.append((k, "== %s" % v, got, got == v))
            for k, v in (ex.get("expect_min") or {}).items():
                got = c.get(k, 0)
                rows.append((k, ">= %s" % v, got, got >= v))
    w = max(len(r[0]) for r in rows)
    for k, want, got, ok in rows:
        print("  %-*s  want %-12s got %-12s %s" % (w, k, want, got, "ok" if ok else "MISMATCH"))
    for k in sorted(c):
        if k.startswith("loss:") and c[k]:
            print("  %s = %d" % (k, c[k]))
    info = {k: v for k, v in c.items() if k in ("kernel", "memcpy", "memset", "api", "nvtx",
                                                 "records", "loss", "traces", "kernel_graph",
                                                 "launch_threads", "note:3", "note:6")}
    print("  counts: %s" % json.dumps(dict(sorted(info.items()))))
    bad = [r for r in rows if not r[3]]
    if bad:
        print("MISMATCH " + " ".join("%s=%s/%s" % (k, got, want.split()[-1])
                                     for k, want, got, _ in bad[:4]))
        return 1
    print("k=%d loss=0%s" % (c.get("kernel", 0), " exact" if a.exact and ex else ""))
    return 0


# ----------------------------------------------------------------------------
# Findings
# ----------------------------------------------------------------------------
# ADAPTER -- the findings JSON schema of `gaptrace report --json` is not fixed
# yet (issue 5). Everything that knows its shape is in the functions below;
# when the schema lands, change only these.
#   assumed: {"findings": [{"id": "launch_bound", "share": 0.63,
#                           "period_ms": 350.0 (periodic findings), ...}, ...]}
#   ranked: findings[0] is the first finding. Entries whose id is in
#   NON_FINDINGS (the remainder "unknown", or an explicit "healthy") do not
#   count as findings.
NON_FINDINGS = {"unknown", "healthy", "none"}


def findings_of(report):
    f = report.get("findings") if isinstance(report, dict) else None
    return [x for x in (f or []) if str(x.get("id", "")).lower() not in NON_FINDINGS]


def top_finding(report):
    """(id, share) of the first-ranked finding, or (None, None)."""
    f = findings_of(report)
    if not f:
        return None, None
    return f[0].get("id"), f[0].get("share")


def finding_period_ms(finding):
    """The period a periodic-wave finding reports, in ms, or None."""
    for src in (finding, finding.get("evidence") or {}):
        for k in ("period_ms", "period"):
            if isinstance(src, dict) and isinstance(src.get(k), (int, float)):
                return float(src[k])
    return None
# ---------------------------------------------------------------- end ADAPTER


def id_matches(got, want):
    """Exact id, or a more specific id under it (launch_bound.tiny_kernels)."""
    got, want = str(got).lower(), str(want).lower()
    return got == want or any(got.startswith(want + s) for s in "._:/")


def check_absent_and_first(report, absent, first):
    """"PASS", or why not: a finding whose id the example lists in
    "expect_absent" was reported, or the first finding's title lacks
    expect_first["title_has"] / its fix contains expect_first["fix_lacks"]."""
    bad = [f.get("id") for f in findings_of(report)
           if any(id_matches(f.get("id"), w) for w in absent)]
    if bad:
        return "FAIL (reported %s)" % ",".join(bad)
    f = findings_of(report)
    if first and f:
        title, fix = str(f[0].get("title", "")), str(f[0].get("fix", ""))
        if first.get("title_has") and first["title_has"] not in title:
            return "FAIL (title lacks '%s')" % first["title_has"]
        if first.get("fix_lacks") and first["fix_lacks"].lower() in fix.lower():
            return "FAIL (fix says '%s')" % first["fix_lacks"]
    return "PASS"


def check_steps(report, ex):
    """The step table and nvtx_sum against an example's expect_steps,
    expect_slowest_step and expect_nvtx (examples/cuda/nvtx_steps.cu)."""
    gpus = report.get("gpus") or [{}]
    st = gpus[0].get("steps")
    if not st:
        return "FAIL (no steps)"
    if st.get("count") != ex["expect_steps"]:
        return "FAIL (steps %s, want %s)" % (st.get("count"), ex["expect_steps"])
    want = ex.get("expect_slowest_step")
    if isinstance(want, int) and want >= 0:
        slow = max(st["items"], key=lambda x: x["dur_ns"])
        if slow["index"] != want or slow.get("top_cause") != "host_busy":
            return "FAIL (slowest step %s %s, want %s host_busy)" % (
                slow["index"], slow.get("top_cause"), want)
    got = {r["name"]: r["count"] for r in (report.get("nvtx_sum") or {}).get("ranges", [])}
    for name, n in (ex.get("expect_nvtx") or {}).items():
        if got.get(name) != n:
            return "FAIL (nvtx_sum %s: %s, want %s)" % (name, got.get(name), n)
    return "PASS"


def first_site(report, finding_id):
    """The first call site the finding's evidence names, or None."""
    for f in findings_of(report):
        if f.get("id") != finding_id:
            continue
        for ev in f.get("evidence") or []:
            m = re.match(r"call site: (.+?): [\d.]+ \w+, ", str(ev))
            if m:
                return m.group(1)
        return None
    return None


def check_site(report, want):
    """An example's expect_site against a report made with host stacks:
    {"finding": id, "site": "file.py:LINE func"} (Python: exact) or
    {"finding": id, "function": name} (native: the site's symbol is
    "name+0x..."): the finding's first call site. "finding" may be a list:
    the first of them the report has is checked."""
    ids = want["finding"] if isinstance(want["finding"], list) else [want["finding"]]
    present = {f.get("id") for f in findings_of(report)}
    fid = next((i for i in ids if i in present), ids[0])
    got = first_site(report, fid)
    if got is None:
        return "FAIL (%s names no call site)" % fid, "-"
    if "site" in want:
        ok = got == want["site"]
    else:
        ok = got.startswith(want["function"] + "+0x")
    return ("PASS" if ok else "FAIL (want %s)" % (want.get("site") or want["function"])), got


def cmd_sites(a):
    ex = example_json(a.stdout) if a.stdout else None
    name = a.name or (ex or {}).get("example", "?")
    want = (ex or {}).get("expect_site")
    if not want:
        print("%s\t-\t-\tSKIP (no expect_site)" % name)
        return 0
    try:
        with open(a.report) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print("%s\t%s\t-\tERROR report: %s" % (name, want, e))
        return 2
    status, got = check_site(report, want)
    fids = want["finding"] if isinstance(want["finding"], list) else [want["finding"]]
    print("%s\t%s: %s\t%s\t%s" % (name, "|".join(fids), want.get("site") or want["function"],
                                  got, status))
    return 0 if status.startswith("PASS") else 1


def cmd_findings(a):
    ex = example_json(a.stdout) if a.stdout else None
    name = a.name or (ex or {}).get("example", "?")
    if ex is None:
        print("%s\t?\t-\t-\t-\tERROR no example JSON line" % name)
        return 2
    want = ex.get("expect_finding")
    want_s = "none" if want == [] else "|".join(want) if want else "-"
    try:
        with open(a.report) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print("%s\t%s\t-\t-\t-\tERROR report: %s" % (name, want_s, e))
        return 2
    got, share = top_finding(report)
    share_s = "%.1f%%" % (100 * share) if isinstance(share, (int, float)) else "-"
    got_s = got if got else "none"
    period_s = "-"
    absent = ex.get("expect_absent") or []
    if want is None and "expect_steps" in ex:
        status = check_steps(report, ex)
    elif want is None and not absent:
        status = "SKIP (not a diagnosis example)"
    elif want is None:
        status = "PASS"
    elif want == []:
        n = len(findings_of(report))
        status = "PASS" if n == 0 else "FAIL (false alarm: %d findings)" % n
    else:
        ok = got is not None and any(id_matches(got, w) for w in want)
        status = "PASS" if ok else "FAIL"
        exp_period = ex.get("expect_period_ms")
        if ok and isinstance(exp_period, (int, float)) and exp_period > 0:
            per = finding_period_ms(findings_of(report)[0])
            if per is None:
                period_s = "? (want %.0f ms)" % exp_period
                status = "FAIL (no period)"
            else:
                period_s = "%.0f/%.0f ms" % (per, exp_period)
                if abs(per - exp_period) > a.period_tolerance * exp_period:
                    status = "FAIL (period)"
    if status.startswith("PASS"):
        status = check_absent_and_first(report, absent, ex.get("expect_first"))
    if absent:
        want_s += " (not %s)" % "|".join(absent)
    print("%s\t%s\t%s\t%s\t%s\t%s" % (name, want_s, got_s, share_s, period_s, status))
    return 0 if status.startswith(("PASS", "SKIP")) else 1


# ----------------------------------------------------------------------------
def cmd_table(a):
    try:
        with open(a.tsv, errors="replace") as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    except OSError as e:
        print("no table: %s" % e)
        return 2
    if not rows:
        return 0
    n = max(len(r) for r in rows)
    rows = [r + [""] * (n - len(r)) for r in rows]
    w = [max(len(r[i]) for r in rows) for i in range(n)]
    for j, r in enumerate(rows):
        print("  ".join(r[i].ljust(w[i]) for i in range(n)).rstrip())
        if j == 0:
            print("  ".join("-" * w[i] for i in range(n)))
    return 0


def cmd_torture_summary(a):
    """Fold torture.sh's per-run rows (header: case mode rep exit output trace
    secs ratio cap_tail note status) into one line per case and mode."""
    try:
        with open(a.tsv, errors="replace") as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    except OSError as e:
        print("no table: %s" % e)
        return 2
    if not rows:
        return 0
    head, body = rows[0], rows[1:]
    col = {k: i for i, k in enumerate(head)}

    def get(r, k):
        i = col.get(k)
        return r[i] if i is not None and i < len(r) else ""

    def num(v):
        try:
            return float(v.rstrip("sx"))
        except ValueError:
            return None

    def med(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if xs else None

    groups = collections.OrderedDict()
    for r in body:
        groups.setdefault((get(r, "case"), get(r, "mode")), []).append(r)
    out = [["case", "mode", "runs", "pass", "fail", "hang", "skip", "secs(med)", "x_untraced",
            "capture_return"]]
    for (c, m), rs in groups.items():
        st = [get(r, "status") for r in rs]
        secs = [x for x in (num(get(r, "secs")) for r in rs) if x is not None]
        ratio = [x for x in (num(get(r, "ratio")) for r in rs) if x is not None]
        tail = [x for x in (num(get(r, "cap_tail")) for r in rs) if x is not None]
        n_pass = sum(1 for x in st if x.startswith(("PASS", "ok")))
        n_fail = sum(1 for x in st if x.startswith(("FAIL", "ERROR", "TIMEOUT")))
        n_hang = sum(1 for x in st if "HANG" in x)
        n_skip = sum(1 for x in st if x.startswith("SKIP"))
        ms = med(secs)
        rs_s = "-" if not ratio else "%.2f (max %.2f)" % (med(ratio), max(ratio))
        tl_s = "-" if not tail else "+%.1fs (max +%.1fs)" % (med(tail), max(tail))
        out.append([c, m, str(len(rs)), str(n_pass), str(n_fail), str(n_hang), str(n_skip),
                    "-" if ms is None else "%.1f" % ms, rs_s, tl_s])
    w = [max(len(r[i]) for r in out) for i in range(len(out[0]))]
    for j, r in enumerate(out):
        print("  ".join(r[i].ljust(w[i]) for i in range(len(r))).rstrip())
        if j == 0:
            print("  ".join("-" * w[i] for i in range(len(r))))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gaptrace", default="")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("example-json")
    s.add_argument("stdout")
    s.set_defaults(fn=cmd_example_json)
    s = sub.add_parser("timing")
    s.add_argument("stdout")
    s.add_argument("key")
    s.set_defaults(fn=cmd_timing)
    s = sub.add_parser("same-output")
    s.add_argument("--keys", default="",
                   help="comma-separated keys to compare (default: %s)" % ",".join(SAME_KEYS))
    s.add_argument("a")
    s.add_argument("b")
    s.set_defaults(fn=cmd_same_output)
    s = sub.add_parser("counts")
    s.add_argument("traces", nargs="+")
    s.set_defaults(fn=cmd_counts)
    s = sub.add_parser("notes")
    s.add_argument("traces", nargs="+")
    s.set_defaults(fn=cmd_counts)
    s = sub.add_parser("check-counts")
    s.add_argument("--stdout", required=True)
    s.add_argument("traces", nargs="+")
    s.set_defaults(fn=cmd_check_counts)
    s = sub.add_parser("torture-check")
    s.add_argument("--stdout", default="")
    s.add_argument("--exact", action="store_true")
    s.add_argument("--capture", action="store_true")
    s.add_argument("--json", default="", help="also write the counts here")
    s.add_argument("traces", nargs="+")
    s.set_defaults(fn=cmd_torture_check)
    s = sub.add_parser("findings")
    s.add_argument("--report", required=True)
    s.add_argument("--stdout", default="")
    s.add_argument("--name", default="")
    s.add_argument("--period-tolerance", type=float, default=0.25)
    s.set_defaults(fn=cmd_findings)
    s = sub.add_parser("sites")
    s.add_argument("--report", required=True)
    s.add_argument("--stdout", default="")
    s.add_argument("--name", default="")
    s.set_defaults(fn=cmd_sites)
    s = sub.add_parser("torture-summary")
    s.add_argument("tsv")
    s.set_defaults(fn=cmd_torture_summary)
    s = sub.add_parser("table")
    s.add_argument("tsv")
    s.set_defaults(fn=cmd_table)
    a = p.parse_args()
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
