# SPDX-License-Identifier: MIT
"""The paired in-process statistic of bench/paired (issue 28 item 1).

A step log holds one line per logged point, "END_NS [N]": the CLOCK_MONOTONIC
time a step (or a block of N steps, closed by a device sync) ended; N = 0
marks a boundary (a new run of steps starts there). A window
is [start, end) on the same clock with a state ("gt", "floor", "dormant";
"armed" and "dormant" for processes of --arm dormant) and a round. A
logged duration belongs to a window when it began at least `skip_ns` after
the window's start and ended before its end; its per-step time is the
duration over N. Per window the median per-step time; per round (one
window of each state side by side, the order rotated from round to round)
the ratio of two states' medians; the statistic of a comparison is the
median of its per-round ratios, with a percentile bootstrap interval over
rounds (fixed seed). With two states a round is a pair (ABBA order).

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


def rounds(windows, size=2):
    """The windows grouped into rounds, in order: by their "round" key, or,
    for windows without one, `size` by `size` as they come."""
    out, key = [], object()
    for i, w in enumerate(windows):
        k = w.get("round", ("seq", i // size))
        if not out or k != key:
            out.append([])
            key = k
        out[-1].append(w)
    return out


def round_ratios(windows, num, den, size=2):
    """Per round with one `num` and one `den` window, both with a median:
    median(num)/median(den). Rounds without both are skipped."""
    out = []
    for ws in rounds(windows, size):
        by = {}
        for w in ws:
            by.setdefault(w["state"], []).append(w)
        a, b = by.get(num, []), by.get(den, [])
        if len(a) == 1 and len(b) == 1 and a[0]["median_ns"] and b[0]["median_ns"]:
            out.append(a[0]["median_ns"] / b[0]["median_ns"])
    return out


def pair_ratios(windows, num="armed", den="dormant"):
    """Windows taken two by two in order (rounds of two); a pair with one
    `num` and one `den` window, both with a median, gives
    median(num)/median(den)."""
    return round_ratios(windows, num, den, 2)


def rotation(states, r):
    """The order of the states in round r: rotated by r (a Latin square:
    over len(states) rounds every state is once in every position); with
    three or more states every other block of len(states) rounds is
    reversed, so that over 2 x len(states) rounds every state also follows
    every other one equally often (a Williams design; for 3 states all six
    orders). Two states: A B, B A, A B, ... (ABBA)."""
    k = len(states)
    order = list(states[r % k:]) + list(states[:r % k])
    if k >= 3 and (r // k) % 2:
        order.reverse()
    return order


def comparisons(states, base="dormant"):
    """(num, den) of the ratios a run of these states reports: every other
    state over the baseline, then each later state over each earlier one
    (dormant,floor,gt: floor/dormant, gt/dormant, gt/floor)."""
    rest = [s for s in states if s != base]
    out = [(s, base) for s in rest] if base in states else []
    return out + [(rest[j], rest[i]) for i in range(len(rest)) for j in range(i + 1, len(rest))]


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


def compare(windows, num, den, size=2, resamples=2000, seed=28):
    """One comparison of windows with medians: {num, den, ratio_median,
    ci95, rounds, ratios}."""
    ratios = round_ratios(windows, num, den, size)
    med, lo, hi = bootstrap_median(ratios, resamples, seed)
    return {"num": num, "den": den, "ratio_median": med, "ci95": [lo, hi],
            "rounds": len(ratios), "ratios": ratios}


def summarize(steps, windows, skip_ns=0, resamples=2000, seed=28, states=("armed", "dormant"),
              base="dormant", primary=None):
    """The whole statistic as a dict (windows annotated in place): under
    "comparisons" one entry "NUM/DEN" per pair of comparisons(states,
    base); at the top the `primary` one (default the first: armed/dormant
    with the default states) as ratio_median, ci95, pairs (its rounds) and
    ratios."""
    window_medians(steps, windows, skip_ns)
    size = len(states)
    comps = {"%s/%s" % c: compare(windows, c[0], c[1], size, resamples, seed)
             for c in comparisons(list(states), base)}
    first = comps[primary or "%s/%s" % comparisons(list(states), base)[0]]
    return {"ratio_median": first["ratio_median"], "ci95": first["ci95"],
            "pairs": first["rounds"], "ratios": first["ratios"], "comparisons": comps,
            "states": list(states), "base": base, "resamples": resamples, "seed": seed,
            "skip_ns": skip_ns, "windows": windows}


def meets(result, target):
    """A target (a ratio, e.g. 1.05) is met when the interval's upper end is under it."""
    hi = result["ci95"][1]
    return hi is not None and hi < target
