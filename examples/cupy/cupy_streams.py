# SPDX-License-Identifier: MIT
"""cupy_streams: small CuPy ops issued on two streams that hand work to each other with events.

What it is: a CuPy pipeline written the way a signal-processing or
simulation loop often is: each step, stream A applies --ops [12] elementwise
ufuncs to a small array (--n [4096] float32: a few microseconds of GPU work
each), records an event; stream B waits for that event (cudaStreamWaitEvent)
and applies --ops ufuncs of its own to a second array; every --sync-every
[50] steps the host reads a reduction back (a D2H copy and a sync).
Every CuPy op goes through Python and cuLaunchKernel (driver API), which
takes far longer than the op's kernel.

The cause, by construction: the kernels are shorter than the host takes to
issue them, so the GPU waits for launches between kernels, on both streams;
the event waits order the streams but each waits only for work that is
already done or running. Expected first finding: launch_bound (or
tiny_kernel_storm); not dependency_wait.
Result: the final sums (6 significant digits) with --steps.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import gt_common as gc  # noqa: E402


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=10.0)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--ops", type=int, default=12)
    p.add_argument("--sync-every", type=int, default=50)
    args = p.parse_args()
    import cupy as cp
    import numpy as np

    rng = np.random.default_rng(args.seed)
    a = cp.asarray(rng.standard_normal(args.n, dtype=np.float32))
    b = cp.asarray(rng.standard_normal(args.n, dtype=np.float32))
    sa, sb = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    ev = cp.cuda.Event(disable_timing=True)
    cp.cuda.Device().synchronize()
    n, sums = 0, (0.0, 0.0)
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        with sa:
            for k in range(args.ops):
                a = cp.tanh(a * 0.999 + 0.001 * k)
            ev.record(sa)
        with sb:
            sb.wait_event(ev)
            for k in range(args.ops):
                b = cp.sin(b + a * 0.001)
        n += 1
        if n % args.sync_every == 0:
            with sb:
                sums = (float(a.sum()), float(b.sum()))
        if n == 1:
            gc.log("first step done")
    cp.cuda.Device().synchronize()
    wall = time.perf_counter() - t0
    gc.emit("cupy_streams", args, n, wall,
            result={"sums": [float("%.6g" % s) for s in sums]} if args.steps else {},
            expect_finding=["launch_bound", "tiny_kernel_storm"])


if __name__ == "__main__":
    main()
