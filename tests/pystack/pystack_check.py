#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pystack_check.py PROBE_SO - inject/src/pystack.c against a real CPython.

Loads the test-only pystack_probe.so (pystack.c linked in, no libpython)
with ctypes and walks this interpreter's own frames from nested functions,
a method, a lambda, a generator, another module's file, a recursion deeper
than the cap, another thread, with the GIL released (ctypes.CDLL) and held
(ctypes.PyDLL). Each walk is compared, frame for frame, with what the
interpreter says at the same moment (sys._getframe: file, name or qualified
name, f_lineno), and some lines with the source's MARK comments. Then the
fault path (damaged thread states), and, each in a fresh interpreter, the
refusals: a version without a layout, process_vm_readv unavailable.

Exit 0 all passed, 1 a failure (each printed), 77 this Python has no layout.
"""
import ctypes
import os
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pystack_mod  # noqa: E402

SO = sys.argv[1]
MAX_FRAMES = 48
FILE_MAX, FUNC_MAX, LINETABLE_MAX = 160, 96, 65536
TRUNC_DEPTH, TRUNC_TIME = 1, 2
FAULT = -1
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def mark_line(path, tag):
    with open(path) as f:
        for i, text in enumerate(f, 1):
            if "MARK:" + tag in text and not text.lstrip().startswith("def mark_line"):
                return i
    raise KeyError(tag)


lib = ctypes.CDLL(SO)            # calls release the GIL
lib_gil = ctypes.PyDLL(SO)       # calls keep it
for l in (lib, lib_gil):
    l.probe_walk.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    l.probe_walk_tstate.argtypes = [ctypes.c_ulonglong, ctypes.c_char_p, ctypes.c_size_t]
lib.probe_init.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int]
lib.probe_counter.restype = ctypes.c_ulonglong
lib.probe_bench.restype = ctypes.c_double
lib.probe_bench.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
lib.probe_set_time_cap_ns.argtypes = [ctypes.c_ulonglong]


def parse(text):
    lines = text.decode().splitlines()
    head = dict(kv.split("=") for kv in lines[0].split())
    frames = [tuple(l.split("\t")) for l in lines[1:]]
    return int(head["rc"]), int(head["truncated"]), [(f, n, int(ln)) for f, n, ln in frames]


def expected(frame):
    """The interpreter's own view of the stack from `frame` outwards."""
    out = []
    while frame is not None:
        co = frame.f_code
        name = co.co_qualname if sys.version_info >= (3, 11) else co.co_name
        out.append((co.co_filename, name, frame.f_lineno))
        frame = frame.f_back
    return out


def walk(which=None):
    """Walk from here: (rc, truncated, frames, what the interpreter says)."""
    buf = ctypes.create_string_buffer(1 << 16)
    rc, exp = (which or lib).probe_walk(buf, len(buf)), expected(sys._getframe())  # MARK:walk
    r, trunc, frames = parse(buf.value)
    assert r == rc
    return rc, trunc, frames, exp


def same(name, got, depth=None):
    rc, trunc, frames, exp = got
    if depth is not None:
        exp = exp[:depth]
    ok = rc == len(frames) == len(exp) and frames == exp
    check(ok, "%s: %d frames as the interpreter says" % (name, rc))
    if not ok:
        for i in range(max(len(frames), len(exp))):
            g = frames[i] if i < len(frames) else None
            e = exp[i] if i < len(exp) else None
            print("   %s %r\n     want %r" % ("  " if g == e else "!!", g, e))
    return frames


# ------------------------------------------------------------ the cases

def inner():
    return walk()  # MARK:inner


def middle():
    return inner()  # MARK:middle


def outer():
    return middle()


class Klass:
    def method(self):
        return walk()  # MARK:method


def gen():
    yield walk()  # MARK:gen


def recurse(n, which=None):
    if n == 0:
        return walk(which)
    return recurse(n - 1, which)  # MARK:recurse


def case_nested():
    frames = same("nested", outer())
    me = os.path.abspath(__file__)
    check(frames[0][:2] == (me, "walk") and frames[0][2] == mark_line(me, "walk"),
          "nested: innermost is walk() at its MARK line")
    check(frames[1] == (me, "inner", mark_line(me, "inner")), "nested: inner() line")
    check(frames[2] == (me, "middle", mark_line(me, "middle")), "nested: middle() line")


def case_method():
    frames = same("method", Klass().method())
    want = "Klass.method" if sys.version_info >= (3, 11) else "method"
    check(frames[1][1:] == (want, mark_line(__file__, "method")), "method: " + want)


def case_lambda():
    frames = same("lambda", (lambda: walk())())
    check(frames[1][1].endswith("<lambda>"), "lambda: named <lambda>")


def case_generator():
    frames = same("generator", next(gen()))
    check(frames[1][1:] == ("gen", mark_line(__file__, "gen")), "generator: gen() line")


def case_module():
    frames = same("module", pystack_mod.from_module(walk))
    path = pystack_mod.__file__
    check(frames[1] == (path, "from_module", mark_line(path, "from_module")),
          "module: the other file's name and line")


