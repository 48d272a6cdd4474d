# SPDX-License-Identifier: MIT
"""train_loop: an NVTX-annotated training loop, and the same loop with a
known regression (issue 16: routine inspection).

Each step is an NVTX range "train_step" (torch.cuda.nvtx) holding a
"forward" range: an MLP of --layers [4] Linear(--width [4096]) + ReLU, batch
--batch [2048], cross-entropy, SGD. The GPU queue stays full between steps:
the host never waits for the GPU inside the loop.

--regress adds what a colleague's "harmless" logging change does: every step
reads the loss with loss.item() (a sync) and computes a metric in Python on
the host (--metric-ms [3] of work) before the next step is launched. Run it
twice, without and with --regress, and `gaptrace diff BASE NEW` must say NEW
is slower per step, with sync_turnaround grown first; with
`gaptrace run --stacks`, the finding's call site is the loss.item() line.
The step table (gaptrace report) shows --steps train_step ranges.
Runs ~4 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def python_metric(values, ms):
    """Host-side metric code: ms of pure Python work."""
    t_end = time.perf_counter() + ms / 1e3
    acc = 0.0
    while time.perf_counter() < t_end:
        for v in values:
            acc += v * 0.5
    return acc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=4.0)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--regress", action="store_true", help="loss.item() + a Python metric per step")
    p.add_argument("--metric-ms", type=float, default=3.0)
    args = p.parse_args()

    import torch
    import torch.nn.functional as F

    dev = gc.setup(args)
    model = gc.mlp(args.width, args.layers, classes=10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, args.width, generator=g).to(dev)
    y = torch.randint(0, 10, (args.batch,), generator=g).to(dev)
    nvtx = torch.cuda.nvtx

    n, loss_v, metric = 0, float("nan"), 0.0
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        nvtx.range_push("train_step")
        opt.zero_grad(set_to_none=True)
        nvtx.range_push("forward")
        out = model(x)
        nvtx.range_pop()
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        if args.regress:
            loss_v = loss.item()  # the regression: a sync every step: SITE-REGRESS
            metric = python_metric([loss_v] * 64, args.metric_ms)
        nvtx.range_pop()
        n += 1
    final = float(loss.item()) if n else float("nan")
    gc.sync(dev)
    wall = time.perf_counter() - t0
    site = gc.marked_site("SITE-REGRESS", "main")
    gc.emit("train_loop", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 3), "regress": args.regress, "metric": round(metric, 1)},
            expect_finding=["sync_turnaround", "host_busy"] if args.regress else None,
            expect_site={"finding": "sync_turnaround", "site": site} if args.regress else None)


if __name__ == "__main__":
    main()
