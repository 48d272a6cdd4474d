#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""summarize_realworld: run_realworld.sh's raw samples -> the per-bench
tables of bench/overhead/summarize.py, then (last, because the GPU machine
returns only the tail of the output) one summary table of every arm on both
benches and the issue's targets.

  summarize_realworld.py RAW.tsv [--machine TEXT] [--command TEXT]

Slowdowns are medians of per-round ratios, on time per token / per step
(positive = slower); see bench/overhead/summarize.py. A target is "met" only
when every round's ratio is within it, "NOT met" when every round's is over
it, else "unresolved" (summarize.verdict says why that is a ~95 % statement).
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "overhead"))
import summarize as S  # noqa: E402

# What each arm is, for the summary table.
ARM_TEXT = {
    "untraced": "the program alone",
    "floor": "CUPTI floor: the same CUPTI kinds, buffers discarded",
    "gt_file": "gaptrace injected, trace file (no collector)",
    "gt_run": "`gaptrace run` (collector, NVML 10 Hz + 1 Hz: the default)",
    "gt_run_nvml0": "`gaptrace run --nvml-hz 0` (collector, no NVML)",
    "gt_run_100hz": "`gaptrace run --nvml-hz 100 --nvml-proc-hz 10` (NVML near the old default)",
    "gt_run_stacks": "`gaptrace run --stacks` (host call stacks, native and Python)",
    "gt_dormant": "gaptrace injected dormant (GAPTRACE_DORMANT=1, no collector)",
    "torch_profiler": "torch.profiler (CPU + CUDA activities)",
}

# (arm, reference, limit or None, what it says)
CHECKS = [
    ("gt_file", "floor", 0.05, "file mode within 5 % of the CUPTI floor"),
    ("gt_run", "floor", 0.05, "`gaptrace run` within 5 % of the CUPTI floor"),
    ("gt_dormant", "untraced", 0.01, "dormant within 1 % of untraced"),
    ("gt_run", "gt_file", None, "`gaptrace run` against file mode (the issue: run cost more)"),
    ("gt_run", "gt_run_nvml0", None, "NVML sampling at the new default rates"),
    ("gt_run_100hz", "gt_run_nvml0", None, "NVML sampling near the old 100 Hz"),
    ("gt_run_nvml0", "gt_file", None, "the collector path without NVML against file mode"),
    ("gt_run_stacks", "gt_run", 0.02, "host stacks within 2 % of stacks off (the bar for default-on)"),
]


def fmt_val(v, higher):
    return "%.1f" % v if higher else "%.3f" % v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--machine", default="")
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    benches = S.by_bench(S.load(a.raw))
    if not benches:
        print("no good runs in %s" % a.raw)
        return 1
    for bench, rs in benches.items():
        S.print_bench(bench, rs)

    stats = {b: S.bench_stats(rs) for b, rs in benches.items()}
    names = list(benches)
    arms = []
    for b in names:
        for arm in stats[b][2]:
            if arm not in arms:
                arms.append(arm)
    rounds = {b: len({r["round"] for r in rs}) for b, rs in benches.items()}

    print("\n== Overhead on real workloads: summary")
    if a.machine:
        print("machine: %s" % a.machine)
    if a.command:
        print("command: %s" % a.command)
    print("rounds: %s; slowdowns = medians of per-round ratios on time per token / per step "
          "(positive = slower)\n" % ", ".join("%s %d" % (b, rounds[b]) for b in names))
    head = "| arm |"
    rule = "|---|"
    for b in names:
        unit = stats[b][0]
        head += " %s %s | vs untraced | vs floor |" % (
            b, "tokens/s" if S.higher_is_better(unit) else "ms/step")
        rule += "---|---|---|"
    print(head + " what |")
    print(rule + "---|")
    for arm in arms:
        line = "| %s |" % arm
        for b in names:
            s = stats[b][2].get(arm)
            if not s:
                line += " - | - | - |"
                continue
            line += " %s (%d) | %s | %s |" % (
                fmt_val(s["median"], stats[b][1]), s["runs"],
                "-" if arm == "untraced" else S.pct(s["vs_untraced"]),
                S.pct(s["vs_floor"]) if s["vs_floor"] is not None else "-")
        print(line + " %s |" % ARM_TEXT.get(arm, ""))

    print("\n| check | %s | target |" % " | ".join(names))
    print("|---|%s---|" % ("---|" * len(names)))
    for arm, ref, limit, text in CHECKS:
        cells = []
        for b in names:
            rs = benches[b]
            have = {r["arm"] for r in rs}
            if arm not in have or ref not in have:
                cells.append("-")
                continue
            ratios = S.round_ratios(rs, arm, ref, stats[b][1])
            if not ratios:
                cells.append("-")
            elif limit is None:
                cells.append(S.pct(statistics.median(ratios)))
            else:
                cells.append("%s %s" % (S.pct(statistics.median(ratios)),
                                        S.verdict(ratios, limit)))
        print("| %s vs %s: %s | %s | %s |" % (arm, ref, text, " | ".join(cells),
                                              "<= %+.0f %%" % (100 * limit) if limit else "-"))
    noise = []
    for b in names:
        s = stats[b][2].get("untraced")
        if s and s["min"] > 0:
            noise.append("%s %.1f %%" % (b, 100 * (s["max"] / s["min"] - 1)))
    if noise:
        print("\nnoise: untraced spread (max/min - 1): %s" % ", ".join(noise))
    return 0


if __name__ == "__main__":
    sys.exit(main())
