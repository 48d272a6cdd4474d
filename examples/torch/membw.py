# SPDX-License-Identifier: MIT
"""membw: a loop of bandwidth-bound elementwise kernels (torch.mul and
torch.add on a --mib [1024] MiB float32 tensor, out= into a second one), no
host sync inside the loop. The GPU timeline is ~100 % busy and utilization
looks perfect, yet every kernel only streams memory: DRAM bandwidth near its
peak, compute pipes idle. The article's fourth shape, "high utilization, low
throughput" (decision-list step 5, memory bandwidth), which a busy/idle
timeline cannot see: it needs the GPU's hardware counters (issue 14).

Expected diagnosis (first finding): memory_bound (busy, DRAM bandwidth
high, compute pipes low); fix: fuse the elementwise chain, lower precision,
avoid materialised intermediates.
Runs ~5 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=5.0)
    p.add_argument("--mib", type=int, default=1024)
    p.add_argument("--sync-every", type=int, default=200)
    args = p.parse_args()

    import torch

    dev = gc.setup(args)
    n = args.mib * (1 << 20) // 4 if dev.type == "cuda" else 1 << 16  # cpu: smoke test
    x = torch.ones(n, device=dev)
    y = torch.empty_like(x)
    steps = 0
    t0 = time.perf_counter()
    for i in gc.steps_loop(args):
        torch.mul(x, 0.5, out=y)
        torch.add(y, 0.5, out=x)  # x stays 1.0: 0.5 * 1 + 0.5
        steps += 1
        if args.sync_every > 0 and (i + 1) % args.sync_every == 0:
            gc.sync(dev)
    gc.sync(dev)
    wall = time.perf_counter() - t0
    # each step reads and writes the tensor twice
    gbps = 4.0 * n * 4 * steps / wall / 1e9 if wall > 0 else 0.0
    gc.emit("membw", args, steps, wall,
            result={"x_is_one": bool((x == 1).all().item())},
            expect_finding=["memory_bound"],
            timing={"dram_gb_per_s": round(gbps, 1)})


if __name__ == "__main__":
    main()
