#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Paired in-process overhead (issue 28 items 1-2): one traced-but-dormant
process runs its workload without a break while this script arms and
disarms it through the collector's control socket in windows of W seconds,
in rounds of one window per state (--states: dormant, floor = CUPTI's
kinds on but its buffers recycled unread, gt = gaptrace's capture), the
order rotated from round to round (two states: ABBA); the workload logs
its step ends (GT_STEP_LOG); per comparison (every state over dormant,
and gt/floor) the statistic is the median of per-round ratios of
per-window median step times, with a bootstrap 95 % interval (stats.py).
bench/paired/README.md has the method.

  paired.py --out DIR [options] -- WORKLOAD ARGS...     # arm gt (in-process)
  paired.py --states dormant,floor,gt --out DIR ...     # with the CUPTI floor
  paired.py --arm dormant --out DIR [options] -- WORKLOAD ARGS...
                                                       # between processes

Standard library only.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402


# What a state arms (None: disarmed): the kinds of an arm request.
STATES = {"dormant": None, "floor": "floor,%s", "gt": "%s"}


def log(msg):
    print("paired: %s" % msg, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--arm", choices=("gt", "dormant"), default="gt",
                   help="gt: armed vs dormant windows in one process (default); dormant: "
                        "dormant process vs untraced process, pairs of separate runs")
    p.add_argument("--label", default="", help="the row's name (default: the command)")
    p.add_argument("--gaptrace", default=shutil.which("gaptrace") or "gaptrace")
    p.add_argument("--inject", default="",
                   help="libgaptrace_inject.so (default: next to --gaptrace, ../inject/ or "
                        "../lib/gaptrace/)")
    p.add_argument("--socket", default="",
                   help="producer socket of a running `gaptrace collector --dormant` "
                        "(default: start one, its traces under OUT/traces)")
    p.add_argument("--collector-args", default="",
                   help="extra options of the collector started here, e.g. '--nvml-hz 0'")
    p.add_argument("--kinds", default="default", help="what an armed window captures")
    p.add_argument("--states", default="dormant,gt",
                   help="--arm gt: the states of a round, round 0's order: dormant, floor "
                        "(CUPTI's cost alone: the same kinds, buffers recycled unread), gt "
                        "(default dormant,gt)")
    p.add_argument("--window", type=float, default=2.0, help="window length, s (default 2)")
    p.add_argument("--pairs", type=int, default=20,
                   help="measured rounds (pairs with two states; default 20)")
    p.add_argument("--skip-ms", type=float, default=500.0,
                   help="steps of the first SKIP ms of a window are left out (default 500)")
    p.add_argument("--warmup", type=float, default=5.0,
                   help="s of dormant steps after connecting, then one uncounted pair")
    p.add_argument("--connect-timeout", type=float, default=180.0)
    p.add_argument("--run-seconds", type=float, default=10.0,
                   help="--arm dormant: how long each run is let run before it is stopped")
    p.add_argument("--resamples", type=int, default=2000)
    p.add_argument("--seed", type=int, default=28)
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- WORKLOAD ARGS...")
    a = p.parse_args(argv)
    if a.cmd and a.cmd[0] == "--":
        a.cmd = a.cmd[1:]
    if not a.cmd:
        p.error("no workload: -- COMMAND ARGS...")
    a.states = [x for x in a.states.split(",") if x]
    if (len(a.states) < 2 or len(set(a.states)) != len(a.states) or
            not set(a.states) <= set(STATES)):
        p.error("--states: two or more of %s, each once" % ",".join(STATES))
    if a.arm == "dormant" and a.states != ["dormant", "gt"]:
        p.error("--states is for --arm gt")
    return a


def find_inject(a):
    if a.inject:
        return a.inject
    exe = shutil.which(a.gaptrace) or a.gaptrace
    here = os.path.dirname(os.path.realpath(exe))
    for rel in ("../inject/libgaptrace_inject.so", "../lib/gaptrace/libgaptrace_inject.so"):
        path = os.path.normpath(os.path.join(here, rel))
        if os.path.exists(path):
            return path
    sys.exit("paired: no libgaptrace_inject.so next to %s: give --inject" % exe)


# ------------------------------------------------------------ control socket

def control_path(sock):
    """The collector's control socket beside its producer socket
    (gt_collector_control_for)."""
    d = os.path.dirname(sock)
    return os.path.join(d, "control.sock") if d else "control.sock"


def ask(ctl, req, timeout=5.0):
    """One request on the control socket: (ok, [data lines], final line)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(ctl)
        s.sendall((req + "\n").encode())
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
            lines = buf.decode(errors="replace").split("\n")
            done = [ln for ln in lines[:-1] if ln.startswith("ok") or ln.startswith("error ")]
            if done:
                i = lines.index(done[0])
                return done[0].startswith("ok"), lines[:i], done[0]
    return False, [], "error: connection closed"


def peers(ctl):
    """{pid: state} of the connected producers, {} when unreachable."""
    try:
        ok, data, _ = ask(ctl, "list")
    except OSError:
        return {}
    out = {}
    for ln in data if ok else []:
        f = ln.split()
        if len(f) >= 3 and f[0] == "peer" and f[1].isdigit():
            out[int(f[1])] = f[2]
    return out


def must(ctl, req):
    ok, _, last = ask(ctl, req)
    if not ok:
        raise RuntimeError("collector answered %r to %r" % (last, req))


# ------------------------------------------------------------ processes

def start_collector(a, out):
    sdir = tempfile.mkdtemp(prefix="gtpaired-")  # short and private (0700)
    sock = os.path.join(sdir, "collector.sock")
    cmd = [a.gaptrace, "collector", "--dormant", "--socket", sock,
           "--dir", os.path.join(out, "traces")] + a.collector_args.split()
    errf = open(os.path.join(out, "collector.log"), "w")
    pr = subprocess.Popen(cmd, stdout=errf, stderr=subprocess.STDOUT)
    ctl = control_path(sock)
    for _ in range(300):
        if pr.poll() is not None:
            sys.exit("paired: the collector exited (%d): see %s/collector.log" %
                     (pr.returncode, out))
        try:
            if ask(ctl, "stats")[0]:
                return pr, sock, sdir
        except OSError:
            pass
        time.sleep(0.05)
    pr.kill()
    sys.exit("paired: the collector did not answer on %s" % ctl)


def start_workload(a, out, env_extra, tag="workload"):
    env = dict(os.environ)
    env.update(env_extra)
    return subprocess.Popen(a.cmd, env=env, stdin=subprocess.DEVNULL,
                            stdout=open(os.path.join(out, tag + ".out"), "w"),
                            stderr=open(os.path.join(out, tag + ".err"), "w"),
                            start_new_session=True)


def stop(pr, grace=30.0):
    """SIGINT (Python runs its atexit handlers: the step log is flushed),
    then SIGKILL after grace seconds."""
    if pr.poll() is None:
        try:
            os.killpg(pr.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            pr.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(pr.pid, signal.SIGKILL)
            pr.wait()
    return pr.returncode


def wait_connected(ctl, pr, before, timeout):
    """The workload's pid as the collector lists it (its own pid, or the one
    new producer when a wrapper runs it)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pr.poll() is not None:
            raise RuntimeError("the workload exited (%d) before connecting" % pr.returncode)
        now = peers(ctl)
        if pr.pid in now:
            return pr.pid
        new = [p for p in now if p not in before]
        if len(new) == 1:
            return new[0]
        time.sleep(0.1)
    raise RuntimeError("the workload did not connect within %.0f s" % timeout)


