#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/cli/top_tmux.py GAPTRACE: the terminal view of `gaptrace top`,
driven inside a detached tmux (its own server socket) against the fake
collector (fake_live_collector.py). Skipped (77) without tmux, or in a
build without ncurses.

It checks: a collector not there yet is said (every number '-'); then the
header and both GPU blocks on a 100x30 screen; the view
redraws when the next window closes (the seq and its time change); after
a resize to 50x20 it redraws within 50 columns (the bars are as long as
50 columns make them, the key line is on the last row, no GPU title cut
into pieces); `?` shows the help line, `g` cycles the GPUs shown; an
`error` answer and a collector gone are said in the view while top keeps
running, and it recovers; `q` and Ctrl-C end it with status 0 under
TERM=screen, tmux-256color and xterm."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_live_collector as fake  # noqa: E402

G = os.path.abspath(sys.argv[1])
fails = []


def check(cond, what, screen=None):
    if not cond:
        fails.append(what)
        print("FAIL:", what)
        if screen is not None:
            print("---- screen ----\n%s\n----------------" % screen)


class Tmux:
    def __init__(self, d):
        self.sock = os.path.join(d, "tmux.sock")

    def __call__(self, *args, check_rc=True):
        r = subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null", *args],
                           capture_output=True, text=True, timeout=20)
        if check_rc and r.returncode != 0:
            raise RuntimeError("tmux %s: %s" % (" ".join(args), r.stderr))
        return r.stdout

    def screen(self):
        return self("capture-pane", "-p", "-t", "top")

    def wait(self, pred, secs=6.0):
        """The screen once pred(screen) holds, or the last one after secs."""
        end = time.time() + secs
        while True:
            s = self.screen()
            if pred(s) or time.time() > end:
                return s
            time.sleep(0.1)


def wait_file(path, secs=5.0):
    end = time.time() + secs
    while time.time() < end:
        if os.path.exists(path) and open(path).read().strip():
            return open(path).read().strip()
        time.sleep(0.1)
    return None


def start(t, d, term, name="exit"):
    """top in session "top", asking every 2 s: a redraw within a second after a
    resize or a key is the resize's or the key's, not the next poll's."""
    exitf = os.path.join(d, name)
    # the shell survives a Ctrl-C (a handler, not an ignore: top gets SIGINT)
    cmd = ("trap : INT; TERM=%s %s top --socket %s/collector.sock --interval 2s; echo EXIT=$? > %s"
           % (term, G, d, exitf))
    t("new-session", "-d", "-s", "top", "-x", "100", "-y", "30", "sh", "-c", cmd)
    t("set-option", "-t", "top", "window-size", "manual")
    return exitf


def seq_of(s):
    m = re.search(r"window (\d+) \[(\S+), (\S+)\)", s)
    return (int(m.group(1)), m.group(2)) if m else None


def bar_ok(s, width):
    """Every busy row's bar is as long as a frame of width columns makes it."""
    bw = min(50, width - 26)
    rows = re.findall(r"^  busy +(\d+\.\d) %  (#*)$", s, re.M)
    return rows and all(len(b) == int(float(p) / 100 * bw + 0.5) for p, b in rows)


def main_view(t, d):
    s = t.wait(lambda s: "GPU 1 " in s)
    check(s.startswith("gaptrace top - fakehost  window "), "header", s)
    check(re.search(r"^GPU 0  busy \d+\.\d %  lost \d+  wall 1 s  NVIDIA H200", s, re.M),
          "GPU 0 block", s)
    check("host_work" in s and "  4242 " in s and "python3 train.py" in s, "GPU 0 rows", s)
    check(bar_ok(s, 100), "bars at 100 columns", s)
    check(s.rstrip("\n").splitlines()[-1].startswith("q quit  g GPU (all)  ? help"),
          "key line", s)
    first = seq_of(s)
    s = t.wait(lambda s: seq_of(s) and seq_of(s) != first, 5.0)
    now = seq_of(s)
    check(first and now and now[0] > first[0] and now[1] != first[1],
          "no redraw for a new window: %s -> %s" % (first, now), s)


