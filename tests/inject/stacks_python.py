# SPDX-License-Identifier: MIT
"""Host stacks of a real CPython program (issue 15), through the mock CUPTI.

A Python "training step" calls a synchronizing CUDA function (the mock's
API callbacks, through ctypes: the GIL is released, as PyTorch releases it)
from a known line; the trace must hold a wait sample whose stack has the
Python frames innermost first with those files, functions and lines, and
the end note must say which CPython it read.

Then a fast loop ("--repeats"): one helper's sync called from two lines of
the loop, 60 times each, with a budget of 12 whole stacks a second: every
call still gets a stack (a repeat of its site's, no walk), and each names
its own line, though the innermost frame (the helper) is the same.

usage: stacks_python.py GAPTRACE MOCK_CUDA MOCK_CUPTI INJECT_SO
"""
import ctypes
import os
import subprocess
import sys
import tempfile
import time

RUNTIME, ENTER, EXIT = 2, 0, 1  # CUPTI_CB_DOMAIN_RUNTIME_API, API_ENTER, API_EXIT


def cbid(cupti, name):
    s = ctypes.c_char_p()
    for c in range(1, 2048):
        if cupti.cuptiGetCallbackName(RUNTIME, c, ctypes.byref(s)) == 0 and s.value == name:
            return c
    raise SystemExit("no cbid for %s" % name)


def child(out, MOCK_CUDA, MOCK_CUPTI, INJECT):
    os.environ.update({"CUDA_INJECTION64_PATH": INJECT, "GAPTRACE_CUPTI_PATH": MOCK_CUPTI,
                       "GAPTRACE_OUTPUT": out, "GAPTRACE_STACKS": "1",
                       "GAPTRACE_STACK_WAIT_US": "1000",
                       "XDG_RUNTIME_DIR": os.path.dirname(out)})  # no collector there
    os.environ.pop("GAPTRACE_SOCKET", None)
    cuda = ctypes.CDLL(MOCK_CUDA)
    cupti = ctypes.CDLL(MOCK_CUPTI)
    assert cuda.cuInit(0) == 0
    sync = cbid(cupti, b"cudaStreamSynchronize_v3020")

    def item(corr):  # like loss.item(): a sync that waits 3 ms
        cupti.mock_api_callback_corr(RUNTIME, sync, ENTER, corr)
        time.sleep(0.003)
        cupti.mock_api_callback_corr(RUNTIME, sync, EXIT, corr)  # LINE-EXIT

    class Trainer:
        def train_step(self, corr):
            loss = corr * 2
            item(corr)  # LINE-ITEM
            return loss

    t = Trainer()
    for i in range(3):
        t.train_step(100 + i)  # LINE-STEP


def child_repeats(out, MOCK_CUDA, MOCK_CUPTI, INJECT):
    os.environ.update({"CUDA_INJECTION64_PATH": INJECT, "GAPTRACE_CUPTI_PATH": MOCK_CUPTI,
                       "GAPTRACE_OUTPUT": out, "GAPTRACE_STACKS": "1",
                       "GAPTRACE_STACK_WAIT_US": "1000", "GAPTRACE_STACK_MAX_PER_S": "12",
                       "GAPTRACE_STACK_RESUME_US": "600000000",
                       "XDG_RUNTIME_DIR": os.path.dirname(out)})
    os.environ.pop("GAPTRACE_SOCKET", None)
    cuda = ctypes.CDLL(MOCK_CUDA)
    cupti = ctypes.CDLL(MOCK_CUPTI)
    assert cuda.cuInit(0) == 0
    sync = cbid(cupti, b"cudaStreamSynchronize_v3020")

    def wait(corr):
        cupti.mock_api_callback_corr(RUNTIME, sync, ENTER, corr)
        time.sleep(0.0012)
        cupti.mock_api_callback_corr(RUNTIME, sync, EXIT, corr)

    for i in range(60):
        wait(1000 + i)  # LINE-REP-A
        wait(2000 + i)  # LINE-REP-B


