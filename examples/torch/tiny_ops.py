# SPDX-License-Identifier: MIT
"""tiny_ops: a small model made of many tiny ops. The article's second
shape, "low and flat": the model is small, every kernel runs for a few
microseconds, and the GPU spends most of its time waiting for the CPU to
launch the next one (Python + PyTorch dispatch + launch cost > kernel time).

Model: --blocks [24] residual blocks of Linear(--width [64]) -> LayerNorm ->
GELU on a batch of --batch [256]; training step with SGD. Hundreds of kernels
per step, each a few us long.

Expected diagnosis (first finding): launch_bound / tiny-kernel storm - many
thousands of kernels with mean duration << 10 us, host thread inside launch
calls; fix: CUDA graphs (torch.cuda.graphs / torch.compile mode
"reduce-overhead") or fusion, a bigger batch.
Runs ~4 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=4.0)
    p.add_argument("--blocks", type=int, default=24)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--batch", type=int, default=256)
    args = p.parse_args()

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, w):
            super().__init__()
            self.lin = nn.Linear(w, w)
            self.norm = nn.LayerNorm(w)

        def forward(self, x):
            return x + F.gelu(self.norm(self.lin(x)))

    dev = gc.setup(args)
    model = nn.Sequential(*[Block(args.width) for _ in range(args.blocks)],
                          nn.LayerNorm(args.width), nn.Linear(args.width, 1)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, args.width, generator=g).to(dev)
    y = torch.randn(args.batch, 1, generator=g).to(dev)

    n = 0
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        n += 1
    final = loss.item() if n else float("nan")
    gc.sync(dev)
    wall = time.perf_counter() - t0
    gc.emit("tiny_ops", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 4)},
            expect_finding=["launch_bound", "tiny_kernel_storm"],
            timing={"ms_per_step": round(wall * 1e3 / n, 3) if n else 0})


if __name__ == "__main__":
    main()
