# SPDX-License-Identifier: MIT
"""cupy_ops: CuPy elementwise ops, reductions, a RawKernel and a cuBLAS matmul.

Why it is here: CuPy compiles its kernels at run time (NVRTC; cached in
~/.cupy/kernel_cache) and launches every one of them through the driver API
(cuLaunchKernel), not the runtime; its matmul goes to cuBLAS. The torture
suite (tests/gpu/torture.sh) runs it in every capture mode.

Per step (--steps [300]), on a non-blocking stream:
  z = sin(x) * 0.5 + sqrt(|x|)                 CuPy ufuncs (elementwise)
  w = gt_cupy_fma(z, x)                        an ElementwiseKernel (z * x + 1)
  y += 0.001 * w                               a RawKernel, gt_cupy_saxpy
  m = tanh(a @ m)                              cuBLAS SGEMM + a ufunc
  every 10 steps: sum(y), max|y|, norm(m)      reductions, read back (D2H)
x has --n [4 Mi] elements, a and m are --mat [2048] square; the inputs come
from numpy (seeded) and are copied to the GPU once.
Result: the final reductions and the sum of the periodic ones, each to 6
significant digits. The first run on a machine compiles the kernels (a few
seconds); the suite runs an untraced warm-up first.
Expect: exactly one gt_cupy_saxpy kernel per step (its name is ours: extern
"C"); every kernel's correlation id matches a recorded API call.
"""
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import gt_common as gc  # noqa: E402

RAW_SRC = r"""
extern "C" __global__ void gt_cupy_saxpy(const float a, const float *x, float *y, const int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""


def sig(v, digits=6):
    """v rounded to `digits` significant digits (a float; NaN stays NaN)."""
    if not math.isfinite(v) or v == 0:
        return v
    return float("%.*g" % (digits, v))


def main():
    p = gc.make_parser(__doc__.splitlines()[0], steps=300)
    p.add_argument("--n", type=int, default=1 << 22, help="elements of the vectors")
    p.add_argument("--mat", type=int, default=2048, help="side of the square matrices")
    args = p.parse_args()

    import numpy as np
    import cupy as cp

    try:
        ndev = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError:
        ndev = 0
    if ndev == 0:
        print("cupy_ops: no GPU visible to CuPy", file=sys.stderr)
        sys.exit(3)
    cp.cuda.Device(0).use()

    rng = np.random.default_rng(args.seed)
    n, k = args.n, args.mat
    host_x = rng.standard_normal(n, dtype=np.float32)
    host_a = (rng.standard_normal((k, k), dtype=np.float32) / np.float32(math.sqrt(k)))
    host_m = rng.standard_normal((k, k), dtype=np.float32)

    saxpy = cp.RawKernel(RAW_SRC, "gt_cupy_saxpy")
    fma = cp.ElementwiseKernel("float32 z, float32 x", "float32 w", "w = z * x + 1.0f",
                               "gt_cupy_fma")
    block = 256
    grid = (n + block - 1) // block
    n_raw = 0
    periodic = 0.0
    stream = cp.cuda.Stream(non_blocking=True)
    t0 = time.perf_counter()
    steps = 0
    with stream:
        x = cp.asarray(host_x)
        a = cp.asarray(host_a)
        m = cp.asarray(host_m)
        y = cp.zeros_like(x)
        for i in gc.steps_loop(args):
            z = cp.sin(x) * np.float32(0.5) + cp.sqrt(cp.abs(x))
            w = fma(z, x)
            saxpy((grid,), (block,), (np.float32(0.001), w, y, np.int32(n)))
            n_raw += 1
            m = cp.tanh(a @ m)
            if i % 10 == 9:
                periodic += (float(y.sum()) + float(cp.abs(y).max())
                             + float(cp.linalg.norm(m)))
            steps += 1
        y_sum = float(y.sum())
        y_max = float(cp.abs(y).max())
        m_norm = float(cp.linalg.norm(m))
        m_trace = float(cp.trace(m))
    stream.synchronize()
    wall = time.perf_counter() - t0
    extra = {}
    if args.steps > 0:
        extra["expect"] = {"kernel:gt_cupy_saxpy": n_raw, "kernel_corr_matched": "all"}
    gc.emit("cupy_ops", args, steps, wall,
            result={"y_sum": sig(y_sum), "y_max": sig(y_max), "m_norm": sig(m_norm),
                    "m_trace": sig(m_trace), "periodic": sig(periodic),
                    "cupy": cp.__version__.split(".")[0]},
            expect_finding=None, **extra)


if __name__ == "__main__":
    main()