# ------------------------------------------------------------ arms

def sleep_until(t_ns):
    while True:
        left = t_ns - time.monotonic_ns()
        if left <= 0:
            return
        time.sleep(min(left / 1e9, 0.05))


def enter(a, ctl, pid, state, prev):
    """Put the process in state. Between two armed states (floor and gt) a
    disarm first: the injection library would make one anyway (a buffer is
    never read for one and skipped for the other), and so every transition
    into an armed state is the same, from dormant."""
    kinds = STATES[state]
    if kinds is None or (prev and STATES[prev] is not None):
        must(ctl, "disarm %d" % pid)
    if kinds is not None:
        must(ctl, "arm %d %s 0" % (pid, kinds % a.kinds))


def run_windows(a, ctl, pid, rounds, first, counted, prev):
    """Rounds first .. first+rounds-1 of one window per state, in
    stats.rotation order: ([{start, end, state, round, seen, expect,
    counted}], the last state)."""
    windows = []
    for r in range(first, first + rounds):
        for state in stats.rotation(a.states, r):
            enter(a, ctl, pid, state, prev)
            prev = state
            start = time.monotonic_ns()
            seen = peers(ctl).get(pid, "gone")
            sleep_until(start + int(a.window * 1e9))
            windows.append({"start": start, "end": time.monotonic_ns(), "state": state,
                            "round": r, "seen": seen, "counted": counted,
                            "expect": "dormant" if STATES[state] is None else "armed"})
            if seen == "gone":
                raise RuntimeError("the workload left the collector")
    return windows, prev


def arm_gt(a, out, inject):
    """Windows of the states of one process."""
    coll, sock, sdir = (None, a.socket, None) if a.socket else start_collector(a, out)
    ctl = control_path(sock)
    steplog = os.path.join(out, "steps.log")
    env = {"CUDA_INJECTION64_PATH": inject, "GAPTRACE_DORMANT": "1",
           "GAPTRACE_SOCKET": sock, "GT_STEP_LOG": steplog}
    before = peers(ctl)
    wl = start_workload(a, out, env)
    windows, err = [], None
    try:
        pid = wait_connected(ctl, wl, before, a.connect_timeout)
        log("workload pid %d connected; %.1f s of warm-up" % (pid, a.warmup))
        time.sleep(a.warmup)
        # the first arms' one-time costs: one uncounted round
        _, prev = run_windows(a, ctl, pid, 1, -1, False, None)
        windows, _ = run_windows(a, ctl, pid, a.pairs, 0, True, prev)
        try:
            must(ctl, "disarm %d" % pid)
        except (OSError, RuntimeError):
            pass
    except (OSError, RuntimeError) as e:
        err = str(e)
    rc = stop(wl)
    if coll:
        coll.send_signal(signal.SIGTERM)
        coll.wait(30)
        shutil.rmtree(sdir, ignore_errors=True)
    if err:
        sys.exit("paired: %s (workload exit %s; see %s/workload.err)" % (err, rc, out))
    if not os.path.exists(steplog):
        sys.exit("paired: the workload wrote no step log (does it honour GT_STEP_LOG?)")
    steps = stats.step_times(stats.read_step_log(steplog))
    return steps, windows


