# SPDX-License-Identifier: MIT
"""slow_loader: a training loop starved by a CPU-bound Dataset. The article's
decision-list step 3 ("kernel time is low: is data loading blocking?") and
its first shape's second cause (DataLoader prefetch not keeping up).

Dataset: every __getitem__ "decodes and augments" a 3x64x64 image on the CPU
(numpy, --aug [12] passes, ~0.5 ms per sample, deterministic per index).
Model: a small CNN, batch --batch [64], SGD. With --workers 0 [default] the
main thread builds every batch while the GPU waits; --workers N moves that
to N DataLoader worker processes (the fix; also a fork test for the
injection library: workers are forked after CUDA is initialized).

Expected diagnosis with --workers 0 (first finding): host_busy (data
loading): the GPU idles between steps while the thread that launches is
outside CUDA; fix: DataLoader workers, pinned memory, prefetching.
With host stacks (gaptrace run --stacks) that finding's first call site is
the line where the GPU got work again, the first CUDA call after next(it)
(SITE-RESUME below): the host time before it is the loader's.
Runs ~4 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=4.0)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--aug", type=int, default=12)
    p.add_argument("--pin-memory", action="store_true")
    args = p.parse_args()

    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, Dataset

    class SlowImages(Dataset):
        def __init__(self, n, aug):
            self.n, self.aug = n, aug

        def __len__(self):
            return self.n

        def __getitem__(self, idx):
            rng = np.random.default_rng(idx)
            img = rng.standard_normal((3, 64, 64), dtype=np.float32)
            for k in range(self.aug):  # "augmentations"
                img = np.tanh(img * 1.01 + 0.01 * k)
                if k % 3 == 0:
                    img = img[:, :, ::-1].copy()
            return torch.from_numpy(img), idx % 10

    dev = gc.setup(args)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    loader = DataLoader(SlowImages(1 << 16, args.aug), batch_size=args.batch, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed),
                        num_workers=args.workers, pin_memory=args.pin_memory,
                        drop_last=True)

    n, wait_s, final = 0, 0.0, float("nan")
    steps = gc.steps_loop(args)
    t0 = time.perf_counter()
    it = iter(loader)
    for _ in steps:
        tw = time.perf_counter()
        try:
            x, y = next(it)
        except StopIteration:  # next epoch
            it = iter(loader)
            x, y = next(it)
        wait_s += time.perf_counter() - tw
        x = x.to(dev, non_blocking=args.pin_memory)  # first CUDA call after loading: SITE-RESUME
        y = y.to(dev, non_blocking=args.pin_memory)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        n += 1
    if n:
        final = loss.item()
    gc.sync(dev)
    wall = time.perf_counter() - t0
    del it
    gc.emit("slow_loader", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 4), "workers": args.workers},
            expect_finding=["slow_data_loader", "host_busy"] if args.workers == 0 else None,
            expect_site={"finding": ["slow_data_loader", "host_busy"],
                         "site": gc.marked_site("SITE-RESUME", "main")}
            if args.workers == 0 else None,
            timing={"loader_wait_share": round(wait_s / wall, 3) if wall else 0})


if __name__ == "__main__":
    main()
