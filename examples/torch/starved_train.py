# SPDX-License-Identifier: MIT
"""starved_train: torchvision ResNet-18 training starved by its DataLoader from the first step.

What it is: the training loop of a vision job whose input pipeline is too
slow: torchvision.models.resnet18(num_classes=10) on 3x--size [96] images,
batch --batch [32], SGD; the Dataset "decodes and augments" each sample on
the CPU (numpy, --aug [30] passes, a few ms a sample, deterministic per
index) and --workers [1] DataLoader worker process (forked) builds the
batches. One worker makes a batch in --batch x (a sample's time), far longer
than the GPU's forward + backward, so every step waits for data, from the
first one to the last: there is no warm-up after which the GPU gets busy.
Launching one eager step (~360 kernels) keeps the main thread ~17 ms on the
H200's host: with --aug 10 it waited for data only 40 % of the loop and
launch_bound was as large (tests/gpu/results/capture_parity.run13.txt); at
--aug 30 the wait is most of every step.

The cause, by construction: the GPU is idle while the main thread waits in
next(loader) for the worker (outside CUDA). Expected first finding:
slow_data_loader (or host_busy), explaining most of the run; not start-up
(issue 23: the start-up rule must not set aside a run that is starved from
its first step). timing.loader_wait_share is the share of the loop the main
thread spent waiting for batches (measured by the program itself).
Result: the steps and the final loss (3 decimals, deterministic for --steps).
"""
import os
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=10.0)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--size", type=int, default=96)
    p.add_argument("--aug", type=int, default=30)
    args = p.parse_args()
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

    import torch
    import torch.nn.functional as F
    import torchvision
    from torch.utils.data import DataLoader, Dataset

    size, aug = args.size, args.aug

    class DecodedImages(Dataset):
        def __len__(self):
            return 1 << 20

        def __getitem__(self, idx):  # "decode + augment"
            return torch.from_numpy(gc.augmented_image(idx, size, aug, flips=True)), idx % 10

    dev = gc.setup(args)
    with torch.device(dev):
        model = torchvision.models.resnet18(num_classes=10)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = DataLoader(DecodedImages(), batch_size=args.batch, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed),
                        num_workers=args.workers, drop_last=True,
                        multiprocessing_context="fork" if args.workers > 0 else None)
    it = iter(loader)
    n, wait_s, last = 0, 0.0, None
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        tw = time.perf_counter()
        x, y = next(it)
        wait_s += time.perf_counter() - tw
        x, y = x.to(dev), y.to(dev)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        last = loss.detach()
        n += 1
        if n == 1:
            gc.log("first step done")
    final = float(last) if last is not None else float("nan")
    gc.sync(dev)
    wall = time.perf_counter() - t0
    del it
    gc.emit("starved_train", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 3)} if args.steps else {},
            expect_finding=["slow_data_loader", "host_busy"],
            timing={"loader_wait_share": round(wait_s / wall, 3) if wall else 0})


if __name__ == "__main__":
    main()
