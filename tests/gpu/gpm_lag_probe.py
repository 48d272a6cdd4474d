#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 23 item 7: what time a GPM sample's counters belong to.

    python3 tests/gpu/gpm_lag_probe.py [--poll-ms MS] [--streaming | --multi]
    python3 tests/gpu/gpm_lag_probe.py --analyze FILE

Two processes on one GPU, both on CLOCK_REALTIME (time.time_ns()):
- the workload (PyTorch): idle / busy stretches of known, irregular lengths
  (bf16 8192^3 matrix products back to back: every SM busy), each busy
  stretch's edges taken on the host (first launch on an idle GPU, the
  synchronize that returns after the last product), one "busy A B" line each;
- the sampler (NVML through ctypes, no gaptrace): nvmlGpmSampleGet every
  --poll-ms (2 ms), each call's host time before and after. A sample that
  gives the same metrics as the current snapshot against the snapshot
  before it holds the same counters: NVML had not refreshed them in
  between (a fixed, older reference does not do: NVML refuses it once a
  CUDA context has come since, seen on the H200). For every new set of
  counters ("snapshot"), the first call that returned it, and SM activity
  between it and the previous snapshot: one "snap T0 T1 SM" line each.

Then a second pass with a 10 Hz sampler as the collector was before issue
23 (a sample, the metrics against the previous, the next call a period
after this one ended, each reading stamped at the calls' mid-times).

The summary: the snapshots' spacing (NVML's internal refresh), and the
shift that best fits SM activity to the busy stretches, with the lag at
each busy/idle edge over time, when a reading is stamped (a) with the
calls that first saw its two snapshots and (c) with the 10 Hz sampler's
calls. --streaming repeats both with nvmlGpmSetStreamingEnabled(1)
(restored after); --multi runs two pollers (started apart) and a 10 Hz
sampler on a fixed 100 ms grid at once over one workload (is the refresh
per process?); --analyze FILE recomputes the summaries of a saved output.
Writes $OUT/gpm_lag_probe.txt (the lines and the summary). Results:
tests/gpu/results/gpm_lag_probe.run*.txt, DIAGNOSIS.md ("GPM timing").
"""
import argparse
import ctypes
import os
import subprocess
import sys
import time

SM_UTIL, PCIE_TX, PCIE_RX, DRAM_BW = 2, 20, 21, 10
METRICS = [SM_UTIL, 3, 5, 9, 7, 8, DRAM_BW, PCIE_TX, PCIE_RX]


class Metric(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint), ("ret", ctypes.c_int), ("value", ctypes.c_double),
                ("names", ctypes.c_void_p * 3)]


class MetricsGet(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("num", ctypes.c_uint),
                ("s1", ctypes.c_void_p), ("s2", ctypes.c_void_p), ("m", Metric * 1024)]


class Nvml:
    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0
        self.dev = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.dev)) == 0
        self.q = MetricsGet()

    def alloc(self):
        s = ctypes.c_void_p()
        assert self.lib.nvmlGpmSampleAlloc(ctypes.byref(s)) == 0
        return s

    def sample(self, s):
        t0 = time.time_ns()
        rc = self.lib.nvmlGpmSampleGet(self.dev, s)
        return t0, time.time_ns(), rc

    def metrics(self, a, b):
        q = self.q
        q.version, q.num, q.s1, q.s2 = 1, len(METRICS), a, b
        for j, m in enumerate(METRICS):
            q.m[j].id, q.m[j].ret, q.m[j].value = m, 0, 0.0
        rc = self.lib.nvmlGpmMetricsGet(ctypes.byref(q))
        if rc:
            return None
        return tuple(q.m[j].value if q.m[j].ret == 0 else None for j in range(len(METRICS)))

    def streaming(self, state=None):
        st = ctypes.c_uint()
        if state is None:
            rc = self.lib.nvmlGpmQueryIfStreamingEnabled(self.dev, ctypes.byref(st))
            return st.value if rc == 0 else -rc
        return self.lib.nvmlGpmSetStreamingEnabled(self.dev, ctypes.c_uint(state))


def sampler(seconds, poll_ms, out):
    """Poll; one 'snap' line per new set of counters. A call's counters are
    new when its metrics against the snapshot before the current one differ
    from the current one's (a fixed old reference does not do: NVML refuses
    it once a CUDA context has come since)."""
    n = Nvml()
    bufs = [n.alloc() for _ in range(4)]
    n.sample(bufs[0])
    a_i, b_i, v_b = 0, None, n.metrics(bufs[0], bufs[0])
    print(f"identical {v_b}", file=out)
    calls, cost, fails = 0, 0, 0
    end = time.time_ns() + int(seconds * 1e9)
    while time.time_ns() < end:
        c_i = next(i for i in range(4) if i not in (a_i, b_i))
        t0, t1, rc = n.sample(bufs[c_i])
        calls += 1
        cost += t1 - t0
        if rc:
            print(f"error SampleGet {rc}", file=out)
            return
        v = n.metrics(bufs[a_i], bufs[c_i])
        if v is None:
            fails += 1
        elif v != v_b:
            sm = "nan"
            if b_i is not None:
                w = n.metrics(bufs[b_i], bufs[c_i])
                sm = w[0] if w else "nan"
                a_i = b_i
                v_b = w
            else:
                v_b = v
            b_i = c_i
            print(f"snap {t0} {t1} {sm}", file=out)
        time.sleep(poll_ms / 1000)
    print(f"calls {calls} mean_us {cost / calls / 1000:.1f} metric_fails {fails}", file=out)


def sampler10(seconds, period_ms, out, fixed=False):
    """Like the collector: a sample, the metrics against the previous one,
    the next call a whole period after this one ended (fixed: on a fixed
    grid of period_ms instead); stamps mid-call."""
    n = Nvml()
    bufs, k, prev = [n.alloc(), n.alloc()], 0, None
    end = time.time_ns() + int(seconds * 1e9)
    nxt = time.time_ns()
    while time.time_ns() < end:
        if fixed:
            nxt += int(period_ms * 1e6)
        t0, t1, rc = n.sample(bufs[k])
        ts = t0 + (t1 - t0) // 2
        if prev is not None:
            v = n.metrics(bufs[1 - k], bufs[k])
            print(f"r10 {prev} {ts} {v[0] if v else 'nan'}", file=out)
        prev, k = ts, 1 - k
        if fixed:
            time.sleep(max(0.0, (nxt - time.time_ns()) / 1e9))
        else:
            time.sleep(max(0.0, period_ms / 1000 - (time.time_ns() - t1) / 1e9))


def workload(plan, out):
    import torch
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
    time.sleep(0.5)
    for idle_ms, busy_ms in plan:
        time.sleep(idle_ms / 1000)
        t0 = time.time_ns()
        while time.time_ns() - t0 < busy_ms * 1e6:
            for _ in range(8):
                a @ b
            torch.cuda.synchronize()
        print(f"busy {t0} {time.time_ns()}", file=out, flush=True)


PLAN = [(640, 230), (510, 370), (770, 150), (450, 410), (600, 290), (700, 180),
        (530, 330), (660, 120)]


def busy_fraction(busy, a, b):
    ov = sum(max(0, min(b, e) - max(a, s)) for s, e in busy)
    return ov / (b - a) if b > a else 0


def fit(readings, busy, lo, hi, rng=300):
    """Best shift (ms) of readings [(a, b, sm 0..1)] inside [lo, hi]."""
    best, e0 = None, float("nan")
    readings = [r for r in readings if lo <= r[0] and r[1] <= hi]
    for ms in range(-rng, rng + 1):
        sh = ms * 1000000
        err = [abs(sm - busy_fraction(busy, a + sh, b + sh)) for a, b, sm in readings
               if lo <= a + sh and b + sh <= hi]
        if len(err) < len(readings) // 2:
            continue
        e = 100 * sum(err) / len(err)
        if best is None or e < best[1]:
            best = (ms, e)
        if ms == 0:
            e0 = e
    return best, e0


def edge_lags(rd, busy, plateau=0.955):
    """Per reading across a busy/idle edge: the shift that makes the busy
    share of its span equal its SM activity (over the busy plateau, a full
    matrix product reads ~95.5 %), the one nearest -40 ms where several do."""
    lo, hi = busy[0][0] - 400000000, busy[-1][1] + 400000000
    out = []
    for a, b, sm in rd:
        x = min(1.0, sm / plateau)
        if not (lo <= a and b <= hi and 0.08 < x < 0.92):
            continue
        cands, prev = [], None
        for d in range(-200, 51):
            f = busy_fraction(busy, a + d * 1000000, b + d * 1000000)
            if prev is not None and prev != f and (prev - x) * (f - x) <= 0:
                cands.append(d)
            prev = f
        if cands:
            out.append(f"{min(cands, key=lambda c: abs(c + 40)):+d}@{(a - busy[0][0]) / 1e9:.1f}")
    return " ".join(out)


def analyze(path, log):
    """The summaries of a saved $OUT/gpm_lag_probe.txt ('== ROLE' sections)."""
    for part in open(path).read().split("== ")[1:]:
        role = part.splitlines()[0]
        lines = [x.split() for x in part.splitlines()[1:] if x.strip()]
        log(f"-- {role}")
        (summary10 if role.startswith("sampler10") else summary)(lines, log)


def report_fit(label, rd, busy, log):
    """The best shift of readings rd against the busy stretches, and the lag
    at each edge, as one summary line and one of edges."""
    lo, hi = busy[0][0] - 400000000, busy[-1][1] + 400000000
    best, e0 = fit(rd, busy, lo, hi)
    if best is None:
        log(f"{label}: no reading inside the workload")
        return
    log(f"{label}: {len(rd)} readings, best shift {best[0]:+d} ms (err {best[1]:.1f} points), "
        f"err at 0 {e0:.1f}")
    log("    lag per edge (ms @ s into the run): " + edge_lags(rd, busy))


def busy_of(lines):
    return [(int(x[1]), int(x[2])) for x in lines if x[0] == "busy"]


def summary(lines, log):
    """A poller's output: the refreshes' spacing; readings between two
    snapshots stamped with the calls that first returned them (a)."""
    busy = busy_of(lines)
    snaps = [(int(x[1]), int(x[2]), float(x[3])) for x in lines if x[0] == "snap"]
    if len(snaps) < 3 or not busy:
        log("summary: too little data")
        return
    gaps = sorted((snaps[i][0] - snaps[i - 1][0]) / 1e6 for i in range(1, len(snaps)))
    log(f"snapshots {len(snaps)}; spacing ms (first-seen to first-seen): "
        f"min {gaps[0]:.1f} p50 {gaps[len(gaps) // 2]:.1f} max {gaps[-1]:.1f}")
    rd = [(snaps[i - 1][0], snaps[i][0], snaps[i][2] / 100) for i in range(1, len(snaps))
          if snaps[i][2] == snaps[i][2]]
    report_fit("(a) first-seen stamps", rd, busy, log)


def summary10(lines, log):
    """A 10 Hz sampler's output (c): readings stamped at its calls."""
    busy = busy_of(lines)
    rd = [(int(x[1]), int(x[2]), float(x[3]) / 100) for x in lines if x[0] == "r10"
          and x[3] not in ("nan", "None")]
    if not rd or not busy:
        log("summary10: too little data")
        return
    report_fit("(c) a 10 Hz sampler, stamped at its calls", rd, busy, log)


