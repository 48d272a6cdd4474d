# SPDX-License-Identifier: MIT
"""The paired in-process statistic of bench/paired (issue 28 item 1).

A step log holds one line per logged point, "END_NS [N]": the CLOCK_MONOTONIC
time a step (or a block of N steps, closed by a device sync) ended; N = 0
marks a boundary (a new run of steps starts there). A window
is [start, end) on the same clock with a state ("armed" or "dormant"). A
logged duration belongs to a window when it began at least `skip_ns` after
the window's start and ended before its end; its per-step time is the
duration over N. Per window the median per-step time; per pair (one armed
and one dormant window side by side, ABBA order) the ratio armed/dormant;
the statistic is the median of the per-pair ratios, with a percentile
bootstrap interval over pairs (fixed seed).

Standard library only.
"""
import random
import statistics


def read_step_log(path):
    """[(end_ns, n)] from a step log, in file order; bad lines skipped."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            try:
                end = int(parts[0])
                n = int(parts[1]) if len(parts) > 1 else 1
            except (IndexError, ValueError):
                continue
            if n >= 0:
                out.append((end, n))
    out.sort()
    return out


def step_times(log):
    """[(start_ns, end_ns, ns_per_step)] from consecutive log points (a
    point of 0 steps is a boundary: no duration ends there)."""
    return [(a[0], b[0], (b[0] - a[0]) / b[1]) for a, b in zip(log, log[1:]) if b[1] > 0]


def window_steps(steps, start, end, skip_ns=0):
    """Per-step times of the steps inside [start + skip_ns, end)."""
    lo = start + skip_ns
    return [t for s, e, t in steps if s >= lo and e <= end]


def window_medians(steps, windows, skip_ns=0, min_steps=3):
    """For each window dict (start, end, state): adds "steps" (count) and
    "median_ns" (None under min_steps). Returns the list."""
    for w in windows:
        ts = window_steps(steps, w["start"], w["end"], skip_ns)
        w["steps"] = len(ts)
        w["median_ns"] = statistics.median(ts) if len(ts) >= min_steps else None
    return windows


def pair_ratios(windows, num="armed", den="dormant"):
    """Windows taken two by two in order; a pair with one `num` and one
    `den` window, both with a median, gives median(num)/median(den)."""
    out = []
    for i in range(0, len(windows) - 1, 2):
        a, b = windows[i], windows[i + 1]
        by = {a["state"]: a, b["state"]: b}
        if num in by and den in by and by[num]["median_ns"] and by[den]["median_ns"]:
            out.append(by[num]["median_ns"] / by[den]["median_ns"])
    return out


def percentile(sorted_xs, q):
    """Linear-interpolated percentile q in [0, 1] of a sorted list."""
    if not sorted_xs:
        return None
    pos = q * (len(sorted_xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def bootstrap_median(xs, resamples=2000, seed=28, level=0.95):
    """(median, low, high): the median of xs and the percentile bootstrap
    interval of it (resampling xs with replacement)."""
    if not xs:
        return None, None, None
    rng = random.Random(seed)
    n = len(xs)
    meds = sorted(statistics.median(rng.choices(xs, k=n)) for _ in range(resamples))
    a = (1 - level) / 2
    return statistics.median(xs), percentile(meds, a), percentile(meds, 1 - a)


def summarize(steps, windows, skip_ns=0, resamples=2000, seed=28):
    """The whole statistic as a dict (windows annotated in place)."""
    window_medians(steps, windows, skip_ns)
    ratios = pair_ratios(windows)
    med, lo, hi = bootstrap_median(ratios, resamples, seed)
    return {"ratio_median": med, "ci95": [lo, hi], "pairs": len(ratios),
            "ratios": ratios, "resamples": resamples, "seed": seed,
            "skip_ns": skip_ns, "windows": windows}


def meets(result, target):
    """A target (a ratio, e.g. 1.05) is met when the interval's upper end is under it."""
    hi = result["ci95"][1]
    return hi is not None and hi < target