def case_loop():
    total = 0
    for i in range(3):
        total += (
            i * 2)
        got = walk() if i == 2 else None
    same("loop (a line after a backward jump)", got)


def case_deep():
    got = recurse(100)
    same("deep", got, depth=MAX_FRAMES)
    check(got[1] & TRUNC_DEPTH, "deep: truncated by depth")


def depth_exact(target):
    """Walk from a stack of exactly `target` frames."""
    base = len(expected(sys._getframe()))  # this frame and its callers
    return recurse(target - base - 2)  # walk() + (n + 1) recurse() frames


def case_exact_cap():
    got = depth_exact(MAX_FRAMES)
    same("exactly %d frames" % MAX_FRAMES, got)
    check(got[1] == 0, "exactly %d frames: not truncated (%d)" % (MAX_FRAMES, got[1]))
    got = depth_exact(MAX_FRAMES + 1)
    same("%d frames" % (MAX_FRAMES + 1), got, depth=MAX_FRAMES)
    check(got[1] == TRUNC_DEPTH, "%d frames: truncated by depth" % (MAX_FRAMES + 1))


def case_thread():
    res = []
    t = threading.Thread(target=lambda: res.append(outer()))
    t.start()
    t.join()
    same("thread", res[0])
    check(res[0][2][-1][1] != "<module>", "thread: ends in the thread's bootstrap, not <module>")


def case_gil_held():
    same("GIL held (PyDLL)", recurse(5, lib_gil))


def case_time_cap():
    lib.probe_set_time_cap_ns(1)
    got = recurse(40)
    lib.probe_set_time_cap_ns(0)
    check(got[1] & TRUNC_TIME and got[0] <= 8, "time cap 1 ns: %d frames, truncated by time" % got[0])


def case_names():
    """Long paths keep their end, long names their start; latin-1 is UTF-8, wider text '?'."""
    long_path = "/" + "d" * 300 + "/tail_of_the_path.py"
    long_name = "f" * 150
    src = ("def caf\u00e9(w):\n    return w()\n"
           "def \u51fd\u6570(w):\n    return w()\n"
           "def %s(w):\n    return w()\n" % long_name)
    g = {}
    exec(compile(src, long_path, "exec"), g)
    _, _, latin, _ = g["caf\u00e9"](walk)
    _, _, wide, _ = g["\u51fd\u6570"](walk)
    _, _, longf, _ = g[long_name](walk)
    want_file = "..." + long_path[-(FILE_MAX - 3):]
    check(latin[1][0] == want_file, "names: a 321-byte path keeps its last %d bytes after '...'" % (FILE_MAX - 3))
    check(latin[1][1:] == ("caf\u00e9", 2), "names: a latin-1 name in UTF-8 (%r)" % (latin[1][1:],))
    check(wide[1][1:] == ("?", 4), "names: a name beyond latin-1 is '?' (%r)" % (wide[1][1:],))
    check(longf[1][1:] == ("f" * FUNC_MAX, 6), "names: a 150-byte name keeps its first %d" % FUNC_MAX)


def case_long_tables():
    """Line tables past a page need a second read; past 64 KiB the line is 0."""
    for n in (300, 3000, 14000):
        src = "def big(w):\n" + "    x = 1\n" * n + "    return w()\n"
        g = {}
        exec(compile(src, "<big%d>" % n, "exec"), g)
        _, _, frames, exp = g["big"](walk)
        table = len(g["big"].__code__.co_linetable)
        want = exp[1][2] if table <= LINETABLE_MAX else 0
        check(frames[1][2] == want, "line table of %d bytes: line %d (want %d)" % (table, frames[1][2], want))


def case_fault():
    buf = ctypes.create_string_buffer(1 << 16)
    junk = ctypes.create_string_buffer(b"\x41" * 4096)  # every pointer 0x4141...
    before = lib.probe_counter(1)
    rc_junk = lib.probe_walk_tstate(ctypes.addressof(junk), buf, len(buf))
    rc_low = lib.probe_walk_tstate(8, buf, len(buf))  # the zero page
    check(rc_junk == FAULT, "fault: a thread state of junk gives INJ_PY_FAULT (%d)" % rc_junk)
    check(rc_low == FAULT, "fault: an unmapped thread state gives INJ_PY_FAULT (%d)" % rc_low)
    check(lib.probe_counter(1) == before + 2, "fault: counted")
    # A frame chain whose 'previous' is junk: every step is read safely.
    odd = ctypes.create_string_buffer(b"\x00" * 4096)
    for off in range(0, 4096, 8):
        ctypes.memmove(ctypes.addressof(odd) + off,
                       ctypes.byref(ctypes.c_uint64(ctypes.addressof(odd) + 64)), 8)
    rc_loop = lib.probe_walk_tstate(ctypes.addressof(odd), buf, len(buf))
    check(rc_loop in (FAULT, 0), "fault: a self-referencing fake chain ends (%d)" % rc_loop)


