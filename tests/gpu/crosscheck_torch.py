#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""crosscheck_torch: gaptrace's kernel view against torch.profiler's (issue 4).

For each workload it runs the same PyTorch script twice:
  A. under torch.profiler (Kineto, CUDA activity, started before CUDA is
     initialized) exporting a Chrome trace;
  B. under `gaptrace run -q -o DIR` (or, without that command, injected with
     CUDA_INJECTION64_PATH + GAPTRACE_OUTPUT),
and compares, by demangled kernel name, the number of kernels (must be equal)
and the total kernel time (within --tolerance, default 5%), and the number of
memcpy/memset operations by kind. Prints a table per workload and a summary.

  tests/gpu/crosscheck_torch.py            # -> $OUT/crosscheck_torch.txt
Options: --workloads eager_mlp,d2h_storm,healthy_matmul --steps N --tolerance 0.05
Environment: OUT, BUILD, GAPTRACE, INJECT, PYTHON, WORK (see tests/gpu/lib.sh).
Takes ~1 minute on the H200.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gtcheck  # noqa: E402

WORKLOADS = {
    # name: (script, arguments); both runs use exactly these arguments.
    "eager_mlp": ("examples/torch/eager_mlp.py", ["--steps", "200"]),
    "d2h_storm": ("examples/torch/d2h_storm.py", ["--steps", "10"]),
    "healthy_matmul": ("examples/torch/healthy_matmul.py", ["--steps", "20"]),
}


class Log:
    def __init__(self, path):
        self.f = open(path, "w")

    def __call__(self, msg=""):
        line = "[%s] %s" % (time.strftime("%H:%M:%S"), msg) if msg else ""
        print(line, flush=True)
        self.f.write(line + "\n")
        self.f.flush()


def run(cmd, env, log, stdout_path, timeout):
    t0 = time.time()
    with open(stdout_path, "w") as out, open(stdout_path + ".stderr", "w") as err:
        try:
            rc = subprocess.call(cmd, env=env, stdout=out, stderr=err, cwd=ROOT, timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = 124
    log("  exit %d in %.1fs: %s" % (rc, time.time() - t0, " ".join(cmd)))
    if rc != 0:
        with open(stdout_path + ".stderr", errors="replace") as err:
            for line in err.read().splitlines()[-12:]:
                log("    stderr| " + line)
    return rc


def norm_name(s):
    return re.sub(r"\s+", "", s)


def demangle(names):
    """Demangle with c++filt (what Kineto's __cxa_demangle gives, modulo spaces)."""
    names = list(names)
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    p = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                       text=True)
    out = p.stdout.splitlines()
    if p.returncode != 0 or len(out) != len(names):
        return {n: n for n in names}
    return dict(zip(names, out))


def kineto_view(path):
    """kernels: name -> [count, total_us]; copies: kind -> count."""
    with open(path) as f:
        data = json.load(f)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    kernels = collections.defaultdict(lambda: [0, 0.0])
    copies = collections.Counter()
    for e in events:
        cat = e.get("cat")
        if e.get("ph") != "X":
            continue
        if cat == "kernel":
            k = kernels[norm_name(e.get("name", "?"))]
            k[0] += 1
            k[1] += float(e.get("dur", 0))
        elif cat == "gpu_memcpy":
            m = re.search(r"Memcpy (\w+)", e.get("name", ""))
            copies["memcpy:" + (m.group(1) if m else "?")] += 1
        elif cat == "gpu_memset":
            copies["memset"] += 1
    return kernels, copies


def gaptrace_view(gaptrace, trace_dir):
    c, _, kern = gtcheck.count_traces(gaptrace, [trace_dir], keep_kernels=True)
    dm = demangle({n for n, _ in kern})
    kernels = collections.defaultdict(lambda: [0, 0.0])
    for name, dur_ns in kern:
        k = kernels[norm_name(dm.get(name, name))]
        k[0] += 1
        k[1] += dur_ns / 1e3
    copies = collections.Counter({k: v for k, v in c.items()
                                  if re.fullmatch(r"memcpy:[A-Za-z]+", k) or k == "memset"})
    return kernels, copies, c


def short(name, n=60):
    return name if len(name) <= n else name[:n - 3] + "..."


