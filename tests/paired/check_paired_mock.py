# SPDX-License-Identifier: MIT
"""ctest paired_mock: bench/paired/paired.py on fake_steps (2 ms steps,
5 % longer while armed, by construction: absolute deadlines, so neither the
machine's speed nor its load sets them), with the real gaptrace collector
and injection library over the mock CUPTI, ~30 s. Every window must have
been in the state asked for, the median ratio must be 1.05 within 0.01 and
its 95 % interval must exclude 1.00: what is tested is the arming, the
windows and the pairing, not a timing of this machine.

usage: check_paired_mock.py PAIRED_PY GAPTRACE INJECT MOCK_CUPTI FAKE_STEPS OUTDIR
"""
import json
import os
import shutil
import subprocess
import sys


def main(paired, gaptrace, inject, cupti, fake, out):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, GAPTRACE_CUPTI_PATH=cupti, GAPTRACE_FLUSH_MS="50")
    env.pop("GAPTRACE_DEBUG", None)
    cmd = [sys.executable, paired, "--out", out, "--gaptrace", gaptrace, "--inject", inject,
           "--collector-args", "--nvml-hz 0", "--window", "1", "--pairs", "12",
           "--skip-ms", "200", "--warmup", "1", "--connect-timeout", "30",
           "--label", "fake_steps (mock)", "--", fake, "2000", "1.05"]
    rc = subprocess.call(cmd, env=env, timeout=100)
    if rc != 0:
        for name in ("collector.log", "workload.err"):
            path = os.path.join(out, name)
            if os.path.exists(path):
                sys.stderr.write("--- %s\n%s" % (name, open(path).read()[-4000:]))
        return "paired.py exited %d" % rc
    r = json.load(open(os.path.join(out, "paired.json")))
    lo, hi = r["ci95"]
    print("median ratio %.4f, 95 %% interval [%.4f, %.4f], %d pairs"
          % (r["ratio_median"], lo, hi, r["pairs"]))
    bad = [w for w in r["windows"] if w["seen"] != w["state"]]
    if bad:
        return "windows not in the state asked for: %s" % bad[:3]
    if r["pairs"] < 10:
        return "only %d pairs had steps" % r["pairs"]
    if abs(r["ratio_median"] - 1.05) > 0.01:
        return "median ratio %.4f, not 1.05 within 0.01" % r["ratio_median"]
    if lo <= 1.0:
        return "the interval [%.4f, %.4f] does not exclude 1.00" % (lo, hi)
    return None


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    err = main(*sys.argv[1:])
    if err:
        sys.exit("paired_mock: FAIL: " + err)
    print("paired_mock: ok")
