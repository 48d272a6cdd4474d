#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for the control socket of `gaptrace collector --live`, for the
tests of `gaptrace top` (top_once.py, top_tmux.py).

    fake_live_collector.py DIR [--period S] [--mode normal|error|hostile]

listens on DIR/control.sock (what gaptrace top --socket DIR/collector.sock
asks) and answers the requests as the real collector frames them
(collector/daemon/src/collector.c, control_readable and control_request;
gt_control_request in control.c): a request is a line ending in '\\n', split
into words at spaces, tabs and CRs; each answer is zero or more data lines,
then exactly one final line starting with "ok" or "error "; several requests
may come on one connection, which the client closes; a line of 512 bytes or
more without its '\\n' ends the connection.

`live [N]` answers docs/FLEET.md's lines for the last N (1 to 16) closed
windows, oldest first, then "ok live <count>". A window closes every
--period seconds (seq 42 first); its numbers are a function of its seq
(window_lines), so a test reads the seq top shows and computes what it must
show. Two GPUs, every cause (some under 1 % of the window), three
processes, lost records on GPU 1.

The mode is --mode, or the first word of DIR/mode when that file exists
(read at each request, so a test changes it while top runs): error answers
"error live analysis is off ..." as a collector without live analysis does;
hostile puts terminal escapes, long values, unknown keys and lines, and
numbers that are not numbers into the answer.
"""
import argparse
import os
import socketserver
import sys
import time

LINE_MAX = 512
FIRST_SEQ = 42
CAUSES = ["host_busy", "sync_turnaround", "launch_bound", "transfer", "dependency",
          "other_process", "unknown", "startup", "data_lost"]
OFF = ("error live analysis is off (start the collector with --metrics, "
       "--metrics-textfile or --live)")


def gpus(seq, window_ns):
    """[(index, uuid, name, busy_ns, {cause: ns}, lost)] of window seq: the
    causes sum to wall - busy exactly."""
    out = []
    for g in range(2):
        busy = window_ns * (30 + 7 * g + seq % 5) // 100
        # shares of wall in 1/1000: three large, two small (< 1 %), zeros
        shares = {"host_busy": 300 + 10 * (seq % 4) - 100 * g, "sync_turnaround": 120,
                  "launch_bound": 60 + 5 * g, "transfer": 4, "dependency": 7 + g,
                  "other_process": 0, "startup": 0, "data_lost": 2 * g}
        idle = {c: window_ns * shares.get(c, 0) // 1000 for c in CAUSES}
        idle["unknown"] = 0
        idle["unknown"] = window_ns - busy - sum(idle.values())
        out.append((g, "GPU-52027fe8-%04d-4c1e-9a3b-0000000000%02d" % (g, g),
                    "NVIDIA H200" if g == 0 else "NVIDIA H100 80GB HBM3", busy, idle,
                    (seq % 3) * 17 if g == 1 else 0))
    return out


def procs(seq, window_ns):
    """[(gpu, pid, busy_ns, cmd)] of window seq."""
    g = gpus(seq, window_ns)
    return [(0, 4242, g[0][3] * 2 // 3, "python3 train.py --epochs 10 --batch-size 256"),
            (0, 4243, g[0][3] // 3, "python3 eval.py"),
            (1, 5151, g[1][3], "/usr/bin/torchrun --nproc-per-node 8 pretrain.py")]


def window_lines(seq, period, watermark):
    """The data lines of window seq (its window, gpu and proc lines)."""
    wn = int(period * 1e9)
    frm = (seq + State.base) * wn  # aligned to multiples of the period since the epoch
    lines = ["window seq=%d from=%d to=%d records=%d late=%d lost=%d analysis_ns=%d"
             % (seq, frm, frm + wn, 800000 + seq, seq % 2, (seq % 3) * 17, 41234567)]
    for g, uuid, name, busy, idle, lost in gpus(seq, wn):
        causes = " ".join("idle.%s=%d" % (c, idle[c]) for c in CAUSES)
        lines.append("gpu seq=%d index=%d uuid=%s wall_ns=%d busy_ns=%d %s lost=%d name=%s"
                     % (seq, g, uuid, wn, busy, causes, lost, name))
    for g, pid, busy, cmd in procs(seq, wn):
        lines.append("proc seq=%d gpu=%d pid=%d busy_ns=%d cmd=%s" % (seq, g, pid, busy, cmd))
    return lines


def hostile(lines):
    """lines with what a broken or hostile collector could send."""
    esc = "\x1b[2J\x1b]0;pwned\x07\r"
    out = ["node hostname=%sevil%s window_ns=abc watermark_ns=-5 connected=99999999999999999999999 "
           "future_key=1 armed=" % (esc, "x" * 300)]
    for ln in lines:
        if ln.startswith("proc "):
            ln += " " + esc + "A" * 2000 + "\x9b31m"
        if ln.startswith("gpu "):
            ln = ln.replace(" name=", " idle.brand_new_cause=0 weird name=" + esc)
        out.append(ln)
    out += ["garbage line without kind", "gpu seq=1 index=9 wall_ns=1 busy_ns=1 name=stale",
            "=== ==", "proc"]
    return out


class State:
    period = 1.0
    mode = "normal"
    directory = "."
    base = 0  # window number since the epoch of seq 0


def current_seq():
    """The seq of the last closed window: seq 42 closed when the fake started."""
    return int((time.time() - State.period / 5) / State.period) - State.base - 1


def mode():
    try:
        with open(os.path.join(State.directory, "mode")) as f:
            return (f.read().split() or [State.mode])[0]
    except OSError:
        return State.mode


def live(args):
    if len(args) > 1 or (args and not args[0].isdigit()) or (args and not 1 <= int(args[0]) <= 16):
        return ["error usage: live [N] (N: 1 to 16)"]
    m = mode()
    if m == "error":
        return [OFF]
    n, seq = int(args[0]) if args else 1, current_seq()
    watermark = State.period / 5  # as current_seq
    wn = int(State.period * 1e9)
    # the end of the window after seq's, plus the watermark
    next_close = (seq + State.base + 2) * wn + int(watermark * 1e9)
    node = ("node hostname=fakehost window_ns=%d watermark_ns=%d connected=3 armed=2 "
            "windows=%d next_close=%d" % (wn, int(watermark * 1e9), seq - FIRST_SEQ + 1,
                                          next_close))
    wins = list(range(max(FIRST_SEQ, seq - n + 1), seq + 1))
    lines = [node] + [ln for s in wins for ln in window_lines(s, State.period, watermark)]
    if m == "hostile":
        lines = hostile(lines[1:])
    return lines + ["ok live %d" % len(wins)]


def answer(line):
    words = line.replace("\t", " ").replace("\r", " ").split()
    if not words:
        return ["error empty request"]
    if words[0] == "live":
        return live(words[1:])
    if words[0] == "list" and len(words) == 1:
        return ["ok 0"]
    return ["error unknown request '%s' (list, stats, arm, disarm, flush, live)" % words[0]]


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        buf = b""
        while True:
            data = self.request.recv(4096)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                out = "".join(ln + "\n" for ln in answer(line.decode("utf-8", "replace")))
                self.request.sendall(out.encode("utf-8", "surrogateescape"))
            if len(buf) >= LINE_MAX:
                return


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--period", type=float, default=1.0)
    ap.add_argument("--mode", default="normal", choices=["normal", "error", "hostile"])
    a = ap.parse_args()
    State.period, State.mode, State.directory = a.period, a.mode, a.dir
    State.base = int((time.time() - a.period / 5) / a.period) - 1 - FIRST_SEQ
    path = os.path.join(a.dir, "control.sock")
    if os.path.exists(path):
        os.unlink(path)
    with Server(path, Handler) as srv:
        sys.stdout.write("listening %s\n" % path)
        sys.stdout.flush()
        srv.serve_forever()


if __name__ == "__main__":
    main()
