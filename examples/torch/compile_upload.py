# SPDX-License-Identifier: MIT
"""compile_upload: a torch.compile'd training step fed from pageable host memory.

What it is: the training loop of a user who compiled the model
(torch.compile, mode default: Inductor's Triton kernels) but feeds it the
way a hand-written data path often does: each step's batch sits in one
reused pageable host buffer (--mb [64] MB float32, the "reader" writes a
step number into it) and goes to the GPU with a plain .cuda() (SITE-UPLOAD);
the compiled MLP (--width [1024]) trains on a slice of it, with SGD.

The cause, by construction: the pageable host-to-device copy of 64 MB per
step runs at a fraction of the link (staged through the driver's bounce
buffer) and blocks the host, while the compiled step itself is ~1 ms of GPU
work. Expected first finding: pageable_copies (or transfer_bound), and with
host stacks the .cuda() line. What it tests besides: the compilation
(seconds of host work on a warm cache, tens of seconds on a cold one, GPU
idle) is one-time start-up and warm-up, not the steady state's cause: a
report that names host_busy here is blaming the compiler for the copies.
Result: the steps and the final loss (4 decimals).
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=6.0)
    p.add_argument("--mb", type=float, default=64.0)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    args = p.parse_args()

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    dev = gc.setup(args)
    w = args.width
    n = max(w * args.batch, int(args.mb * (1 << 20) / 4) // w * w)
    with torch.device(dev):
        model = nn.Sequential(nn.Linear(w, w), nn.GELU(), nn.LayerNorm(w),
                              nn.Linear(w, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    buf = torch.zeros(n, dtype=torch.float32)  # the reader's buffer: pageable
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    buf[: w * args.batch] = torch.randn(w * args.batch, generator=g)
    y = torch.randint(0, 10, (args.batch,), generator=g).to(dev)

    @torch.compile
    def loss_fn(inp, target):
        return F.cross_entropy(model(inp), target)

    steps, loss = 0, None
    t0 = time.perf_counter()
    for i in gc.steps_loop(args):
        buf[-1] = float(i)  # the reader writes the step into the buffer
        x = buf.cuda()  # the upload: SITE-UPLOAD
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(x[: w * args.batch].view(args.batch, w), y)
        loss.backward()
        opt.step()
        steps += 1
        if steps == 1:
            gc.sync(dev)
            gc.log("first step (compile or cache load) done after %.2f s"
                   % (time.perf_counter() - t0))
    final = loss.item() if loss is not None else float("nan")
    gc.sync(dev)
    wall = time.perf_counter() - t0
    gc.emit("compile_upload", args, steps, wall, samples_per_step=args.batch,
            result={"loss": round(final, 4)} if args.steps else {},
            expect_finding=["pageable_copies", "transfer_bound"],
            expect_site={"finding": ["pageable_copies", "transfer_bound"],
                         "site": gc.marked_site("SITE-UPLOAD", "main")})


if __name__ == "__main__":
    main()
