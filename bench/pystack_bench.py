#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pystack_bench.py SO [N] [ROUNDS] - the cost of one inj_py_walk at ~30 frames,
and of one inj_py_key (a stack repeat's cheap site key) on the same stacks.

SO is build/bench/pystack_bench.so. Two stacks of 30 Python frames (plus
this script's few): 30 different functions (each frame a new code object:
the dear case, two reads a frame) and a 30-deep recursion (one code object:
one read a frame). Each is walked N times per round (default 20000), ROUNDS
rounds (default 5); prints the median and the fastest round, per walk and
per frame, and the process_vm_readv calls a walk made. BENCHMARKS.md, "Python stacks".
"""
import ctypes
import statistics
import sys

so = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
lib = ctypes.CDLL(so)  # the GIL is released during the calls, as around a CUDA call
lib.bench_walks.restype = ctypes.c_double
lib.bench_walks.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_double)]
lib.bench_keys.restype = ctypes.c_double
lib.bench_keys.argtypes = lib.bench_walks.argtypes


def measure():
    out = {}
    for what, fn in (("walk", lib.bench_walks), ("key", lib.bench_keys)):
        depth, reads = ctypes.c_int(), ctypes.c_double()
        fn(1000, ctypes.byref(depth), ctypes.byref(reads))  # warm up
        per = [fn(n, ctypes.byref(depth), ctypes.byref(reads)) for _ in range(rounds)]
        out[what] = (per, depth.value, reads.value)
    return out


src = "".join("def f%d():\n    return f%d()\n" % (i, i + 1) for i in range(29))
src += "def f29():\n    return measure()\n"
distinct = {"measure": measure}
exec(compile(src, __file__ + ".distinct", "exec"), distinct)


def recurse(k):
    return measure() if k == 0 else recurse(k - 1)


why = ctypes.create_string_buffer(256)
if lib.bench_init(why, len(why)) != 0:
    sys.exit("pystack_bench: " + why.value.decode())
print("%s; %d walks x %d rounds" % (why.value.decode(), n, rounds))
for name, fn in (("30 distinct functions", distinct["f0"]), ("30-deep recursion", lambda: recurse(29))):
    out = fn()
    per, depth, reads = out["walk"]
    med = statistics.median(per)
    print("%-22s %2d frames, %4.1f reads: median %6.1f us/walk (%4.2f us/frame), fastest round %6.1f us"
          % (name, depth, reads, med / 1000, med / 1000 / depth, min(per) / 1000))
    per, words, reads = out["key"]
    med = statistics.median(per)
    print("%-22s site key of %d frames, %4.1f reads: median %6.2f us/key, fastest round %6.2f us"
          % ("", words // 2, reads, med / 1000, min(per) / 1000))
