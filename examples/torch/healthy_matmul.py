# SPDX-License-Identifier: MIT
"""healthy_matmul: the control case for PyTorch. A bf16 MLP of large matmuls
(--layers [4] x Linear(--width [8192]), batch --batch [8192]) trained with
fused AdamW, no host sync inside the loop (loss.item() once at the end): the
host stays far ahead of the GPU, every kernel fills the chip. Nothing to fix.

Expected diagnosis: healthy, no finding (any finding here is a false alarm).
The only idle time is start-up before the first kernel (CUDA context, cuBLAS
initialization).
Runs ~5 s (+ start-up) on an H200.
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
    import torch.nn.functional as F

    prof = gc.start_profiler(args)
    dev = gc.setup(args)
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32  # cpu: smoke test
    model = gc.mlp(args.width, args.layers).to(dev, dtype)
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=dev.type == "cuda")
    except (TypeError, RuntimeError):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, args.width, generator=g).to(dev, dtype)
    y = torch.randn(args.batch, args.width, generator=g).to(dev, dtype)

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
    tflop = 6.0 * args.batch * args.layers * args.width * args.width * n / 1e12
    timing, extra = {"tflops": round(tflop / wall, 1) if wall else 0}, {}
    gc.stop_profiler(args, prof, timing, extra)
    gc.emit("healthy_matmul", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 3)}, expect_finding=[], timing=timing, **extra)


if __name__ == "__main__":
    main()
