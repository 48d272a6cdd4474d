#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One truth, live: the collector's closed windows equal `gaptrace report`.

A collector with the live analysis (--live, 2 s windows) takes a producer
that replays a synthetic trace whose causes are known (tests/live/
replay_producer.c; `gaptrace synth` gives the ground truth). For every
closed window with a GPU the `live` answer's numbers (wall, busy, idle by
cause, in ns) must equal `gaptrace report --json --capture --from @A --to @B`
of the collector's own trace directory, cause by cause, exactly; the causes
must sum to wall - busy; and over all windows the host_busy share of idle
must be the synthetic truth's within 2 points (what the window edges move);
and the textfile the collector wrote (--metrics-textfile) holds the windows'
idle seconds by cause.

--late-marked=MS: the producer delivers every record MS ms late (past the
1 s watermark) and sends honest delivery marks (format 1.6): the windows
wait for the marks, still equal the report, and no record is late and no
window unconfirmed.

usage: live_truth.py GAPTRACE REPLAY_PRODUCER FAKE_NVML_LIB [--late-marked=MS] [PRESET [SETS...]]
"""
import json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from windows import CAUSES, compare_windows, control, words  # noqa: E402


def late_problems(text):
    """Windows of the live answer with late records or unconfirmed."""
    bad = []
    for line in text.splitlines():
        w = words(line)
        if w["_kind"] == "window" and (w["late"] != "0" or w.get("unconfirmed") != "0"):
            bad.append("window %s: late=%s unconfirmed=%s" % (w["seq"], w["late"], w.get("unconfirmed")))
    return bad


def main():
    late_ms = 0
    argv = []
    for a in sys.argv:
        if a.startswith("--late-marked="):
            late_ms = int(a.split("=", 1)[1])
        else:
            argv.append(a)
    gaptrace, replay, nvml = argv[1:4]
    preset = argv[4] if len(argv) > 4 else "host"
    sets = argv[5:] or ["steps=700", "host_ns=8000000", "kernel_ns=500000"]
    tmp = tempfile.mkdtemp(prefix="gt_live_")
    rc = 1
    col = None
    try:
        run = os.path.join(tmp, "run")
        os.mkdir(run, 0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=run, GAPTRACE_NVML_PATH=nvml)
        syn = os.path.join(tmp, "synth")
        cmd = [gaptrace, "synth", "-p", preset, "--json", "-o", syn]
        for s in sets:
            cmd += ["-s", s]
        truth = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        traces = sorted(f for f in os.listdir(syn) if f.endswith(".gtrace") and f != "nvml.gtrace")
        tr = os.path.join(tmp, "traces")
        prom = os.path.join(tmp, "textfile")
        os.mkdir(prom)
        col = subprocess.Popen([gaptrace, "collector", "--dir", tr, "--live", "--window", "2s",
                                "--watermark", "1s", "--metrics-textfile", prom, "-q"], env=env)
        sock = os.path.join(run, "gaptrace", "collector.sock")
        ctl = os.path.join(run, "gaptrace", "control.sock")
        for _ in range(100):
            if os.path.exists(ctl):
                break
            time.sleep(0.05)
        late_args = ["--late-ms", str(late_ms), "--marks", "1"] if late_ms else []
        prods = [subprocess.Popen([replay, "--socket", sock, "--trace", os.path.join(syn, t)] + late_args)
                 for t in traces]
        for p in prods:
            if p.wait(timeout=120) != 0:
                print("FAIL: replay_producer exited %d" % p.returncode)
                return 1
        # every window holding the run has closed 2 s + 1 s later (the
        # producers ended: their marks are no longer waited for)
        time.sleep(3.5)
        text = control(ctl, "live 16")
        col.terminate()
        col.wait(timeout=30)
        col = None
        rows, problems = compare_windows(gaptrace, text, tr)
        if not rows:
            print("FAIL: no window with a GPU:\n" + text)
            return 1
        if late_ms:
            problems += late_problems(text)
        bad = len(problems)
        for p in problems:
            print("FAIL:", p)
        tot = {"wall": 0, "busy": 0, **{c: 0 for c in CAUSES}}
        for _, _, got, _ in rows:
            tot["wall"] += got[0]
            tot["busy"] += got[1]
            for c, v in zip(CAUSES, got[2:]):
                tot[c] += v
        gpus = rows
        # the textfile (node_exporter's) holds the same seconds, cause by cause
        tf = open(os.path.join(prom, "gaptrace.prom")).read()
        for c in CAUSES:
            v = [float(l.rsplit(" ", 1)[1]) for l in tf.splitlines()
                 if l.startswith("gaptrace_gpu_idle_seconds_total{") and 'cause="%s"' % c in l]
            if len(v) != 1 or abs(v[0] - tot[c] / 1e9) > 1e-9:
                print("FAIL: textfile idle %s %s, the windows %.9f" % (c, v, tot[c] / 1e9))
                bad += 1
        if os.stat(os.path.join(prom, "gaptrace.prom")).st_mode & 0o777 != 0o644:
            print("FAIL: textfile mode %o" % (os.stat(os.path.join(prom, "gaptrace.prom")).st_mode & 0o777))
            bad += 1
        tg = truth["gpus"][0] if "gpus" in truth else None
        if tg:
            t_idle = tg["idle_ns"] if "idle_ns" in tg else tg["idle"]
            t_cause = tg["causes"]
            share = lambda d, c, idle: d[c] / idle if idle else 0
            live_idle = tot["wall"] - tot["busy"]
            for c in CAUSES:
                ls, ts = share(tot, c, live_idle), share(t_cause, c, t_idle)
                if abs(ls - ts) > 0.02:
                    print("FAIL: %s is %.1f%% of the live idle, %.1f%% of the truth's" % (c, 100 * ls, 100 * ts))
                    bad += 1
            print("truth: host_busy %.1f%% of idle; live over %d windows: %.1f%%" % (
                100 * share(t_cause, "host_busy", t_idle), len(gpus), 100 * share(tot, "host_busy", live_idle)))
        rc = 1 if bad else 0
        print("PASS" if rc == 0 else "FAIL: %d problems" % bad)
        return rc
    finally:
        if col:
            col.kill()
        if rc == 0:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", tmp)


if __name__ == "__main__":
    sys.exit(main())
