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
"""
import collections
import statistics
import sys


def pct(x):
    return "n/a" if x is None else "%+.1f%%" % (100 * x)


def ratio_stats(rows, arm, ref):
    """Median of per-round value ratios arm/ref - 1 (None when no pairs)."""
    by_round = collections.defaultdict(dict)
    for r in rows:
        by_round[r["round"]][r["arm"]] = r["value"]
    ratios = [d[arm] / d[ref] - 1 for d in by_round.values() if arm in d and ref in d and d[ref]]
    return statistics.median(ratios) if ratios else None


def main(path):
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
    benches = collections.OrderedDict()
    for r in rows:
        benches.setdefault(r["bench"], []).append(r)
    for bench, rs in benches.items():
        unit = rs[0].get("metric", "")
        arms = list(collections.OrderedDict((r["arm"], 1) for r in rs))
        print("\n%s (%s, lower is better)\n" % (bench, unit))
        print("| arm | runs | median | min | max | vs untraced | vs floor "
              "| ratio of medians vs untraced | trace MB/run |")
        print("|---|---|---|---|---|---|---|---|---|")
        med = {a: statistics.median([r["value"] for r in rs if r["arm"] == a]) for a in arms}
        for a in arms:
            vals = [r["value"] for r in rs if r["arm"] == a]
            tb = [int(r.get("trace_bytes") or 0) for r in rs if r["arm"] == a]
            mb = statistics.median(tb) / 1e6 if tb and max(tb) > 0 else 0
            vs_u = ratio_stats(rs, a, "untraced") if a != "untraced" else 0.0
            vs_f = (ratio_stats(rs, a, "floor")
                    if "floor" in arms and a not in ("floor", "untraced") else None)
            rom = med[a] / med["untraced"] - 1 if med.get("untraced") else None
            print("| %s | %d | %.3f | %.3f | %.3f | %s | %s | %s | %s |" % (
                a, len(vals), med[a], min(vals), max(vals), pct(vs_u), pct(vs_f), pct(rom),
                "%.2f" % mb if mb else "-"))
    if not benches:
        print("no good runs in %s" % path)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
