# SPDX-License-Identifier: MIT
"""conv_train: a small conv net trained in a loop with no host sync inside
it (loss.item() every --log-every [100] steps). Issue 13, item 6: the host
runs ahead of the GPU, so the next kernel is usually queued before a gap
between kernels begins; such gaps are GPU-side (dependency / scheduling),
not the host's launches.

Model: 4 x (Conv2d 3x3 -> BatchNorm -> ReLU), channels --channels [128], on
--batch [512] images of 32x32, then a pooled Linear head; SGD with momentum.
The GPU work per step (~10 ms on an H200) outlasts the host's ~3 ms of
Python and launches, so the queue stays full. --host-bound runs the same
loop with --batch 64 --channels 64: the GPU work per step is then shorter
than the host's and the loop is truly launch-bound (the contrast case:
there launch_bound must be found).

Expected diagnosis: no launch_bound finding (the host is not the cause of
these gaps); which finding, if any, ranks first is not fixed here. With
--host-bound: launch_bound (or its tiny-kernel storm) first.
Runs ~4 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=4.0)
    p.add_argument("--channels", type=int, default=128)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--host-bound", action="store_true",
                   help="batch 64, 64 channels: less GPU work per step than host work")
    args = p.parse_args()
    if args.host_bound:
        args.batch, args.channels = 64, 64

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    dev = gc.setup(args)
    c = args.channels
    layers, cin = [], 3
    for _ in range(4):
        layers += [nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
        cin = c
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(c, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, 3, 32, 32, generator=g).to(dev)
    y = torch.randint(0, 10, (args.batch,), generator=g).to(dev)

    n, final = 0, float("nan")
    t0 = time.perf_counter()
    for i in gc.steps_loop(args):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        n += 1
        if args.log_every > 0 and (i + 1) % args.log_every == 0:
            final = loss.item()
    if n:
        final = loss.item()
    gc.sync(dev)
    wall = time.perf_counter() - t0
    gc.emit("conv_train", args, n, wall, samples_per_step=args.batch,
            result={"loss_finite": final == final},
            expect_finding=["launch_bound", "tiny_kernel_storm"] if args.host_bound else None,
            expect_absent=[] if args.host_bound else ["launch_bound"],
            timing={"ms_per_step": round(wall * 1e3 / n, 3) if n else 0})


if __name__ == "__main__":
    main()
