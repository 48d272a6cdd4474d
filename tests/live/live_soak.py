#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The live analysis's soak: a producer at a high rate for minutes.

A collector with the live analysis only (--no-traces --live, 2 s windows,
1 s watermark) takes tests/live/rate_producer.c at 200 000 records/s (above
the heaviest real producer seen, ~170 k records/s) for GAPTRACE_SOAK_S
seconds (default 180). Every 2 s the collector's VmRSS and CPU time are
read from /proc and its control socket is asked `live 16`. Checks:

- no window lost: the window seqs seen are 1..windows, contiguous, and the
  windows closed at the end are those due since the collector started
  (elapsed / 2 s) within 1; every window inside the run has its GPU with
  wall = the window's length;
- every GPU window's idle causes sum to wall - busy, exactly;
- no record lost or late: the node's lost= (every reason, late included:
  a record arriving after its window closed) and every window's late= are 0;
- memory flat: after a 20 s warm-up the samples are cut in three thirds of
  time; the highest RSS of the last third exceeds the highest of the middle
  third by at most 8 MiB (a memory bound: the live analysis keeps ~4 s of
  frames and a few closed windows, whatever the run's length).

CPU seconds per window of the middle and last thirds are printed, not
checked (timings are not pass/fail on a shared machine). Over the windows
inside the run, the GPU's busy share and the idle's host_busy and
launch_bound shares of wall must be the producer's construction within
0.5 points.

usage: live_soak.py GAPTRACE RATE_PRODUCER FAKE_NVML_LIB [--seconds S]
       [--rate R] [--hold-ms H]
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from windows import CAUSES, control, words  # noqa: E402

WINDOW_NS = 2000000000
WARMUP_S = 20
RSS_SLACK_KIB = 8 * 1024
TICK = os.sysconf("SC_CLK_TCK")


def proc_sample(pid):
    """(VmRSS, VmHWM in KiB, utime + stime in seconds) of pid."""
    kib = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                kib[line[:5]] = int(line.split()[1])
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    return kib["VmRSS"], kib["VmHWM"], (int(fields[11]) + int(fields[12])) / TICK


def reset_peak(pid):
    """Reset pid's VmHWM to its RSS now (Linux 4.0+: clear_refs 5)."""
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class Seen:
    """What the `live 16` answers told, over the run."""

    def __init__(self):
        self.wins = {}  # seq -> window words
        self.gpus = {}  # seq -> [gpu words]
        self.node = None

    def add(self, text):
        if not text.rstrip().splitlines()[-1].startswith("ok live"):
            raise RuntimeError("bad live answer:\n" + text)
        gpus = {}
        for line in text.splitlines():
            w = words(line)
            if w["_kind"] == "node":
                self.node = w
            elif w["_kind"] == "window":
                self.wins[int(w["seq"])] = w
            elif w["_kind"] == "gpu":
                gpus.setdefault(int(w["seq"]), []).append(w)
        self.gpus.update(gpus)


def check_windows(seen, t0, t_end, run_from, run_to):
    """The window checks; returns the problems."""
    bad = []
    n = int(seen.node["windows"])
    if sorted(seen.wins) != list(range(1, n + 1)):
        missing = sorted(set(range(1, n + 1)) - set(seen.wins))
        bad.append("window seqs seen are not 1..%d: missing %s" % (n, missing[:10]))
    due = (t_end - 1000000000) // WINDOW_NS - t0 // WINDOW_NS
    if abs(n - due) > 1:
        bad.append("%d windows closed, %d due in %.1f s" % (n, due, (t_end - t0) / 1e9))
    for seq, w in sorted(seen.wins.items()):
        a, b = int(w["from"]), int(w["to"])
        if int(w["late"]):
            bad.append("window %d: late=%s" % (seq, w["late"]))
        g = seen.gpus.get(seq, [])
        for x in g:
            wall, busy = int(x["wall_ns"]), int(x["busy_ns"])
            idle = sum(int(x["idle." + c]) for c in CAUSES)
            if idle != wall - busy:
                bad.append("window %d: causes sum to %d, wall - busy = %d" % (seq, idle, wall - busy))
        inside = a >= run_from and b <= run_to
        if inside and (len(g) != 1 or int(g[0]["wall_ns"]) != b - a):
            bad.append("window %d [%d, %d) inside the run: GPUs %s" % (
                seq, a, b, [(x["uuid"], x["wall_ns"]) for x in g]))
    if int(seen.node["lost"]):
        bad.append("records lost: node lost=%s" % seen.node["lost"])
    return bad


class Memory:
    """Samples of the collector, cut in phases: -1 the warm-up, 0, 1, 2 the
    thirds of the rest of the run, 3 after it. The peak RSS of each third is
    its VmHWM, reset at its start (so it does not depend on when a sample
    falls), or the highest sample where the reset is not allowed."""

    def __init__(self, pid, seconds):
        self.pid, self.samples, self.peak = pid, [], {}
        w, d = WARMUP_S, seconds
        self.cuts = [w, w + (d - w) / 3, w + 2 * (d - w) / 3]
        self.phase, self.hwm_ok = -1, True

    def phase_of(self, t, running):
        if not running:
            return 3
        return sum(1 for c in self.cuts if t >= c) - 1

    def sample(self, t, running):
        rss, hwm, cpu = proc_sample(self.pid)
        ph = self.phase_of(t, running)
        self.samples.append((t, rss, cpu, ph))
        if ph != self.phase:
            if self.phase >= 0:
                self.peak[self.phase] = hwm
            self.hwm_ok = reset_peak(self.pid) and self.hwm_ok
            self.phase = ph

    def part(self, ph):
        return [x for x in self.samples if x[3] == ph]

    def peak_kib(self, ph):
        if self.hwm_ok and ph in self.peak:
            return self.peak[ph]
        return max((x[1] for x in self.part(ph)), default=0)

    def cpu_per_window(self, ph):
        p = self.part(ph)
        dt = p[-1][0] - p[0][0] if p else 0
        return (p[-1][2] - p[0][2]) / (dt / (WINDOW_NS / 1e9)) if dt > 0 else 0.0


def shares(seen, run_from, run_to):
    """GPU busy / host_busy / launch_bound shares of wall over the windows inside the run."""
    tot = {"wall": 0, "busy": 0, "host_busy": 0, "launch_bound": 0}
    for seq, w in seen.wins.items():
        if int(w["from"]) >= run_from and int(w["to"]) <= run_to:
            for g in seen.gpus.get(seq, []):
                tot["wall"] += int(g["wall_ns"])
                tot["busy"] += int(g["busy_ns"])
                tot["host_busy"] += int(g["idle.host_busy"])
                tot["launch_bound"] += int(g["idle.launch_bound"])
    w = tot["wall"] or 1
    return {k: v / w for k, v in tot.items() if k != "wall"}


def soak(args, tmp):
    """Run the collector and the producer; returns what was seen."""
    run = os.path.join(tmp, "run")
    os.mkdir(run, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=run, GAPTRACE_NVML_PATH=args.nvml)
    t0 = time.time_ns()
    col = subprocess.Popen([args.gaptrace, "collector", "--no-traces", "--live", "--window", "2s",
                            "--watermark", "1s", "-q"], env=env)
    try:
        sock = os.path.join(run, "gaptrace", "collector.sock")
        ctl = os.path.join(run, "gaptrace", "control.sock")
        for _ in range(100):
            if os.path.exists(ctl):
                break
            time.sleep(0.05)
        prod = subprocess.Popen([args.producer, "--socket", sock, "--rate", str(args.rate),
                                 "--seconds", str(args.seconds), "--hold-ms", str(args.hold_ms)],
                                stdout=subprocess.PIPE, text=True)
        mem, seen, start = Memory(col.pid, args.seconds), Seen(), time.monotonic()
        while prod.poll() is None:
            mem.sample(time.monotonic() - start, True)
            seen.add(control(ctl, "live 16"))
            time.sleep(max(0.0, 2.0 - (time.monotonic() - start) % 2.0))
        mem.sample(time.monotonic() - start, False)
        line = prod.stdout.read().strip()
        if prod.returncode != 0:
            raise RuntimeError("rate_producer exited %d" % prod.returncode)
        time.sleep(3.5)  # the run's last windows close 2 s + 1 s later
        seen.add(control(ctl, "live 16"))
        t_end = time.time_ns()
        mem.sample(time.monotonic() - start, False)
    finally:
        col.terminate()
        col.wait(timeout=30)
    return mem, seen, (t0, t_end), line


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gaptrace")
    ap.add_argument("producer")
    ap.add_argument("nvml")
    ap.add_argument("--seconds", type=int, default=int(os.environ.get("GAPTRACE_SOAK_S", "180")))
    ap.add_argument("--rate", type=int, default=200000)
    ap.add_argument("--hold-ms", type=int, default=0, help="producer holds records back (late)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gt_soak_")
    try:
        mem, seen, (t0, t_end), line = soak(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    prod = dict(kv.split("=") for kv in line.split())
    run_from, run_to = int(prod["from"]), int(prod["to"])
    # a window holding the producer's first or last second is not "inside"
    # (the collector sees the process from its connection to its end)
    bad = check_windows(seen, t0, t_end, run_from + 1000000000, run_to - 1000000000)
    if not mem.part(1) or not mem.part(2):
        bad.append("too few samples after the %d s warm-up (run longer)" % WARMUP_S)
    elif mem.peak_kib(2) - mem.peak_kib(1) > RSS_SLACK_KIB:
        bad.append("RSS grows: peak %d KiB in the last third, %d KiB in the middle one"
                   % (mem.peak_kib(2), mem.peak_kib(1)))
    sh = shares(seen, run_from + 1000000000, run_to - 1000000000)
    print("soak results: rate %d records/s for %d s (producer: %s)" % (args.rate, args.seconds, line))
    print("  windows closed  %s (seqs seen %d)" % (seen.node["windows"], len(seen.wins)))
    print("  records lost    %s, late %d" % (seen.node["lost"], sum(int(w["late"]) for w in seen.wins.values())))
    print("  GPU busy        %.4f of wall (by construction %.4f)" % (sh["busy"], float(prod["busy"])))
    print("  idle host_busy  %.4f, launch_bound %.4f (host gap %.4f, launch gap %.4f)" % (
        sh["host_busy"], sh["launch_bound"], float(prod["host_gap"]), float(prod["launch_gap"])))
    for ph, name in ((0, "first third"), (1, "middle third"), (2, "last third")):
        p = mem.part(ph)
        if p:
            print("  %-13s t %5.0f..%5.0f s  RSS peak %6.1f MiB (%s)  CPU %.4f s/window" % (
                name, p[0][0], p[-1][0], mem.peak_kib(ph) / 1024,
                "VmHWM" if mem.hwm_ok else "samples", mem.cpu_per_window(ph)))
    last = mem.samples[-1]
    print("  collector CPU   %.2f s in %.0f s (%.1f%% of one core), RSS at the end %.1f MiB" % (
        last[2], last[0], 100 * last[2] / max(last[0], 1e-9), last[1] / 1024))
    # the shares of wall, known by construction (the windows' edges fall
    # inside steps: a few steps of 2 s each move them)
    for got, want, name in ((sh["busy"], float(prod["busy"]), "busy"),
                            (sh["host_busy"], float(prod["host_gap"]), "idle host_busy"),
                            (sh["launch_bound"], float(prod["launch_gap"]), "idle launch_bound")):
        if abs(got - want) > 0.005:
            bad.append("%s is %.4f of wall, %.4f by construction" % (name, got, want))
    for b in bad:
        print("FAIL: " + b)
    print("PASS" if not bad else "FAIL: %d problems" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