def check_repeats(GAPTRACE, MOCK_CUDA, MOCK_CUPTI, INJECT, d):
    out = os.path.join(d, "r.gtrace")
    r = subprocess.run([sys.executable, __file__, "--child-repeats", out, MOCK_CUDA, MOCK_CUPTI,
                        INJECT], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("repeats child failed: %s" % r.stderr)
    dump = subprocess.run([GAPTRACE, "dump", out], capture_output=True, text=True,
                          check=True).stdout
    frames = {}
    for l in dump.splitlines():
        if l.startswith("frame stack=") and " python " in l:
            sid = l.split("stack=")[1].split()[0]
            frames.setdefault(sid, []).append(l.split(" python ", 1)[1])
    me = os.path.abspath(__file__)
    want = {1: "%s:%d" % (me, lines_of("LINE-REP-A")), 2: "%s:%d" % (me, lines_of("LINE-REP-B"))}
    seen = 0
    for l in dump.splitlines():
        if not (l.startswith("stack_sample ") and " wait " in l):
            continue
        corr = int(l.split(" corr=")[1].split()[0])
        sid = l.split(" stack=")[1].split()[0]
        st = frames.get(sid)
        assert st and len(st) >= 2, "sample corr=%d: stack %s has no Python frames" % (corr, sid)
        assert st[1].split(" ", 1)[0] == want[corr // 1000], \
            "corr=%d names %s, not %s" % (corr, st[1], want[corr // 1000])
        seen += 1
    assert seen == 120, "%d of 120 waits have a sample" % seen
    note = [l for l in dump.splitlines() if " stack repeats: " in l]
    assert note, "no repeats note"
    rep = int(note[0].split(" stack repeats: ")[1].split()[0])
    assert rep >= 100, note[0]
    print("ok: 120 waits from 2 lines, %d repeats" % rep)


def lines_of(mark):
    with open(__file__) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith("# " + mark):
                return n
    raise SystemExit("no line marked " + mark)


def main(GAPTRACE, MOCK_CUDA, MOCK_CUPTI, INJECT):
    d = tempfile.mkdtemp(prefix="gt-stacks-py-")
    out = os.path.join(d, "t.gtrace")
    r = subprocess.run([sys.executable, __file__, "--child", out, MOCK_CUDA, MOCK_CUPTI, INJECT],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("child failed: %s" % r.stderr)
    dump = subprocess.run([GAPTRACE, "dump", out], capture_output=True, text=True,
                          check=True).stdout
    # the three waits (a loaded machine may also give "resume" samples: more
    # than 1 ms of Python between two calls)
    samples = [l for l in dump.splitlines() if l.startswith("stack_sample ") and " wait " in l]
    assert len(samples) == 3, samples

    def python_frames(sid):
        return [l.split(" python ", 1)[1] for l in dump.splitlines()
                if l.startswith("frame stack=%s " % sid) and " python " in l]
    # The native frames of one Python line may differ from call to call (the
    # interpreter specializes the call after its first runs); its Python
    # frames may not.
    stacks = [python_frames(l.split(" stack=")[1].split()[0]) for l in samples]
    assert stacks[0] == stacks[1] == stacks[2], stacks
    texts = stacks[0]
    me = os.path.abspath(__file__)
    # innermost first: item() at its EXIT callback, train_step at the call,
    # child at the loop (3.10 has no qualified names: the last part is kept)
    want = [(me, lines_of("LINE-EXIT"), "item"),
            (me, lines_of("LINE-ITEM"), "train_step"),
            (me, lines_of("LINE-STEP"), "child")]
    got = []
    for t in texts[:3]:
        where, func = t.split(" ", 1)
        file, line = where.rsplit(":", 1)
        got.append((file, int(line), func.split(".")[-1]))
    assert got == want, "got %s\nwant %s" % (got, want)
    assert texts[-1].endswith(" <module>"), texts
    note = [l for l in dump.splitlines() if " stacks: " in l]
    assert note and "Python frames: CPython %d.%d" % sys.version_info[:2] in note[0], note
    print("ok: %d Python frames: %s" % (len(texts), texts[:3]))
    check_repeats(GAPTRACE, MOCK_CUDA, MOCK_CUPTI, INJECT, d)


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(*sys.argv[2:6])
    elif sys.argv[1] == "--child-repeats":
        child_repeats(*sys.argv[2:6])
    else:
        main(*sys.argv[1:5])