def compare(name, kt, kc, gt, gc_, tol, log):
    rows = []
    names = sorted(set(kt) | set(gt), key=lambda n: -max(kt.get(n, [0, 0])[1],
                                                         gt.get(n, [0, 0])[1]))
    unmatched = 0
    for n in names:
        a, b = kt.get(n, [0, 0.0]), gt.get(n, [0, 0.0])
        if a[0] != b[0]:
            unmatched += 1
        rows.append((short(n), a[0], b[0], a[1] / 1e3, b[1] / 1e3))
    log("  %-60s %9s %9s %10s %10s" % ("kernel (demangled)", "torch.n", "gt.n",
                                       "torch.ms", "gt.ms"))
    for r in rows[:25]:
        log("  %-60s %9d %9d %10.3f %10.3f%s" % (r + (" <- count differs" if r[1] != r[2]
                                                       else "",)))
    if len(rows) > 25:
        log("  ... %d more kernel names (%d with differing counts in all)" % (len(rows) - 25,
                                                                        unmatched))
    n_t, n_g = sum(v[0] for v in kt.values()), sum(v[0] for v in gt.values())
    t_t, t_g = sum(v[1] for v in kt.values()), sum(v[1] for v in gt.values())
    dt = (t_g - t_t) / t_t if t_t else float("inf")
    log("  total kernels: torch %d, gaptrace %d; names: torch %d, gaptrace %d" %
        (n_t, n_g, len(kt), len(gt)))
    log("  total kernel time: torch %.3f ms, gaptrace %.3f ms (%+.2f%%)" %
        (t_t / 1e3, t_g / 1e3, 100 * dt))
    by_count_equal = sorted(v[0] for v in kt.values()) == sorted(v[0] for v in gt.values())
    if unmatched and by_count_equal:
        log("  note: names differ only in spelling (the multisets of per-name counts match)")
    res = []
    res.append((name, "kernel count", str(n_t), str(n_g), "PASS" if n_t == n_g else "FAIL"))
    st = "PASS" if unmatched == 0 else ("FAIL (names spelled differently)" if by_count_equal
                                         else "FAIL")
    res.append((name, "counts by name", "%d names" % len(kt), "%d differ" % unmatched, st))
    res.append((name, "kernel time", "%.2f ms" % (t_t / 1e3), "%.2f ms (%+.1f%%)" %
                (t_g / 1e3, 100 * dt), "PASS" if abs(dt) <= tol else "FAIL"))
    for k in sorted(set(kc) | set(gc_)):
        res.append((name, k, str(kc.get(k, 0)), str(gc_.get(k, 0)),
                    "PASS" if kc.get(k, 0) == gc_.get(k, 0) else "FAIL"))
    return res


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="eager_mlp,d2h_storm,healthy_matmul")
    p.add_argument("--steps", type=int, default=0, help="override each workload's --steps")
    p.add_argument("--tolerance", type=float, default=0.05)
    p.add_argument("--timeout", type=int, default=300)
    a = p.parse_args()

    out = os.path.realpath(os.environ.get("OUT", "out"))
    os.makedirs(out, exist_ok=True)
    build = os.environ.get("BUILD", "build-gpu")

    def absolute(path):
        return path if os.path.isabs(path) else os.path.join(ROOT, path)
    gaptrace = absolute(os.environ.get("GAPTRACE", os.path.join(build, "tools/gaptrace")))
    inject = absolute(os.environ.get("INJECT", os.path.join(build, "inject/libgaptrace_inject.so")))
    python = os.environ.get("PYTHON", "python3")
    work = os.path.realpath(os.environ.get("WORK") or tempfile.mkdtemp(prefix="gaptrace-xcheck."))
    os.makedirs(work, exist_ok=True)
    log = Log(os.path.join(out, "crosscheck_torch.txt"))
    log("== crosscheck_torch (work %s, gaptrace %s)" % (work, gaptrace))
    have_run = os.access(gaptrace, os.X_OK) and subprocess.call(
        [gaptrace, "run", "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
    log("gaptrace run available: %s" % have_run)
    table = [("workload", "what", "torch.profiler", "gaptrace", "status")]
    for w in [x for x in a.workloads.split(",") if x]:
        if w not in WORKLOADS:
            table.append((w, "-", "-", "-", "ERROR (unknown workload)"))
            continue
        script, args = WORKLOADS[w]
        if a.steps:
            args = list(args)
            args[args.index("--steps") + 1] = str(a.steps)
        log("-- %s" % w)
        kjson = os.path.join(work, w + ".kineto.json")
        rc = run([python, script] + args + ["--torch-profiler", "--profiler-activities", "cuda",
                                            "--export", kjson],
                 dict(os.environ), log, os.path.join(work, w + ".torch.stdout"), a.timeout)
        if rc != 0 or not os.path.exists(kjson):
            table.append((w, "torch.profiler run", "exit %d" % rc, "-", "ERROR"))
            continue
        tdir = os.path.join(work, w + ".gt")
        shutil.rmtree(tdir, ignore_errors=True)
        env = dict(os.environ)
        if have_run:
            cmd = [gaptrace, "run", "-q", "-o", tdir, "--", python, script] + args
        else:
            os.makedirs(tdir)
            env["CUDA_INJECTION64_PATH"] = inject
            env["GAPTRACE_OUTPUT"] = os.path.join(tdir, "%p.gtrace")
            cmd = [python, script] + args
        rc = run(cmd, env, log, os.path.join(work, w + ".gt.stdout"), a.timeout)
        if rc != 0:
            table.append((w, "gaptrace run", "-", "exit %d" % rc, "ERROR"))
            continue
        try:
            kt, kc = kineto_view(kjson)
            gt, gc_, counts = gaptrace_view(gaptrace, tdir)
        except (RuntimeError, OSError, ValueError) as e:
            table.append((w, "read traces", "-", str(e)[:60], "ERROR"))
            continue
        log("  gaptrace losses: %d, records: %d" % (counts.get("loss", 0),
                                                    counts.get("records", 0)))
        table += compare(w, kt, kc, gt, gc_, a.tolerance, log)
    log()
    log("== crosscheck_torch summary")
    w = [max(len(r[i]) for r in table) for i in range(5)]
    for j, r in enumerate(table):
        log("  ".join(r[i].ljust(w[i]) for i in range(5)).rstrip())
        if j == 0:
            log("  ".join("-" * x for x in w))
    fails = sum(1 for r in table[1:] if not r[4].startswith("PASS"))
    passes = len(table) - 1 - fails
    log()
    log("crosscheck_torch: %d passed, %d failed" % (passes, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
