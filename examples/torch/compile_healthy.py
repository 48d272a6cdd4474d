# SPDX-License-Identifier: MIT
"""compile_healthy: the control case for torch.compile. A compiled bf16 MLP of large matmuls.

What it is: --layers [4] x Linear(--width [8192]) with GELU, batch --batch
[8192], the forward and backward compiled by torch.compile (mode default),
fused AdamW, no host sync in the loop (loss.item() once at the end): the host
stays ahead of the GPU and every GEMM fills the chip.

Expected diagnosis: healthy, no finding. The only idle time is start-up and
the compiler's warm-up (Inductor compiles the forward at the first call and
the backward at the first backward; Triton loads its kernels), one-time
costs that a report must set aside, not call host_busy.
Result: the steps and the final loss (3 decimals).
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=5.0)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=8192)
    p.add_argument("--batch", type=int, default=8192)
    args = p.parse_args()

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    dev = gc.setup(args)
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.width, args.width), nn.GELU()]
    model = nn.Sequential(*layers).to(dev, dtype)
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=dev.type == "cuda")
    except (TypeError, RuntimeError):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, args.width, generator=g).to(dev, dtype)
    y = torch.randn(args.batch, args.width, generator=g).to(dev, dtype)

    @torch.compile
    def loss_fn(inp, target):
        return F.mse_loss(model(inp), target)

    n, loss = 0, None
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()
        n += 1
    final = loss.item() if loss is not None else float("nan")
    gc.sync(dev)
    wall = time.perf_counter() - t0
    gc.emit("compile_healthy", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 3)} if args.steps else {}, expect_finding=[])


if __name__ == "__main__":
    main()