def run_pass(role, secs, poll_ms, logf):
    sp = subprocess.Popen([sys.executable, __file__, role, "--seconds", str(secs),
                           "--poll-ms", str(poll_ms)], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    wk = subprocess.run([sys.executable, __file__, "work"], capture_output=True, text=True)
    so, _ = sp.communicate()
    lines = [x.split() for x in (wk.stdout + so).splitlines() if x.strip()]
    logf.write(f"== {role}\n")
    for x in lines:
        logf.write(" ".join(x) + "\n")
    if wk.returncode:
        logf.write("workload failed: " + wk.stderr[-2000:] + "\n")
    return lines


def multi(secs, poll_ms, logf, log):
    """The concurrent run: which part of the lag is per process."""
    procs = []
    for role, delay in (("sampler", 0), ("sampler", 0.037), ("sampler10f", 0.011)):
        time.sleep(delay)
        procs.append((role, subprocess.Popen(
            [sys.executable, __file__, role, "--seconds", str(secs), "--poll-ms", str(poll_ms)],
            stdout=subprocess.PIPE, text=True)))
    time.sleep(1.0)
    wk = subprocess.run([sys.executable, __file__, "work"], capture_output=True, text=True)
    for j, (role, p) in enumerate(procs):
        so, _ = p.communicate()
        lines = [x.split() for x in (wk.stdout + so).splitlines() if x.strip()]
        logf.write(f"== {role} {j}\n")
        for x in lines:
            logf.write(" ".join(x) + "\n")
        log(f"-- process {j} ({role})")
        (summary10 if role.startswith("sampler10") else summary)(lines, log)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", nargs="?", default="main")
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--poll-ms", type=float, default=2)
    ap.add_argument("--streaming", action="store_true")
    ap.add_argument("--analyze", metavar="FILE", help="only the summaries of a saved output")
    ap.add_argument("--multi", action="store_true",
                    help="two pollers (the second started 37 ms later) and a 10 Hz "
                    "sampler on a fixed 100 ms grid, at once, over one workload")
    o = ap.parse_args()
    if o.analyze:
        analyze(o.analyze, print)
        return 0
    if o.role == "sampler":
        sampler(o.seconds, o.poll_ms, sys.stdout)
        return 0
    if o.role == "sampler10":
        sampler10(o.seconds, 100.0, sys.stdout)
        return 0
    if o.role == "sampler10f":
        sampler10(o.seconds, 100.0, sys.stdout, fixed=True)
        return 0
    if o.role == "work":
        workload(PLAN, sys.stdout)
        return 0
    outdir = os.environ.get("OUT", ".")
    logf = open(os.path.join(outdir, "gpm_lag_probe.txt"), "w")

    def log(s):
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()

    secs = sum(i + b for i, b in PLAN) / 1000 + 12
    if o.multi:
        return multi(secs, o.poll_ms, logf, log)
    modes = [0] + ([1] if o.streaming else [])
    n = Nvml()
    orig = n.streaming()
    log(f"streaming state at start: {orig}")
    for mode in modes:
        if o.streaming:
            log(f"-- streaming {mode}: set rc {n.streaming(mode)}, now {n.streaming()}")
        summary(run_pass("sampler", secs, o.poll_ms, logf), log)
        summary10(run_pass("sampler10", secs, o.poll_ms, logf), log)
    if o.streaming and orig in (0, 1):
        log(f"streaming restored to {orig}: rc {n.streaming(orig)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