def arm_dormant(a, out, inject):
    """Dormant process vs untraced process: separate runs, ABBA pairs, one
    window per run (its whole step log after SKIP). Between processes:
    expect the machine's between-process spread in the interval."""
    steps, windows = [], []
    env_d = {"CUDA_INJECTION64_PATH": inject, "GAPTRACE_DORMANT": "1",
             # nothing listens there: the process stays dormant
             "GAPTRACE_SOCKET": os.path.join(out, "nobody.sock")}
    for p in range(a.pairs):
        order = ("armed", "dormant") if p % 2 == 0 else ("dormant", "armed")
        for state in order:  # "armed" = the traced (dormant) process here
            tag = "run%02d_%s" % (p, "traced" if state == "armed" else "untraced")
            path = os.path.join(out, tag + ".steps")
            env = dict(env_d) if state == "armed" else {}
            env["GT_STEP_LOG"] = path
            pr = start_workload(a, out, env, tag)
            time.sleep(a.run_seconds)
            stop(pr)
            lg = stats.read_step_log(path) if os.path.exists(path) else []
            if len(lg) < 3:
                sys.exit("paired: %s logged %d steps" % (tag, len(lg)))
            st = stats.step_times(lg)
            steps += st
            windows.append({"start": lg[0][0], "end": lg[-1][0] + 1, "state": state,
                            "run": tag, "counted": True})
    return sorted(steps), windows


# ------------------------------------------------------------ output

def table_row(a, r, c):
    """The row of comparison c (a stats.compare dict) of result r."""
    def ms(state):
        ws = [w["median_ns"] for w in r["windows"] if w["state"] == state and w["median_ns"]]
        return "%.4f" % (stats.statistics.median(ws) / 1e6) if ws else "-"
    lo, hi = c["ci95"]
    spw = [w["steps"] for w in r["windows"]]
    fmt = (lambda x: "%.4f" % x if x is not None else "-")
    arm = a.arm if a.arm == "dormant" else (
        c["num"] if c["den"] == "dormant" else "%s/%s" % (c["num"], c["den"]))
    return "| %s | %s | %s | %d | %.1f | %.0f | %s | %s | %s | %s | [%s, %s] |" % (
        r["label"], arm, a.kinds if a.arm == "gt" else "-", c["rounds"],
        a.window if a.arm == "gt" else a.run_seconds,
        a.skip_ms, stats.statistics.median(spw) if spw else 0, ms(c["den"]), ms(c["num"]),
        fmt(c["ratio_median"]), fmt(lo), fmt(hi))


# arm gt (armed / dormant windows), floor (floor / dormant), gt/floor (gt /
# floor), dormant (dormant-traced / untraced processes, "window s" is then
# --run-seconds); base = the ratio's denominator, armed = its numerator;
# pairs = rounds
HEADER = ("| workload | arm | kinds | pairs | window s | skip ms | steps/window | "
          "base ms/step | armed ms/step | ratio | 95 % interval |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")


def main(argv):
    a = parse_args(argv)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    inject = find_inject(a)
    steps, windows = (arm_gt if a.arm == "gt" else arm_dormant)(a, out, inject)
    counted = [w for w in windows if w["counted"]]
    skip = int(a.skip_ms * 1e6)
    if a.arm == "gt":
        primary = "gt/dormant" if {"gt", "dormant"} <= set(a.states) else None
        r = stats.summarize(steps, counted, skip_ns=skip, resamples=a.resamples, seed=a.seed,
                            states=a.states, primary=primary)
    else:
        r = stats.summarize(steps, counted, skip_ns=skip, resamples=a.resamples, seed=a.seed)
    r["label"] = a.label or os.path.basename(a.cmd[0]) + " " + " ".join(a.cmd[1:2])
    r.update({"arm": a.arm, "kinds": a.kinds, "window_s": a.window, "cmd": a.cmd,
              "between_processes": a.arm == "dormant",
              "meaning": ("per comparison NUM/DEN of states of one process (top level: %s)"
                          % (primary or "the first") if a.arm == "gt"
                          else "dormant process / untraced process, separate runs")})
    with open(os.path.join(out, "paired.json"), "w") as f:
        json.dump(r, f, indent=1)
    rows = "\n".join(table_row(a, r, c) for c in r["comparisons"].values())
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(HEADER + "\n" + rows + "\n")
    print(HEADER + "\n" + rows, flush=True)
    if any(c["ratio_median"] is None for c in r["comparisons"].values()):
        log("a comparison had no round with steps in both windows (windows too short for "
            "the step time?)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
