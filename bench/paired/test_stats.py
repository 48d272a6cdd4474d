# SPDX-License-Identifier: MIT
"""Unit tests of bench/paired/stats.py on synthetic step logs (ctest paired_stats)."""
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402


def synth(effect, pairs=30, window_s=1.0, step_ms=2.0, seed=1, transient_ms=0, block=1):
    """A step log and its ABBA windows: steps of step_ms x a level that
    drifts (a random walk, 0.3 % a window, and 10 % of slow sine over the
    run) x 5 % per-step noise with 1 % outliers at 3x, x `effect` in armed
    windows; the first transient_ms of every window runs 2x slower (the
    transition). With block > 1 one log point per block of steps."""
    rng = random.Random(seed)
    t, level = 0, 1.0
    log, windows = [(0, 1)], []
    n_windows = 2 * pairs
    for w in range(n_windows):
        p, k = divmod(w, 2)
        armed = (k == 0) == (p % 2 == 0)  # ABBA: A B, B A, A B, ...
        level *= 1 + rng.gauss(0, 0.003)
        start, end = t, t + int(window_s * 1e9)
        acc = 0
        while t < end:
            frac = w / n_windows
            base = step_ms * 1e6 * level * (1 + 0.1 * (frac - 0.5))
            d = base * (effect if armed else 1.0) * max(0.5, rng.gauss(1, 0.05))
            if rng.random() < 0.01:
                d *= 3
            if (t - start) < transient_ms * 1e6:
                d *= 2
            t += int(d)
            acc += 1
            if acc == block:
                log.append((t, block))
                acc = 0
        windows.append({"start": start, "end": t, "state": "armed" if armed else "dormant"})
    return log, windows


def synth_states(effects, states, rounds=30, window_s=1.0, step_ms=2.0, seed=1, drift=0.0):
    """A step log and its windows for several states: rounds of one window
    per state in stats.rotation order, steps of step_ms x effects[state] x a
    level that walks (0.3 % a window) and drifts by `drift` per window (a
    linear trend, the bias a fixed order would turn into a ratio), x 5 %
    per-step noise."""
    rng = random.Random(seed)
    t, level = 0, 1.0
    log, windows = [(0, 1)], []
    for r in range(rounds):
        for state in stats.rotation(states, r):
            level *= 1 + rng.gauss(0, 0.003)
            level *= 1 + drift
            start, end = t, t + int(window_s * 1e9)
            while t < end:
                t += int(step_ms * 1e6 * level * effects[state] * max(0.5, rng.gauss(1, 0.05)))
                log.append((t, 1))
            windows.append({"start": start, "end": t, "state": state, "round": r})
    return log, windows


class PairedStates(unittest.TestCase):
    STATES = ["dormant", "floor", "gt"]
    EFFECTS = {"dormant": 1.0, "floor": 1.02, "gt": 1.05}

    def run_states(self, **kw):
        log, windows = synth_states(self.EFFECTS, self.STATES, **kw)
        return stats.summarize(stats.step_times(log), windows, states=self.STATES,
                               primary="gt/dormant")

    def test_comparisons(self):
        self.assertEqual(stats.comparisons(["dormant", "floor", "gt"]),
                         [("floor", "dormant"), ("gt", "dormant"), ("gt", "floor")])
        self.assertEqual(stats.comparisons(["armed", "dormant"]), [("armed", "dormant")])
        self.assertEqual(stats.comparisons(["dormant", "gt"]), [("gt", "dormant")])

    def test_rotation_is_balanced(self):
        # two states: today's ABBA
        self.assertEqual([stats.rotation(["a", "b"], r) for r in range(4)],
                         [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]])
        for k in (3, 4):
            states = list("abcd"[:k])
            orders = [stats.rotation(states, r) for r in range(2 * k)]
            for o in orders:
                self.assertEqual(sorted(o), states)
            for pos in range(k):  # every state in every position equally often
                col = [o[pos] for o in orders]
                self.assertEqual({col.count(x) for x in states}, {2})
        orders = [tuple(stats.rotation(["a", "b", "c"], r)) for r in range(6)]
        self.assertEqual(len(set(orders)), 6)  # three states: all six orders
        follows = {}
        for o in orders:
            for x, y in zip(o, o[1:]):
                follows[(x, y)] = follows.get((x, y), 0) + 1
        self.assertEqual(set(follows.values()), {2})
        self.assertEqual(len(follows), 6)

    def test_known_ratios_of_three_states(self):
        r = self.run_states()
        self.assertEqual(r["pairs"], 30)
        self.assertEqual(sorted(r["comparisons"]), ["floor/dormant", "gt/dormant", "gt/floor"])
        self.assertEqual(r["ratio_median"], r["comparisons"]["gt/dormant"]["ratio_median"])
        # over 40 runs (seeds): every estimate near the truth, every interval
        # narrow and above 1, and the 95 % intervals hold the truth in most
        # runs (a percentile bootstrap of a median of 30 undercovers a little)
        held = {}
        for seed in range(1, 41):
            r = self.run_states(seed=seed)
            for key, want in (("floor/dormant", 1.02), ("gt/dormant", 1.05),
                              ("gt/floor", 1.05 / 1.02)):
                c = r["comparisons"][key]
                lo, hi = c["ci95"]
                self.assertEqual(c["rounds"], 30)
                self.assertAlmostEqual(c["ratio_median"], want, delta=0.006, msg=(key, seed))
                self.assertLess(hi - lo, 0.01, (key, seed, c["ci95"]))
                self.assertGreater(lo, 1.0, (key, seed, c["ci95"]))
                held[key] = held.get(key, 0) + (lo <= want <= hi)
        for key, n in held.items():
            self.assertGreaterEqual(n, 32, (key, n))  # 80 %

    def test_drift_cancels_over_the_design(self):
        # 1 % drift a window, twice the floor's effect between neighbours:
        # over whole blocks of 6 rounds the per-round biases are symmetric
        r = self.run_states(rounds=36, drift=0.01)
        for key, want in (("floor/dormant", 1.02), ("gt/dormant", 1.05),
                          ("gt/floor", 1.05 / 1.02)):
            c = r["comparisons"][key]
            self.assertAlmostEqual(c["ratio_median"], want, delta=0.004, msg=(key, c))

    def test_rounds_missing_a_state_are_skipped(self):
        ws = [{"state": "dormant", "median_ns": 2.0, "round": 0},
              {"state": "floor", "median_ns": None, "round": 0},
              {"state": "gt", "median_ns": 2.2, "round": 0},
              {"state": "gt", "median_ns": 2.4, "round": 1},
              {"state": "floor", "median_ns": 2.0, "round": 1}]
        self.assertEqual(stats.round_ratios(ws, "gt", "dormant"), [1.1])
        self.assertEqual(stats.round_ratios(ws, "gt", "floor"), [1.2])
        self.assertEqual(stats.round_ratios(ws, "floor", "dormant"), [])


