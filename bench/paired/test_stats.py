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
