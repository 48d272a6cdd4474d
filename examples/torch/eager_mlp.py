# SPDX-License-Identifier: MIT
"""eager_mlp: the eager PyTorch MLP training step that DESIGN.md ("Measured
facts") uses as its overhead reference (~75 kernels and ~830 runtime API
calls per step, ~2 ms
per step on an H200: launch-bound eager mode).

Model: --layers [8] Linear(--width [1024]) + ReLU, 10 classes, batch
--batch [256], cross-entropy, Adam (foreach). Fixed input batch, fixed seed.
It times itself: --warmup [20] steps, then the rest in blocks of --block [10]
steps with one synchronize per block; prints the median ms/step.

--torch-profiler (an option of every example, gt_common.py) runs everything,
model creation included, under torch.profiler with --profiler-activities
[cpu,cuda], so the profiler sees the kernels a CUPTI tracer started at cuInit
sees; --export PATH writes its Chrome trace (tests/gpu/crosscheck_torch.py).
With gaptrace injected it is the coexistence test (two CUPTI clients).

Expected diagnosis: launch_bound (eager mode, kernels of a few us) - but this
script's job is the overhead benchmark and the counts cross-check.
Runs ~4 s on an H200 with the default 300 steps (mostly Python start-up).
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], steps=300)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--block", type=int, default=10)
    args = p.parse_args()

    import torch
    import torch.nn.functional as F

    t_start = time.perf_counter()
    prof = gc.start_profiler(args)
    dev = gc.setup(args)
    model = gc.mlp(args.width, args.layers - 1, classes=10).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, args.width, generator=g).to(dev)
    y = torch.randint(0, 10, (args.batch,), generator=g).to(dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    timer = gc.BlockTimer(dev, args.block)
    t0 = time.perf_counter()
    n = 0
    for i in gc.steps_loop(args):
        if i == args.warmup:
            timer.start()
        loss = step()
        if i >= args.warmup:
            timer.step_done()
        n += 1
    final = float(loss.item()) if n else float("nan")
    gc.sync(dev)
    wall = time.perf_counter() - t0

    timing, extra = timer.summary(), {}
    gc.stop_profiler(args, prof, timing, extra)
    timing["process_s"] = round(time.perf_counter() - t_start, 3)
    gc.emit("eager_mlp", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 4), "layers": args.layers, "width": args.width,
                    "batch": args.batch},
            expect={"kernel_corr_matched": "all", "memcpy_corr_matched": "all", "loss": 0},
            expect_finding=["launch_bound", "tiny_kernel_storm"], timing=timing, **extra)


if __name__ == "__main__":
    main()
