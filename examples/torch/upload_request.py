# SPDX-License-Identifier: MIT
"""upload_request: an inference service that uploads each request's input from pageable memory.

What it is: the loop of an inference server whose requests arrive as host
arrays: each request is a --mb [50] MB float32 tensor in the server's
receive buffer (pageable memory, reused; the request writes its header
into it), sent to the GPU with a plain .cuda() (SITE-UPLOAD), then a small model
(--width [1024], 2 Linear+ReLU over a slice of it) runs and the reply stays
on the GPU until every --reply-every [16] requests, when the host reads the
replies back (one small D2H copy).

The cause, by construction: a pageable host-to-device copy of 50 MB runs
at a fraction of the link (the driver stages it through a bounce buffer)
and blocks the host; the GPU does little else. Expected first finding:
pageable_copies (or transfer_bound); with host stacks the call site is the
.cuda() line (SITE-UPLOAD), issue 23: "a 50 MB pageable .cuda() per request
got 'none of this idle time has a host stack'".
Result: the requests served (with --steps) and a checksum of the last reply.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=6.0)
    p.add_argument("--mb", type=float, default=50.0)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--reply-every", type=int, default=16)
    args = p.parse_args()

    import torch

    dev = gc.setup(args)
    w = args.width
    n = max(w, int(args.mb * (1 << 20) / 4) // w * w)
    with torch.device(dev):
        model = gc.mlp(w, 2)
    model.eval()
    req = torch.zeros(n, dtype=torch.float32)  # the receive buffer: pageable
    replies, last = [], None
    served = 0
    t0 = time.perf_counter()
    with torch.no_grad():
        for i in gc.steps_loop(args):
            req[:w].fill_(float(i % 7) * 0.125)  # the request's header
            x = req.cuda()  # the upload: SITE-UPLOAD
            out = model(x[: 64 * w].view(64, w))
            replies.append(out.sum())
            served += 1
            if len(replies) >= args.reply_every:
                last = torch.stack(replies).sum().item()
                replies.clear()
            if served == 1:
                gc.log("first request served")
    if replies:
        last = torch.stack(replies).sum().item()
    gc.sync(dev)
    wall = time.perf_counter() - t0
    gc.emit("upload_request", args, served, wall,
            result={"checksum": round(last, 2)} if args.steps and last is not None else {},
            expect_finding=["pageable_copies", "transfer_bound"],
            expect_site={"finding": ["pageable_copies", "transfer_bound"],
                         "site": gc.marked_site("SITE-UPLOAD", "main")})


if __name__ == "__main__":
    main()
