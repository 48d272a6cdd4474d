# SPDX-License-Identifier: MIT
"""ddp_overlap: data-parallel training on 2 GPUs, gradient all-reduce overlapped or not.

The article's first case: 4xA100 data-parallel training at 30-50 %
utilization because a ~300 ms all-reduce of all gradients ran after the
backward pass instead of during it. Two processes (ranks) on two GPUs train
the same MLP (--layers [8] x Linear(--width [4096]), bf16 autocast, fp32
gradients: --layers x width^2 x 4 bytes all-reduced per step, 512 MiB by
default) on batches of --batch [4096] rows, with torch.distributed / NCCL:

  --mode overlap   DistributedDataParallel with bucket_cap_mb [25]: each
                   bucket's all-reduce runs on NCCL's stream while the
                   backward continues; only the last bucket is exposed.
  --mode exposed   the same model without DDP: after loss.backward(), all
                   gradients are flattened into one buffer and all-reduced
                   with one dist.all_reduce (then averaged and copied back):
                   the GPU does nothing else while it runs.
  --straggler-rank R --delay-ms D
                   rank R sleeps D ms on the host before each step (a rank
                   that is late: rank-0-only logging, a slow data loader):
                   the other rank waits for it inside the first collective.

  --same-gpu       every rank on cuda:0, for a machine with one GPU: NCCL
                   refuses two ranks of one host on one GPU ("Duplicate GPU
                   detected"), so each rank gets its own NCCL_HOSTID and NCCL
                   takes them for two hosts linked by its socket transport on
                   the loopback (NCCL_SOCKET_IFNAME=lo, NCCL_IB_DISABLE=1).
                   Real collectives (and NCCL's profiler plugin events) on one
                   GPU; their speed is the socket's, not NVLink's. With one
                   rank NCCL runs no collective at all (it copies: nRanks == 1
                   bypasses the kernels and the profiler plugin).

Launch: this script without torchrun starts the two ranks itself (two
processes of itself, each inheriting the environment, so `gaptrace run`
traces both); under torchrun (RANK/LOCAL_RANK/WORLD_SIZE set) it is one rank.
--ranks N for more GPUs. NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1
and NVSHMEM_DISABLE_NVLS=1 are always set (NVLink multicast must stay off on
the device machines). --device cpu runs the same with gloo on the CPU (smoke
test without GPUs).

Expected diagnosis (`gaptrace report`, data-parallel ranks alike):
  exposed:  comm_not_overlapped first, its exposed share (exposed_share
            metric: communication time with no compute running / all
            communication time) close to 1;
  overlap:  no comm_not_overlapped first (most of the all-reduce hidden under
            the backward; the rest is the breakdown row comm_exposed);
  straggler: a straggler finding on the waiting GPU naming rank R (its pid),
            rank R's own GPU idle while its host sleeps (host_busy).
Runs ~10 s (--steps 60 after 5 warm-up steps) on 2 H200s.
"""
import os
import socket
import subprocess
import sys
import time

# NVLink multicast (NVLS) must stay off on the device machines: set before
# torch (and NCCL) are imported, inherited by the ranks.
for _k, _v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
               ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_k] = _v

# cuda:r is then the r-th GPU in PCI order, which is how gaptrace numbers the
# ranks it finds in the traces (the NCCL rank is not recorded): rank r of
# this program is gaptrace's rank r.
os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")

