# SPDX-License-Identifier: MIT
"""ctests paired_mock and paired_floor_mock: bench/paired/paired.py on
fake_steps (2 ms steps, longer by construction: absolute deadlines, so
neither the machine's speed nor its load sets them), with the real gaptrace
collector and injection library over the mock CUPTI. What is tested is the
arming, the windows and the rounds, not a timing of this machine.

  gt     (paired_mock, ~30 s): states dormant,gt; steps 5 % longer while
         CUPTI's kernel kind is on. The median ratio must be 1.05 within
         0.01, its 95 % interval must exclude 1.00.
  floor  (paired_floor_mock, ~50 s): states dormant,floor,gt; CUPTI's cost
         (5 % with its kernel kind on, 1 % per other kind on) in the floor
         and gt windows, and 20 records a step at 5 us per record the
         injection library reads (5 % of a step) in gt windows only: the
         floor must read none. floor/dormant at least 1.04 and gt/floor
         above 1 with intervals excluding 1.00, and gt/dormant minus
         floor/dormant (the reading's share of a dormant step, whatever
         CUPTI's) 0.05 within 0.015.

Every window must have been in the state asked for.

usage: check_paired_mock.py PAIRED_PY GAPTRACE INJECT MOCK_CUPTI FAKE_STEPS OUTDIR [gt|floor]
"""
import json
import os
import shutil
import subprocess
import sys

MODES = {
    "gt": {"args": ["--pairs", "12"], "fake": ["2000", "1.05"], "timeout": 100},
    "floor": {"args": ["--pairs", "12", "--states", "dormant,floor,gt"],
              "fake": ["2000", "1.05", "0.01", "20", "5000"], "timeout": 160},
}


def run(paired, gaptrace, inject, cupti, fake, out, mode):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, GAPTRACE_CUPTI_PATH=cupti, GAPTRACE_FLUSH_MS="50")
    env.pop("GAPTRACE_DEBUG", None)
    m = MODES[mode]
    cmd = [sys.executable, paired, "--out", out, "--gaptrace", gaptrace, "--inject", inject,
           "--collector-args", "--nvml-hz 0", "--window", "1", "--skip-ms", "200",
           "--warmup", "1", "--connect-timeout", "30", "--label", "fake_steps (mock)"] + \
        m["args"] + ["--", fake] + m["fake"]
    rc = subprocess.call(cmd, env=env, timeout=m["timeout"])
    if rc != 0:
        for name in ("collector.log", "workload.err"):
            path = os.path.join(out, name)
            if os.path.exists(path):
                sys.stderr.write("--- %s\n%s" % (name, open(path).read()[-4000:]))
        return None, "paired.py exited %d" % rc
    r = json.load(open(os.path.join(out, "paired.json")))
    for key, c in r["comparisons"].items():
        lo, hi = c["ci95"]
        print("%s: median ratio %.4f, 95 %% interval [%.4f, %.4f], %d rounds"
              % (key, c["ratio_median"], lo, hi, c["rounds"]))
    bad = [w for w in r["windows"] if w["seen"] != w.get("expect", w["state"])]
    if bad:
        return None, "windows not in the state asked for: %s" % bad[:3]
    return r, None


def above_one(c, key):
    lo, hi = c["ci95"]
    if c["rounds"] < 10:
        return "%s: only %d rounds had steps" % (key, c["rounds"])
    if lo <= 1.0:
        return "%s: the interval [%.4f, %.4f] does not exclude 1.00" % (key, lo, hi)
    return None


def check_gt(r):
    c = r["comparisons"]["gt/dormant"]
    if abs(c["ratio_median"] - 1.05) > 0.01:
        return "median ratio %.4f, not 1.05 within 0.01" % c["ratio_median"]
    return above_one(c, "gt/dormant")


def check_floor(r):
    cs = r["comparisons"]
    if sorted(cs) != ["floor/dormant", "gt/dormant", "gt/floor"]:
        return "comparisons %s" % sorted(cs)
    for key in cs:
        err = above_one(cs[key], key)
        if err:
            return err
    fd, gd = cs["floor/dormant"]["ratio_median"], cs["gt/dormant"]["ratio_median"]
    if fd < 1.04:
        return "floor/dormant %.4f: under CUPTI's 5 %% of the kernel kind" % fd
    if abs((gd - fd) - 0.05) > 0.015:
        return "gt/dormant - floor/dormant = %.4f, not the reading's 0.05 within 0.015" % (gd - fd)
    return None


def main(paired, gaptrace, inject, cupti, fake, out, mode="gt"):
    r, err = run(paired, gaptrace, inject, cupti, fake, out, mode)
    return err or (check_gt if mode == "gt" else check_floor)(r)


if __name__ == "__main__":
    if len(sys.argv) not in (7, 8) or (len(sys.argv) == 8 and sys.argv[7] not in MODES):
        sys.exit(__doc__)
    err = main(*sys.argv[1:])
    name = "paired_floor_mock" if sys.argv[7:] == ["floor"] else "paired_mock"
    if err:
        sys.exit("%s: FAIL: %s" % (name, err))
    print("%s: ok" % name)
