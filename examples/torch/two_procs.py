# SPDX-License-Identifier: MIT
"""two_procs: two processes sharing one GPU. The article's third shape,
"stuck at a low level": an inference service pinned at 25% because a second
CUDA process on the same GPU time-shared the SMs with it.

The launcher (this script without --worker) starts two worker processes of
itself on the same device and waits for both. Each worker runs an
inference-shaped loop: --matmuls [8] bf16 matmuls of --dim [4096], then a
synchronize (one "request"), for --seconds. The launcher itself never touches
CUDA. By default both workers inherit the environment (under `gaptrace run`
both are traced); --neighbour-untraced strips CUDA_INJECTION64_PATH and
GAPTRACE_* from the second worker, so only NVML sees it (the realistic case
of an unknown neighbour). --solo runs one worker alone (the baseline
throughput).

Expected diagnosis (first finding, for the traced worker): other_process -
another context used the GPU during this process's idle/slow time (pid named
in the evidence); fix: one process per GPU, MPS, or MIG.
Runs ~4 s (+ start-up of two Python processes) on an H200.
"""
import os
import subprocess
import sys
import time

import gt_common as gc


def worker(args):
    import torch
    dev = gc.setup(args)
    g = torch.Generator(device="cpu").manual_seed(args.seed + args.worker_id)
    a = torch.randn(args.dim, args.dim, generator=g).to(dev, torch.bfloat16)
    b = torch.randn(args.dim, args.dim, generator=g).to(dev, torch.bfloat16)
    n = 0
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        c = a
        for _ in range(args.matmuls):
            c = torch.mm(c, b) * (1.0 / args.dim ** 0.5)
        gc.sync(dev)
        n += 1
    wall = time.perf_counter() - t0
    gc.emit("two_procs_worker", args, n, wall, samples_per_step=1,
            result={"worker": args.worker_id}, expect_finding=None,
            timing={"requests_per_s": round(n / wall, 1) if wall else 0})


def launcher(args):
    me = os.path.abspath(__file__)
    common = ["--seconds", str(args.seconds), "--steps", str(args.steps),
              "--device", args.device, "--seed", str(args.seed),
              "--matmuls", str(args.matmuls), "--dim", str(args.dim)]
    procs = []
    for wid in range(1 if args.solo else 2):
        env = dict(os.environ)
        if wid == 1 and args.neighbour_untraced:
            for k in list(env):
                if k == "CUDA_INJECTION64_PATH" or k.startswith("GAPTRACE_"):
                    del env[k]
        procs.append(subprocess.Popen(
            [sys.executable, me, "--worker", "--worker-id", str(wid)] + common,
            stdout=subprocess.PIPE, env=env, text=True))
    t0 = time.perf_counter()
    results, rc = gc.wait_json(procs)
    wall = time.perf_counter() - t0
    rates = [r["timing"].get("requests_per_s", 0) for r in results]
    gc.emit("two_procs", args, sum(r["timing"].get("steps", r["result"].get("steps", 0))
                                   for r in results), wall,
            result={"workers": len(procs), "workers_ok": len(results),
                    "neighbour_untraced": bool(args.neighbour_untraced)},
            expect_finding=None if args.solo else ["other_process"],
            timing={"requests_per_s": rates, "worker_pids": [pr.pid for pr in procs]})
    return rc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=4.0)
    p.add_argument("--worker", action="store_true", help=argparse_hidden())
    p.add_argument("--worker-id", type=int, default=0)
    p.add_argument("--matmuls", type=int, default=8)
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--neighbour-untraced", action="store_true")
    p.add_argument("--solo", action="store_true")
    args = p.parse_args()
    if args.worker:
        worker(args)
        return 0
    return launcher(args)


def argparse_hidden():
    import argparse
    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
