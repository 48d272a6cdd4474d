# SPDX-License-Identifier: MIT
"""gemm_power: a large bf16 GEMM loop that drives the GPU to its default
power limit (issue 13, item 7). The H200 then runs at its enforced power
limit with the "SW power cap" clock reason set and SM clocks below their
maximum. That is a healthy, compute-bound GPU, not a fault: gaptrace must
not report it as "throttled" (only a lowered power limit, thermal or
hardware slowdown is a finding).

Work: C = A @ B with --n [16384] square bf16 matrices, no host sync inside
the loop (synchronized every --sync-every [50] products to bound the queue).

Expected diagnosis: healthy, no finding (the report may say, as a note, that
the GPU ran at its power limit).
Runs ~6 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=6.0)
    p.add_argument("--n", type=int, default=16384)
    p.add_argument("--sync-every", type=int, default=50)
    args = p.parse_args()

    import torch

    dev = gc.setup(args)
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32  # cpu: smoke test
    n = args.n if dev.type == "cuda" else min(args.n, 256)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    a = (torch.randn(n, n, generator=g) / n ** 0.5).to(dev, dtype)
    b = (torch.randn(n, n, generator=g) / n ** 0.5).to(dev, dtype)
    c = torch.empty(n, n, device=dev, dtype=dtype)

    steps = 0
    t0 = time.perf_counter()
    for i in gc.steps_loop(args):
        torch.matmul(a, b, out=c)
        steps += 1
        if args.sync_every > 0 and (i + 1) % args.sync_every == 0:
            gc.sync(dev)
    gc.sync(dev)
    wall = time.perf_counter() - t0
    tflops = 2.0 * n ** 3 * steps / wall / 1e12 if wall > 0 else 0.0
    gc.emit("gemm_power", args, steps, wall,
            result={"finite": bool(torch.isfinite(c.float()).all().item())},
            expect_finding=[], expect_absent=["throttled"],
            timing={"tflops": round(tflops, 1)})


if __name__ == "__main__":
    main()