def resized(t):
    t("resize-window", "-t", "top", "-x", "50", "-y", "20")
    s = t.wait(lambda s: bar_ok(s, 50), 1.0)
    lines = s.rstrip("\n").splitlines()
    check(max(len(ln) for ln in lines) <= 50, "a line over 50 columns", s)
    check(bar_ok(s, 50), "bars not redrawn for 50 columns", s)
    check(len(lines) == 20 and lines[-1].startswith("q quit"), "key line not on row 20", s)
    check(lines[0] == "gaptrace top - fakehost", "header not repacked at 50", s)
    check(all(re.match(r"GPU \d  busy ", ln) for ln in lines if ln.startswith("GPU")),
          "a GPU title cut up", s)


def keys(t):
    t("send-keys", "-t", "top", "?")
    s = t.wait(lambda s: "every 2.0 s" in s, 1.0)
    check("? close this help" in s and re.search(r"^asks every 2.0 s: /", s, re.M),
          "? shows no help line", s)
    t("send-keys", "-t", "top", "?")
    t("resize-window", "-t", "top", "-x", "100", "-y", "30")
    t("send-keys", "-t", "top", "g")
    s = t.wait(lambda s: "g GPU (1/2)" in s, 1.0)
    check("g GPU (1/2)" in s and "\nGPU 0 " in s and "\nGPU 1 " not in s, "g: GPU 0 alone", s)
    t("send-keys", "-t", "top", "g")
    s = t.wait(lambda s: "g GPU (2/2)" in s, 1.0)
    check("\nGPU 1 " in s and "\nGPU 0 " not in s, "g: GPU 1 alone", s)
    t("send-keys", "-t", "top", "g")
    s = t.wait(lambda s: "g GPU (all)" in s, 1.0)
    check("\nGPU 0 " in s and "\nGPU 1 " in s, "g: every GPU again", s)


def trouble(t, d, srv):
    mode = os.path.join(d, "mode")
    with open(mode, "w") as f:
        f.write("error\n")
    s = t.wait(lambda s: "collector says: error live analysis is off" in s, 5.0)
    check("collector says: error live analysis is off" in s and "asking again" in s,
          "error answer not shown", s)
    os.unlink(mode)
    s = t.wait(lambda s: "collector says" not in s, 5.0)
    check("collector says" not in s and "GPU 0 " in s, "no recovery after the error", s)
    srv.terminate()
    srv.wait()
    s = t.wait(lambda s: "cannot connect" in s, 5.0)
    check("cannot connect" in s and "GPU 0 " in s, "collector gone not shown", s)
    return subprocess.Popen([sys.executable, fake.__file__, d], stdout=subprocess.PIPE)


def quit_with(t, d, term, key):
    exitf = start(t, d, term, "exit-" + term)
    s = t.wait(lambda s: "GPU 1 " in s)
    check("gaptrace top - fakehost" in s, "TERM=%s: no view" % term, s)
    t("send-keys", "-t", "top", key)
    check(wait_file(exitf) == "EXIT=0", "TERM=%s %s: %s" % (term, key, wait_file(exitf, 0)))
    t("kill-server", check_rc=False)


def main():
    if not shutil.which("tmux"):
        print("SKIP: tmux not found")
        return 77
    v = subprocess.run([G, "--version"], capture_output=True, text=True).stdout
    if "live view (top): yes" not in v:
        print("SKIP: gaptrace built without ncurses")
        return 77
    d = tempfile.mkdtemp(prefix="gt-toptmux-")
    t = Tmux(d)
    srv = None
    try:
        exitf = start(t, d, "screen")  # before the collector: said, every number '-'
        s = t.wait(lambda s: "cannot connect" in s, 3.0)
        check("cannot connect" in s and "window - [-, -)" in s, "no collector at start", s)
        srv = subprocess.Popen([sys.executable, fake.__file__, d], stdout=subprocess.PIPE)
        srv.stdout.readline()
        main_view(t, d)
        resized(t)
        keys(t)
        srv = trouble(t, d, srv)
        srv.stdout.readline()
        t("send-keys", "-t", "top", "q")
        check(wait_file(exitf) == "EXIT=0", "q: %s" % wait_file(exitf, 0))
        t("kill-server", check_rc=False)
        quit_with(t, d, "tmux-256color", "C-c")
        quit_with(t, d, "xterm", "q")
    finally:
        t("kill-server", check_rc=False)
        if srv:
            srv.terminate()
            srv.wait()
        shutil.rmtree(d, ignore_errors=True)
    print("top_tmux: %s" % ("%d failures" % len(fails) if fails else "ok"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