class PairedStats(unittest.TestCase):
    def run_stat(self, effect, **kw):
        skip = kw.pop("skip_ns", 0)
        log, windows = synth(effect, **kw)
        return stats.summarize(stats.step_times(log), windows, skip_ns=skip)

    def test_known_ratio_inside_narrow_interval(self):
        r = self.run_stat(1.03)
        lo, hi = r["ci95"]
        self.assertEqual(r["pairs"], 30)
        self.assertLessEqual(lo, 1.03)
        self.assertGreaterEqual(hi, 1.03)
        self.assertLess(hi - lo, 0.01, r["ci95"])
        self.assertTrue(stats.meets(r, 1.05))
        self.assertFalse(stats.meets(r, 1.02))

    def test_no_effect_contains_one(self):
        for seed in (1, 2, 3):
            r = self.run_stat(1.0, seed=seed)
            lo, hi = r["ci95"]
            self.assertLessEqual(lo, 1.0, (seed, r["ci95"]))
            self.assertGreaterEqual(hi, 1.0, (seed, r["ci95"]))
            self.assertLess(hi - lo, 0.01)

    def test_blocks_of_steps(self):
        r = self.run_stat(1.03, block=10)
        lo, hi = r["ci95"]
        self.assertTrue(lo <= 1.03 <= hi, r["ci95"])

    def test_skip_removes_transition(self):
        # a transient in every window that is longer in armed ones would bias
        # the ratio; here equal transients, and the skip must drop them: the
        # per-window medians then sit at the steady state (2 ms x level)
        log, windows = synth(1.0, pairs=4, transient_ms=300)
        steps = stats.step_times(log)
        stats.window_medians(steps, windows, skip_ns=350 * 10**6)
        for w in windows:
            self.assertLess(w["median_ns"], 2.5e6)
            self.assertGreater(w["steps"], 250)

    def test_unpaired_windows_are_skipped(self):
        ws = [{"state": "armed", "median_ns": 2.0}, {"state": "armed", "median_ns": 2.0},
              {"state": "armed", "median_ns": 2.2}, {"state": "dormant", "median_ns": 2.0}]
        self.assertEqual(stats.pair_ratios(ws), [1.1])

    def test_bootstrap_is_deterministic(self):
        xs = [1.0 + 0.01 * i for i in range(20)]
        self.assertEqual(stats.bootstrap_median(xs), stats.bootstrap_median(xs))
        med, lo, hi = stats.bootstrap_median(xs)
        self.assertTrue(lo <= med <= hi)

    def test_read_step_log(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("300 1\n100\nbad\n200 2\n")
        try:
            self.assertEqual(stats.read_step_log(f.name), [(100, 1), (200, 2), (300, 1)])
        finally:
            os.unlink(f.name)
        self.assertEqual(stats.step_times([(100, 1), (300, 2)]), [(100, 300, 100.0)])
        # a boundary (0 steps) ends no duration
        self.assertEqual(stats.step_times([(0, 1), (50, 0), (80, 1)]), [(50, 80, 30.0)])


if __name__ == "__main__":
    unittest.main()
