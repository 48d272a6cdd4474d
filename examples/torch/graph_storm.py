# SPDX-License-Identifier: MIT
"""graph_storm: a CUDA graph of --nodes [50] tiny elementwise kernels replayed
--replays [2000] times (issue 13, item 8). Each kernel runs a few
microseconds, so the graph's per-node scheduling overhead is as large as the
work. The launches already come from a graph: the advice must be to put
fewer, bigger nodes in it, never "capture the step in a CUDA graph".

Expected diagnosis (first finding): tiny_kernel_storm, titled as inside CUDA
graphs, with no advice to capture a graph.
Runs ~1 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], steps=2000)
    p.add_argument("--nodes", type=int, default=50)
    p.add_argument("--numel", type=int, default=4096)
    args = p.parse_args()
    args.replays = args.steps

    import torch

    dev = gc.setup(args)
    x = torch.zeros(args.numel, device=dev)
    if dev.type != "cuda":  # cpu smoke test: the same arithmetic, no graph
        for _ in range(args.replays):
            for _ in range(args.nodes):
                x.add_(1.0)
        gc.emit("graph_storm", args, args.replays, 0.0,
                result={"value_ok": float(x[0].item()) == float(args.nodes * args.replays)},
                expect_finding=["tiny_kernel_storm"])
        return
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside the capture
        for _ in range(3):
            x.add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(args.nodes):
            x.add_(1.0)
    x.zero_()
    torch.cuda.synchronize()

    t0 = time.perf_counter()
    for _ in range(args.replays):
        graph.replay()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    gc.emit("graph_storm", args, args.replays, wall,
            result={"value_ok": float(x[0].item()) == float(args.nodes * args.replays)},
            expect_finding=["tiny_kernel_storm"],
            expect_first={"title_has": "inside CUDA graphs",
                          "fix_lacks": "capture the repeated step"},
            timing={"us_per_replay": round(wall * 1e6 / args.replays, 2)})


if __name__ == "__main__":
    main()
