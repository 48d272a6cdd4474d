#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""summarize: turn run_overhead.sh's raw samples into the overhead table.

Input: a TSV with a header line and the columns
  bench  arm  round  metric  value  process_s  trace_bytes  rc
(one line per run). For each bench, per arm: the number of good runs, the
median/min/max of the metric, the slowdown versus untraced and versus the
CUPTI floor. Slowdowns are medians of per-round ratios (each arm against
the same round's reference run, so slow drift of the machine cancels), and
the ratio of medians is printed beside them. Output is a Markdown table,
ready for BENCHMARKS.md.

A metric named *_per_s* (a throughput, e.g. tokens_per_s_median) is higher
when better; its slowdowns are taken on time per unit (reference / arm - 1),
so a positive slowdown means slower in every table. bench/realworld's
summarizer imports this module.
"""
import collections
import re
import statistics
import sys


def pct(x):
    return "n/a" if x is None else "%+.1f%%" % (100 * x)


def higher_is_better(metric):
    """Is the metric a throughput (bigger = faster)?"""
    return re.search(r"_per_s(_|$)", metric) is not None


def slowdown(value, ref, higher):
    """How much slower value is than ref (+0.05 = 5 % more time)."""
    if higher:
        return ref / value - 1 if value else None
    return value / ref - 1 if ref else None


def round_ratios(rows, arm, ref, higher=False):
    """The per-round slowdowns of arm against ref (rounds that ran both)."""
    by_round = collections.defaultdict(dict)
    for r in rows:
        by_round[r["round"]][r["arm"]] = r["value"]
    ratios = [slowdown(d[arm], d[ref], higher) for d in by_round.values()
              if arm in d and ref in d]
    return [x for x in ratios if x is not None]


def ratio_stats(rows, arm, ref, higher=False):
    """Median of per-round slowdowns of arm against ref (None when no pairs)."""
    ratios = round_ratios(rows, arm, ref, higher)
    return statistics.median(ratios) if ratios else None


def verdict(ratios, limit):
    """Whether the median slowdown is within limit, judged from the per-round
    ratios without assuming their distribution: with n rounds, the smallest and
    the largest ratio bracket the true median with probability 1 - 2^(1-n)
    (94 % for 5 rounds, 97 % for 6). "met" when even the largest is within the
    limit, "NOT met" when even the smallest is over it, otherwise "unresolved":
    the rounds' noise is wider than what the target asks to tell apart. Fewer
    than 5 rounds are always unresolved."""
    if len(ratios) < 5:
        return "unresolved (%d rounds)" % len(ratios)
    lo, hi = min(ratios), max(ratios)
    if hi <= limit:
        return "met"
    if lo > limit:
        return "NOT met"
    return "unresolved (rounds %s..%s)" % (pct(lo), pct(hi))


def load(path):
    """The good rows (rc 0, a numeric value) of a raw TSV, in file order."""
    rows = []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(head, line.rstrip("\n").split("\t")))
            try:
                r["value"] = float(r["value"])
            except (KeyError, ValueError):
                continue
            if r.get("rc") != "0":
                continue
            rows.append(r)
    return rows


def by_bench(rows):
    benches = collections.OrderedDict()
    for r in rows:
        benches.setdefault(r["bench"], []).append(r)
    return benches


def bench_stats(rs):
    """Per arm of one bench's rows: runs, median, min, max, trace MB, slowdown
    vs untraced and vs floor (medians of per-round ratios), ratio of medians."""
    unit = rs[0].get("metric", "")
    higher = higher_is_better(unit)
    arms = list(collections.OrderedDict((r["arm"], 1) for r in rs))
    vals = {a: [r["value"] for r in rs if r["arm"] == a] for a in arms}
    med = {a: statistics.median(v) for a, v in vals.items()}
    out = collections.OrderedDict()
    for a in arms:
        tb = [int(r.get("trace_bytes") or 0) for r in rs if r["arm"] == a]
        out[a] = {
            "runs": len(vals[a]), "median": med[a], "min": min(vals[a]), "max": max(vals[a]),
            "mb": statistics.median(tb) / 1e6 if tb and max(tb) > 0 else 0,
            "vs_untraced": (ratio_stats(rs, a, "untraced", higher) if a != "untraced" else 0.0)
            if "untraced" in med else None,
            "vs_floor": ratio_stats(rs, a, "floor", higher)
            if "floor" in arms and a not in ("floor", "untraced") else None,
            "rom": slowdown(med[a], med["untraced"], higher) if med.get("untraced") else None,
        }
    return unit, higher, out


def print_bench(bench, rs):
    unit, higher, st = bench_stats(rs)
    print("\n%s (%s, %s)\n" % (bench, unit, "higher is better; slowdowns on time per unit"
                               if higher else "lower is better"))
    print("| arm | runs | median | min | max | vs untraced | vs floor "
          "| ratio of medians vs untraced | trace MB/run |")
    print("|---|---|---|---|---|---|---|---|---|")
    for a, s in st.items():
        print("| %s | %d | %.3f | %.3f | %.3f | %s | %s | %s | %s |" % (
            a, s["runs"], s["median"], s["min"], s["max"], pct(s["vs_untraced"]),
            pct(s["vs_floor"]), pct(s["rom"]), "%.2f" % s["mb"] if s["mb"] else "-"))


def main(path):
    benches = by_bench(load(path))
    for bench, rs in benches.items():
        print_bench(bench, rs)
    if not benches:
        print("no good runs in %s" % path)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
