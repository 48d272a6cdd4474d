# SPDX-License-Identifier: MIT
"""periodic_ckpt: a training loop that checkpoints and logs every N steps.
The article's first shape, "periodic wave" (utilization bouncing between 0%
and 80% with a stable period), and its BERT fine-tuning story: checkpoint and
log writes every few hundred steps starving the GPU (fixed by checkpointing
less often / elsewhere).

Model: --layers [3] x Linear(--width [4096]) + ReLU (~50 M parameters,
200 MB fp32), batch --batch [1024], SGD momentum. Every --every [25] steps:
loss.item(), a log line on stderr, and torch.save(model.state_dict()) to a
file in --ckpt-dir (a fresh temporary directory by default, removed at the
end). The period is measured on the host (interval between checkpoint
starts) and printed as "expect_period_ms".

Expected diagnosis (first finding): periodic_wave with period ~=
expect_period_ms; the idle part of each period is host_busy (pickling and
file I/O) plus the state_dict DtoH copies. Fix: checkpoint less often,
asynchronously (copy to pinned memory, write from another thread/process).
Runs ~5 s (+ start-up) on an H200.
"""
import os
import shutil
import tempfile
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=5.0)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--every", type=int, default=25)
    p.add_argument("--ckpt-dir", default="")
    args = p.parse_args()

    import torch
    import torch.nn.functional as F

    dev = gc.setup(args)
    model = gc.mlp(args.width, args.layers).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, args.width, generator=g).to(dev)
    y = torch.randn(args.batch, args.width, generator=g).to(dev)
    ckpt_dir = args.ckpt_dir or tempfile.mkdtemp(prefix="gt-ckpt-")
    path = os.path.join(ckpt_dir, "model.pt")

    n, starts, stall_s, loss_v = 0, [], 0.0, float("nan")
    t0 = time.perf_counter()
    try:
        for i in gc.steps_loop(args):
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            n += 1
            if n % args.every == 0:
                loss_v = loss.item()
                ts = time.perf_counter()
                starts.append(ts)
                gc.log("step %d loss %.5f" % (n, loss_v))
                torch.save(model.state_dict(), path)
                stall_s += time.perf_counter() - ts
        gc.sync(dev)
    finally:
        if not args.ckpt_dir:
            shutil.rmtree(ckpt_dir, ignore_errors=True)
    wall = time.perf_counter() - t0
    period_ms = ((starts[-1] - starts[0]) * 1e3 / (len(starts) - 1)) if len(starts) > 1 else 0.0
    gc.emit("periodic_ckpt", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(loss_v, 4), "every": args.every},
            expect_finding=["periodic_stall"], expect_period_ms=round(period_ms, 1),
            timing={"checkpoints": len(starts),
                    "mean_stall_ms": round(stall_s * 1e3 / len(starts), 1) if starts else 0,
                    "idle_share_expected": round(stall_s / wall, 3) if wall else 0})


if __name__ == "__main__":
    main()