import gt_common as gc  # noqa: E402


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(args):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if args.device.startswith("cuda"):
        args.device = "cuda:%d" % (0 if args.same_gpu else local)
    dev = gc.setup(args)
    if dev.type == "cuda":
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    else:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(args.seed)  # same initial weights on every rank
    model = gc.mlp(args.width, args.layers, classes=args.classes).to(dev)
    if args.mode == "overlap":
        net = DDP(model, device_ids=[dev.index] if dev.type == "cuda" else None,
                  bucket_cap_mb=args.bucket_mb, gradient_as_bucket_view=True)
    else:
        net = model
        for p in model.parameters():  # what DDP does at construction
            dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    params = [p for p in model.parameters() if p.requires_grad]
    g = torch.Generator(device="cpu").manual_seed(args.seed + 1000 * rank)
    x = torch.randn(args.batch, args.width, generator=g).to(dev)
    y = torch.randint(0, args.classes, (args.batch,), generator=g).to(dev)
    amp = torch.autocast(device_type=dev.type, dtype=torch.bfloat16,
                         enabled=dev.type == "cuda")
    late = args.straggler_rank == rank and args.delay_ms > 0

    def step():
        if late:
            time.sleep(args.delay_ms / 1e3)
        opt.zero_grad(set_to_none=args.mode == "exposed")
        with amp:
            loss = F.cross_entropy(net(x), y)
        loss.backward()
        if args.mode == "exposed":
            # one all-reduce of every gradient, after the backward
            grads = [p.grad for p in params]
            flat = torch.cat([t.reshape(-1) for t in grads])
            dist.all_reduce(flat)
            flat.div_(world)
            off = 0
            for t in grads:
                n = t.numel()
                t.copy_(flat[off:off + n].view_as(t))
                off += n
        opt.step()
        return loss

    for _ in range(args.warmup):
        step()
    gc.sync(dev)
    dist.barrier()
    timer = gc.BlockTimer(dev, block=10)
    timer.start()
    t0 = time.perf_counter()
    n = 0
    loss = None
    for _ in gc.steps_loop(args):
        loss = step()
        timer.step_done()
        n += 1
    gc.sync(dev)
    wall = time.perf_counter() - t0
    final = float(loss.item()) if loss is not None else None
    dist.barrier()
    grad_bytes = sum(p.numel() * p.element_size() for p in params)
    dist.destroy_process_group()
    gc.emit("ddp_overlap_rank", args, n, wall, samples_per_step=args.batch,
            result={"rank": rank, "world": world, "mode": args.mode,
                    "grad_bytes": grad_bytes, "late": late},
            expect_finding=None,
            timing=dict(timer.summary(), pid=os.getpid(), final_loss=final,
                        device=str(dev)))


def launcher(args):
    me = os.path.abspath(__file__)
    port = free_port()
    common = ["--worker", "--mode", args.mode, "--steps", str(args.steps),
              "--seconds", str(args.seconds), "--warmup", str(args.warmup),
              "--device", args.device.split(":")[0], "--seed", str(args.seed),
              "--width", str(args.width), "--layers", str(args.layers),
              "--classes", str(args.classes), "--batch", str(args.batch),
              "--bucket-mb", str(args.bucket_mb),
              "--straggler-rank", str(args.straggler_rank), "--delay-ms", str(args.delay_ms)]
    if args.same_gpu:
        common.append("--same-gpu")
    procs = []
    for r in range(args.ranks):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(args.ranks),
                   LOCAL_WORLD_SIZE=str(args.ranks), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        if args.same_gpu:
            env.update(NCCL_HOSTID="gaptrace-same-gpu-rank-%d" % r, NCCL_SOCKET_IFNAME="lo",
                       NCCL_IB_DISABLE="1")
        procs.append(subprocess.Popen([sys.executable, me] + common, stdout=subprocess.PIPE,
                                      env=env, text=True))
    t0 = time.perf_counter()
    ranks, rc = gc.wait_json(procs)
    wall = time.perf_counter() - t0
    ranks.sort(key=lambda o: o["result"]["rank"])
    straggler = args.straggler_rank if 0 <= args.straggler_rank < args.ranks and \
        args.delay_ms > 0 else None
    if straggler is not None:
        expect = ["straggler", "host_busy", "sync_turnaround"]
    elif args.mode == "exposed":
        expect = ["comm_not_overlapped"]
    else:
        expect = None  # checked by tests/gpu/multigpu.sh: not comm_not_overlapped
    gc.emit("ddp_overlap", args, sum(o["result"].get("steps", o["timing"].get("steps", 0))
                                     for o in ranks), wall,
            result={"mode": args.mode, "ranks": args.ranks, "ranks_ok": len(ranks),
                    "straggler_rank": straggler, "delay_ms": args.delay_ms,
                    "grad_bytes": ranks[0]["result"]["grad_bytes"] if ranks else None},
            expect_finding=expect,
            expect_not_first=["comm_not_overlapped"] if args.mode == "overlap" and
            straggler is None else [],
            timing={"rank_pids": [o["timing"].get("pid") for o in ranks],
                    "ms_per_step": [o["timing"].get("ms_per_step_median") for o in ranks],
                    "final_loss": [o["timing"].get("final_loss") for o in ranks],
                    "launcher_pid": os.getpid()})
    return rc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], steps=60)
    p.add_argument("--mode", choices=("overlap", "exposed"), default="overlap")
    p.add_argument("--ranks", type=int, default=2, help="processes (GPUs) to start")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--classes", type=int, default=1024)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--straggler-rank", type=int, default=-1)
    p.add_argument("--delay-ms", type=float, default=0.0)
    p.add_argument("--same-gpu", action="store_true",
                   help="every rank on cuda:0 (one-GPU machine; see the docstring)")
    p.add_argument("--worker", action="store_true", help=hidden())
    args = p.parse_args()
    if args.worker or "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        worker(args)
        return 0
    return launcher(args)


def hidden():
    import argparse
    return argparse.SUPPRESS


if __name__ == "__main__":
    sys.exit(main())
