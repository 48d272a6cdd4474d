#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How well the GPM readings of a trace line up with its CUPTI kernels.

    gpm_align.py --gaptrace BIN [--range MS] [--step MS] [--check] TRACE_DIR...

TRACE_DIR: a trace directory, or a directory of them (examples/traces/).

For each trace directory with GT_REC_GPM rows (`gaptrace dump -t gpm`), the
kernels of its CUPTI traces (`gaptrace dump -t kernel`, on CLOCK_REALTIME
through each file's clock records) give the SM work the GPU did: at each
instant min(1, sum over running kernels of min(1, blocks / SMs)), a kernel
with fewer blocks than SMs keeping only that share of them busy. Over a
reading's [start, end) its mean is what GPM's "SM activity" (`sm_util`, the
share of SMs with a warp on them) should read. The readings are shifted by
s (from -range to +range ms, in step ms) and compared where the shifted
interval lies inside the recorded window (capture armed..disarmed, else the
CUPTI trace's clock records): error(s) = the mean |sm_util - expected| in
percentage points. The best shift is the s of least error; negative means
the readings fit best moved earlier, i.e. they were stamped late.

The stamps' convention (issue 23 item 7, DIAGNOSIS.md "GPM timing"): a
trace whose nvml.gtrace has the note "gpm: readings stamped at NVML's
refresh ..." was written by the fixed sampler (each reading from one of
NVML's counter refreshes to another); without it, at the sampler's calls,
0 to 100 ms after the refresh whose counters they hold (drifting with the
calls' phase), on top of the counters' own delay behind the refresh that
NVML does not give (19 to 88 ms measured on the H200). Column "stamps":
refresh or call.

--check (the CI test, on examples/traces/): a trace is informative when
the best shift lowers the error by at least 0.5 points; every informative
trace must fit best late, within [-200, -15] ms for call stamps (the
measured 30 to 190 ms of issue 23) and [-100, +5] ms for refresh stamps
(the counters' delay alone); exit 1 otherwise, or when no trace is
informative.
"""
import argparse
import bisect
import os
import re
import subprocess
import sys

NOTE_ARMED, NOTE_DISARMED = 3, 4
MS = 1000000


def dump(gaptrace, kind, path):
    """`gaptrace dump -t KIND PATH`, split by file: {path: [lines]}."""
    out = subprocess.run([gaptrace, "dump", "-t", kind, path], check=True,
                         capture_output=True, text=True).stdout
    files, cur = {}, None
    for line in out.splitlines():
        if line.startswith("== "):
            cur = files.setdefault(line[3:], [])
        elif cur is not None and line and not line.startswith("#"):
            cur.append(line)
        elif cur is None and line and not line.startswith("#"):
            files.setdefault(path, []).append(line)
    return files


def clock_maps(gaptrace, path):
    """Per file: (anchor_trace, offset, slope), as format/src/clock_map.c."""
    maps = {}
    for f, lines in dump(gaptrace, "clock", path).items():
        pairs = []
        for line in lines:
            m = re.match(r"clock trace=(\d+) realtime=(\d+)", line)
            if m:
                pairs.append((int(m.group(1)), int(m.group(2))))
        if not pairs:
            continue
        t0, r0 = pairs[0]
        slope = 1.0
        for t, r in pairs[1:]:
            if t - t0 > 1000000000:
                s = (r - r0) / (t - t0)
                if 0.999 < s < 1.001:
                    slope = s
        maps[f] = (t0, r0 - t0, slope)
    return maps


def to_real(cmap, t):
    if cmap is None:
        return t
    t0, off, slope = cmap
    return t0 + off + int((t - t0) * slope)


def sm_counts(gaptrace, path):
    """Per file: the SM count of device 0 of its device records (132 if none)."""
    sms = {}
    for f, lines in dump(gaptrace, "device", path).items():
        for line in lines:
            m = re.search(r" sms=(\d+)", line)
            if m:
                sms.setdefault(f, int(m.group(1)))
    return sms


def kernels(gaptrace, path, maps, sms):
    """[(start, end, weight)] on CLOCK_REALTIME; weight = min(1, blocks/SMs)."""
    out = []
    for f, lines in dump(gaptrace, "kernel", path).items():
        cm, n_sm = maps.get(f), sms.get(f, 132)
        for line in lines:
            m = re.match(r"kernel (\d+) \+(\d+) .* grid=(\d+)x(\d+)x(\d+)", line)
            if not m:
                continue
            s = to_real(cm, int(m.group(1)))
            blocks = int(m.group(3)) * int(m.group(4)) * int(m.group(5))
            out.append((s, s + int(m.group(2)), min(1.0, blocks / n_sm)))
    return out


def windows(gaptrace, path, maps):
    """The recorded windows of the CUPTI traces, [(t0, t1)]: from each
    "capture armed" note (code 3, also "capture on from the start") to the
    next "disarmed" (code 4) or the file's last clock record; a file with
    neither note: its first to its last clock record."""
    wins = []
    notes, clocks = dump(gaptrace, "note", path), dump(gaptrace, "clock", path)
    for f, cm in maps.items():
        if f.endswith("nvml.gtrace"):
            continue
        ck = [to_real(cm, int(x)) for x in re.findall(r"clock trace=(\d+)",
                                                         "\n".join(clocks.get(f, [])))]
        if not ck:
            continue
        armed, seen = None, False
        for line in notes.get(f, []):
            m = re.match(r"note (\d+) code=(\d+)", line)
            if not m:
                continue
            code, ts = int(m.group(2)), to_real(cm, int(m.group(1)))
            if code == NOTE_ARMED:
                armed, seen = ts, True
            elif code == NOTE_DISARMED and armed is not None:
                wins.append((armed, ts))
                armed = None
        if armed is not None:
            wins.append((armed, max(ck)))
        elif not seen:
            wins.append((min(ck), max(ck)))
    return wins


STAMP_NOTE = "gpm: readings stamped at NVML's refresh"


def refresh_stamped(gaptrace, path):
    """Whether the trace's GPM rows carry the fixed sampler's note."""
    return any(STAMP_NOTE in line for lines in dump(gaptrace, "note", path).values()
               for line in lines)


def readings(gaptrace, path):
    """[(start, end, sm_util 0..1)] as recorded (nvml.gtrace: trace = realtime)."""
    out = []
    for lines in dump(gaptrace, "gpm", path).values():
        for line in lines:
            m = re.match(r"gpm (\d+) \+(\d+) dev=(\d+) sm=([\d.]+)%", line)
            if m:
                s = int(m.group(1))
                out.append((s, s + int(m.group(2)), float(m.group(4)) / 100))
    return out


class SmWork:
    """The cumulative SM work W(t) = integral of min(1, sum of weights)."""

    def __init__(self, ks):
        ev = {}
        for s, e, w in ks:
            ev[s] = ev.get(s, 0.0) + w
            ev[e] = ev.get(e, 0.0) - w
        self.t, self.cum = [], []
        level, acc, prev = 0.0, 0.0, None
        for t in sorted(ev):
            if prev is not None:
                acc += min(1.0, max(0.0, level)) * (t - prev)
            self.t.append(t)
            self.cum.append(acc)
            level += ev[t]
            prev = t
        self.level_after = []
        level = 0.0
        for t in self.t:
            level += ev[t]
            self.level_after.append(min(1.0, max(0.0, level)))

    def at(self, x):
        i = bisect.bisect_right(self.t, x) - 1
        if i < 0:
            return 0.0
        return self.cum[i] + self.level_after[i] * (x - self.t[i])

    def mean(self, a, b):
        return (self.at(b) - self.at(a)) / (b - a) if b > a else 0.0


def inside(wins, a, b):
    return any(w0 <= a and b <= w1 for w0, w1 in wins)


def error_at(work, rds, wins, shift):
    """Mean |sm_util - expected| (points) over readings inside a window; n."""
    err, n = 0.0, 0
    for s, e, sm in rds:
        a, b = s + shift, e + shift
        if inside(wins, a, b):
            err += abs(sm - work.mean(a, b))
            n += 1
    return (100 * err / n if n else float("nan")), n


def align(gaptrace, path, rng, step):
    rds = readings(gaptrace, path)
    if not rds:
        return None
    maps = clock_maps(gaptrace, path)
    work = SmWork(kernels(gaptrace, path, maps, sm_counts(gaptrace, path)))
    wins = windows(gaptrace, path, maps)
    e0, n0 = error_at(work, rds, wins, 0)
    best = (e0, 0, n0)
    for ms in range(-rng, rng + 1, step):
        e, n = error_at(work, rds, wins, ms * MS)
        # at least half the readings compared at 0 (or 3): a shift that keeps
        # only a few readings inside the window must not win by having few
        if n >= max(3, n0 // 2) and e < best[0] - 1e-9:
            best = (e, ms, n)
    return {"readings": n0, "err0": e0, "best": best[1], "err_best": best[0],
            "n_best": best[2], "refresh": refresh_stamped(gaptrace, path)}


BOUNDS = {False: (-200, -15), True: (-100, 5)}


def verdict(r):
    """'' for an uninformative trace, else 'ok' or what is wrong."""
    if not r["readings"] or not r["err0"] - r["err_best"] >= 0.5:
        return ""
    lo, hi = BOUNDS[r["refresh"]]
    return "ok" if lo <= r["best"] <= hi else f"FAIL: best shift outside [{lo}, {hi}] ms"


def expand(paths):
    """Trace directories: each path, or the subdirectories of one that holds
    no .gtrace itself (examples/traces/), sorted."""
    out = []
    for p in paths:
        if os.path.isdir(p) and not any(f.endswith(".gtrace") for f in os.listdir(p)):
            out += sorted(os.path.join(p, d) for d in os.listdir(p)
                          if os.path.isdir(os.path.join(p, d)))
        else:
            out.append(p)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gaptrace", required=True)
    ap.add_argument("--range", type=int, default=300, help="ms each way (300)")
    ap.add_argument("--step", type=int, default=1, help="ms (1)")
    ap.add_argument("--check", action="store_true", help="exit 1 unless as documented")
    ap.add_argument("traces", nargs="+")
    o = ap.parse_args()
    print(f"{'trace':<24} {'stamps':>7} {'readings':>8} {'err@0':>7} {'best':>7} "
          f"{'err@best':>8}  check")
    informative, bad = 0, 0
    for path in expand(o.traces):
        r = align(o.gaptrace, path, o.range, o.step)
        if r is None:
            continue
        name = path.rstrip("/").split("/")[-1]
        v = verdict(r)
        informative += v != ""
        bad += v.startswith("FAIL")
        print(f"{name:<24} {'refresh' if r['refresh'] else 'call':>7} {r['readings']:>8} "
              f"{r['err0']:>6.1f}p {r['best']:>+5d}ms {r['err_best']:>7.1f}p  "
              f"{v or '(flat: no edge to fit)'}")
    if o.check:
        print(f"gpm_align: {informative} informative, {bad} wrong")
        return 1 if bad or not informative else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
