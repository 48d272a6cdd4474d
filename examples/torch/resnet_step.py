# SPDX-License-Identifier: MIT
"""resnet_step: a torchvision ResNet-18 training step, the overhead bench's
"real" training workload (bench/realworld).

Model: torchvision.models.resnet18 (random weights, --classes [10] outputs),
batch --batch [32] of --size [64] x 64 RGB images, cross-entropy, SGD with
momentum. One fixed batch, generated on the GPU once: no DataLoader, no
host-to-device copy in the loop, so the step is what the GPU and the
launching thread do (~200 kernels, eager mode). It times itself like
eager_mlp: --warmup [20] steps, then the rest in blocks of --block [10] steps
with one synchronize per block; prints the median ms/step.

--torch-profiler (gt_common.py) runs everything under torch.profiler.

Result (deterministic): the model and batch shape, the number of steps. The
final loss is printed beside it ("loss"): cuDNN's backward kernels may add in
a different order from run to run, so its last digits may differ.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], steps=120)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--size", type=int, default=64, help="image height and width")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--block", type=int, default=10)
    args = p.parse_args()

    import torch
    import torch.nn.functional as F
    import torchvision

    t_start = time.perf_counter()
    prof = gc.start_profiler(args)
    dev = gc.setup(args)
    model = torchvision.models.resnet18(num_classes=args.classes).to(dev)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device=dev).manual_seed(args.seed)
    x = torch.randn(args.batch, 3, args.size, args.size, generator=g, device=dev)
    y = torch.randint(0, args.classes, (args.batch,), generator=g, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    timer = gc.BlockTimer(dev, args.block)
    t0 = time.perf_counter()
    n = 0
    loss = None
    for i in gc.steps_loop(args):
        if i == args.warmup:
            timer.start()
        loss = step()
        if i >= args.warmup:
            timer.step_done()
        n += 1
    final = float(loss.item()) if loss is not None else float("nan")
    gc.sync(dev)
    wall = time.perf_counter() - t0

    timing, extra = timer.summary(), {}
    gc.stop_profiler(args, prof, timing, extra)
    timing["process_s"] = round(time.perf_counter() - t_start, 3)
    gc.emit("resnet_step", args, n, wall, samples_per_step=args.batch,
            result={"model": "resnet18", "batch": args.batch, "size": args.size,
                    "classes": args.classes},
            expect_finding=None, timing=timing, loss=round(final, 4), **extra)


if __name__ == "__main__":
    main()
