#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/cli/top_once.py GAPTRACE: `gaptrace top --once` against the fake
collector (fake_live_collector.py): the numbers it prints are the canned
answer's (busy and cause shares of wall computed from the ns, causes under
1 % summed in one row, busy + causes = 100 %, the processes, lost), --gpu
picks one GPU, every line fits $COLUMNS, a hostile answer puts no control
byte on stdout, and an unreachable collector or an `error` answer is exit
1 with the reason on stderr and nothing on stdout."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_live_collector as fake  # noqa: E402

G = sys.argv[1]
LABEL = {"host_busy": "host_work", "sync_turnaround": "after_sync",
         "launch_bound": "launching"}
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def top(sock, *args, columns=100):
    env = dict(os.environ, COLUMNS=str(columns))
    r = subprocess.run([G, "top", "--once", "--socket", sock, *args], capture_output=True,
                       text=True, env=env, timeout=30)
    return r.returncode, r.stdout, r.stderr


def blocks(out):
    """{gpu index: the lines of its block}"""
    got, cur = {}, None
    for ln in out.splitlines():
        m = re.match(r"GPU (\d+) ", ln)
        if m:
            cur = got.setdefault(int(m.group(1)), [])
        if cur is not None:
            cur.append(ln)
    return got


def pct(part, whole):
    return "%.1f %%" % (100.0 * part / whole)


def check_gpu(lines, g, seq):
    index, uuid, name, busy, idle, lost = g
    wn = int(1e9)
    text = "\n".join(lines)
    title = "GPU %d  busy %s  lost %d  wall 1 s  %s  %s" % (index, pct(busy, wn), lost, name, uuid)
    check(lines[0] == title[:100], "GPU %d title: %r, want %r" % (index, lines[0], title[:100]))
    rows = {}
    for ln in lines[1:]:
        if ln.startswith("  PID "):
            break
        m = re.match(r"  (\S.{0,13}?) +(\d+\.\d) %", ln)
        if m:
            rows[m.group(1)] = m.group(2) + " %"
    check(rows.get("busy") == pct(busy, wn), "GPU %d busy %r" % (index, rows.get("busy")))
    small = 0
    for c, ns in idle.items():
        lab = LABEL.get(c, c)
        if ns >= wn / 100:
            check(rows.get(lab) == pct(ns, wn), "GPU %d %s: %r, want %s" % (
                index, lab, rows.get(lab), pct(ns, wn)))
        else:
            check(lab not in rows, "GPU %d: %s under 1 %% has its own row" % (index, lab))
            small += ns
    nsmall = sum(1 for ns in idle.values() if 0 < ns < wn / 100)
    check(rows.get("%d more < 1 %%" % nsmall) == pct(small, wn),
          "GPU %d: the row of the causes under 1 %%: %r" % (index, rows))
    total = sum(float(v.split()[0]) for k, v in rows.items())
    check(abs(total - 100.0) < 0.35, "GPU %d: busy + causes = %.1f %%" % (index, total))
    for pg, pid, pbusy, cmd in fake.procs(seq, wn):
        want = "  %-8d %7s  %s" % (pid, pct(pbusy, wn), cmd)
        check((want in lines) == (pg == index), "GPU %d: process row %r" % (index, want))
    check("unaccounted" not in text, "GPU %d: unaccounted time" % index)


def normal(sock):
    rc, out, err = top(sock)
    check(rc == 0 and err == "", "rc %d, stderr %r" % (rc, err))
    m = re.search(r"window (\d+) \[", out)
    check(m, "no window seq in\n" + out)
    if not m:
        return
    seq = int(m.group(1))
    check(out.startswith("gaptrace top - fakehost  window %d [" % seq), "header: " + out[:90])
    for item in ("length 1 s", "watermark 200 ms", "processes 3 (2 armed)",
                 "windows %d" % (seq - fake.FIRST_SEQ + 1), "records %d" % (800000 + seq),
                 "late %d" % (seq % 2), "lost %d" % ((seq % 3) * 17), "analysis 41 ms"):
        check(item in out, "header item %r" % item)
    b = blocks(out)
    check(sorted(b) == [0, 1], "GPU blocks %s" % sorted(b))
    for g in fake.gpus(seq, int(1e9)):
        if g[0] in b:
            check_gpu(b[g[0]], g, seq)
    check(all(len(ln) <= 100 for ln in out.splitlines()), "a line over 100 columns")


def options(sock):
    rc, out, _ = top(sock, "--gpu", "1")
    check(rc == 0 and sorted(blocks(out)) == [1], "--gpu 1: %s" % sorted(blocks(out)))
    rc, out, _ = top(sock, "--gpu", fake.gpus(42, 1)[0][1])
    check(rc == 0 and sorted(blocks(out)) == [0], "--gpu UUID: %s" % sorted(blocks(out)))
    rc, out, err = top(sock, "--gpu", "7")
    check(rc == 1 and out == "" and "no GPU 7" in err, "--gpu 7: %d %r" % (rc, err))
    rc, out, _ = top(sock, columns=40)
    check(rc == 0 and max(len(ln) for ln in out.splitlines()) <= 40, "COLUMNS=40:\n" + out)
    check(sorted(blocks(out)) == [0, 1], "COLUMNS=40: GPU blocks")


def hostile(sock, d):
    with open(os.path.join(d, "mode"), "w") as f:
        f.write("hostile\n")
    rc, out, _ = top(sock)
    check(rc == 0, "hostile: rc %d" % rc)
    check(not re.search(r"[\x00-\x09\x0b-\x1f\x7f\x80-\x9f]", out), "hostile: a control byte")
    check(all(len(ln) <= 100 for ln in out.splitlines()), "hostile: a line over 100 columns")
    check("index=9" not in out and "stale" not in out, "hostile: a stale window's GPU shown")
    check("length -  watermark -  processes - (- armed)" in out, "hostile: bad numbers not '-'")
    check(sorted(blocks(out)) == [0, 1], "hostile: GPU blocks")
    with open(os.path.join(d, "mode"), "w") as f:
        f.write("error\n")
    rc, out, err = top(sock)
    check(rc == 1 and out == "", "error answer: rc %d, stdout %r" % (rc, out))
    check(err == "gaptrace top: collector says: " + fake.OFF + "\n", "error answer: %r" % err)
    os.unlink(os.path.join(d, "mode"))


def main():
    d = tempfile.mkdtemp(prefix="gt-top-")
    sock = os.path.join(d, "collector.sock")
    rc, out, err = top(sock)
    check(rc == 1 and out == "" and "cannot connect" in err and "control.sock" in err,
          "unreachable: rc %d, %r %r" % (rc, out, err))
    srv = subprocess.Popen([sys.executable, fake.__file__, d], stdout=subprocess.PIPE, text=True)
    try:
        srv.stdout.readline()  # "listening ..."
        normal(sock)
        options(sock)
        hostile(sock, d)
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(d, ignore_errors=True)
    print("top_once: %s" % ("%d failures" % len(fails) if fails else "ok"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