# ------------------------------------------------------------ site keys

KEY_FRAMES = lib.probe_key_frames()


def key():
    words = (ctypes.c_ulonglong * (2 * KEY_FRAMES))()
    n = lib.probe_key(words)
    check(n > 0 and n % 2 == 0, "key: %d words" % n)
    codes = [words[i] for i in range(0, n, 2)]
    # the code objects are the frames' own (id() is the address), innermost
    # first; C-stack shim frames (3.12+) may sit between them
    f, real = sys._getframe(), []
    while f is not None and len(real) < KEY_FRAMES:
        real.append(id(f.f_code))
        f = f.f_back
    mine = [c for c in codes if c in real]
    check(codes[0] == real[0] and mine == real[:len(mine)] and len(mine) >= min(len(real), 2),
          "key: the frames' code objects, innermost first")
    return tuple(words[i] for i in range(n))


def key_helper():
    return key()  # MARK:key-helper


def key_at_depth(k, leaf):
    return leaf() if k == 0 else key_at_depth(k - 1, leaf)


def case_keys():
    same_line = [key() for _ in range(3)]  # MARK:key-loop
    check(same_line[0] == same_line[1] == same_line[2], "key: one line, one key")
    a = key()  # MARK:key-a
    b = key()  # MARK:key-b
    check(a != b and a != same_line[0], "key: another line, another key")
    via_a = key_helper()  # one helper, two callers: the caller's frame tells them apart
    via_b = key_helper()
    check(via_a != via_b, "key: one helper called from two lines")
    # a difference deeper than KEY_FRAMES frames is not seen (documented)
    deep = [key_at_depth(KEY_FRAMES, key) for _ in range(1)]  # MARK:key-deep-a
    deep += [key_at_depth(KEY_FRAMES, key)]  # MARK:key-deep-b
    check(deep[0] == deep[1], "key: callers past %d frames are not part of it" % KEY_FRAMES)


def fresh(mode):
    """Run this script in a new interpreter in a refusal mode."""
    p = subprocess.run([sys.executable, __file__, SO, mode], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout.strip()


def case_refusals():
    rc, out = fresh("--version=0x03090f00")
    check(rc == 0 and out == "-1 CPython 3.9 is not supported (3.10-3.13 are)", "3.9 refused: " + out)
    rc, out = fresh("--version=0x030e0000")
    check(rc == 0 and out == "-1 CPython 3.14 is not supported (3.10-3.13 are)", "3.14 refused: " + out)
    rc, out = fresh("--no-vm-readv")
    check(rc == 0 and out.startswith("-1 process_vm_readv cannot read this process (Operation not permitted)"),
          "no process_vm_readv refused: " + out)


def refusal_mode(mode):
    why = ctypes.create_string_buffer(256)
    if mode.startswith("--version="):
        rc = lib.probe_init(why, len(why), int(mode.split("=")[1], 16), 0)
    else:
        rc = lib.probe_init(why, len(why), 0, 1)
    buf = ctypes.create_string_buffer(4096)
    walk_rc = lib.probe_walk(buf, len(buf))
    print(rc, why.value.decode())
    sys.exit(0 if walk_rc == -2 else 1)  # INJ_PY_UNSUPPORTED after a refusal


def bench(n):
    depth = ctypes.c_int()
    ns = lib.probe_bench(n, ctypes.byref(depth))
    return ns, depth.value


def main():
    if len(sys.argv) > 2 and sys.argv[2].startswith("--bench"):
        return bench_main()
    if len(sys.argv) > 2:
        return refusal_mode(sys.argv[2])
    why = ctypes.create_string_buffer(256)
    rc = lib.probe_init(why, len(why), 0, 0)
    print("init: %d %s" % (rc, why.value.decode()))
    if rc != 0 and "is not supported (3.10-3.13" in why.value.decode():
        print("SKIP: " + why.value.decode())
        return 77
    check(rc == 0, "init")
    # No time bound but in case_time_cap: what a walk finds must not depend
    # on how busy the machine is.
    lib.probe_set_time_cap_ns(0)
    for case in (case_nested, case_method, case_lambda, case_generator, case_module, case_loop, case_deep, case_exact_cap,
                 case_thread, case_gil_held, case_names, case_long_tables, case_time_cap, case_fault, case_keys, case_refusals):
        case()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def bench_main():
    """--bench[=N]: N walks at a depth of about 30 frames; one line of results."""
    n = int(sys.argv[2].split("=")[1]) if "=" in sys.argv[2] else 100000
    why = ctypes.create_string_buffer(256)
    if lib.probe_init(why, len(why), 0, 0) != 0:
        print("init: " + why.value.decode())
        return 1

    def down(k):
        return bench(n) if k == 0 else down(k - 1)

    bench(1000)  # warm up
    ns, depth = down(30 - len(expected(sys._getframe())) - 1)
    print("%s: %d walks at %d frames: %.2f us per walk, %.0f ns per frame"
          % (why.value.decode(), n, depth, ns / 1000, ns / max(depth, 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
