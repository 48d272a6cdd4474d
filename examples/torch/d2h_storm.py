# SPDX-License-Identifier: MIT
"""d2h_storm: per-step .cpu()/.numpy() copies of intermediate results. The
article's section 3.3 story: a Transformer inference job at 25% utilization
whose top-20 kernel list was all memcpy DtoH, because the Python side turned
GPU tensors into numpy arrays every step to print and save intermediate
results.

Model: nn.TransformerEncoder, --layers [6] layers of d_model --dim [512]
(8 heads, ffn 4x), batch --batch [32] x --seq [256] tokens, inference
(no_grad). A forward hook on every layer copies its output to the host
(.cpu().numpy(), 16 MiB each by default, into pageable memory) and keeps it
"for debugging"; the final output is copied too. --no-debug removes the hooks
(the fix), for comparison.

Exact counts (with --steps N): (layers + 1) * N DtoH copies into pageable
memory in the loop ("memcpy:DtoH:pageable" is at least that: start-up adds a
few).

Expected diagnosis (first finding): d2h_storm (transfer, DtoH into pageable
memory, many copies each followed by a sync); fix: drop the per-step
.cpu()/.numpy(), copy asynchronously into pinned buffers, or do it every N
steps.
Runs ~4 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=4.0)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--no-debug", action="store_true", help="no per-layer host copies (the fix)")
    args = p.parse_args()

    import torch
    import torch.nn as nn

    prof = gc.start_profiler(args)
    dev = gc.setup(args)
    layer = nn.TransformerEncoderLayer(d_model=args.dim, nhead=8, dim_feedforward=4 * args.dim,
                                       batch_first=True, dropout=0.0)
    model = nn.TransformerEncoder(layer, num_layers=args.layers,
                                  enable_nested_tensor=False).to(dev).eval()
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(args.batch, args.seq, args.dim, generator=g).to(dev)

    debug = []      # what a developer keeps around "to look at later"
    copies = [0]

    def keep_for_debug(_mod, _inp, out):
        a = out.detach().cpu().numpy()  # D2H into pageable memory + sync: SITE-D2H
        copies[0] += 1
        debug.append(float(a[0, 0, :8].sum()))
        if len(debug) > 64:
            del debug[:32]

    if not args.no_debug:
        for m in model.layers:
            m.register_forward_hook(keep_for_debug)

    n, checksum = 0, 0.0
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in gc.steps_loop(args):
            out = model(x)
            res = out.cpu().numpy()  # the step's result, copied to the host
            copies[0] += 1
            checksum = float(res[:, 0, :4].sum())
            n += 1
    gc.sync(dev)
    wall = time.perf_counter() - t0
    timing, extra = {"ms_per_step": round(wall * 1e3 / n, 3) if n else 0}, {}
    gc.stop_profiler(args, prof, timing, extra)
    expect_min = {"memcpy:DtoH:pageable": copies[0]} if args.steps > 0 else None
    gc.emit("d2h_storm", args, n, wall, samples_per_step=args.batch,
            result={"checksum": round(checksum, 3), "debug_copies": copies[0]},
            expect={"kernel_corr_matched": "all", "memcpy_corr_matched": "all", "loss": 0},
            expect_min=expect_min, expect_finding=["d2h_storm", "transfer_bound"],
            expect_site={"finding": "d2h_storm",
                         "site": gc.marked_site("SITE-D2H", "main.<locals>.keep_for_debug")},
            timing=timing, **extra)


if __name__ == "__main__":
    main()
