# SPDX-License-Identifier: MIT
"""resnet_train: torchvision ResNet-18 training fed by forked DataLoader workers.

Why it is here: a real training loop whose DataLoader forks its worker
processes after CUDA (and an injected tracer, with its threads, CUPTI and
its buffers) is initialized, and forks them again every epoch; the main
process's pin-memory thread makes CUDA calls of its own meanwhile. A fork
child must go inert and never touch the parent's trace; the parent must keep
tracing without a stall or a lost record. The torture suite
(tests/gpu/torture.sh) runs it in every capture mode, repeated.

Model: torchvision.models.resnet18(num_classes=10), built on the GPU, fp32,
SGD with momentum. Data: --samples [640] synthetic 3x--size [64]x--size
images, each a function of its index only (torch.Generator seeded with the
index), labels index-derived, batch --batch [32], shuffled by a seeded
sampler, --workers [2] worker processes (multiprocessing context "fork"),
pin_memory when workers > 0; an epoch is samples/batch steps, and each epoch
forks new workers (not persistent).
Deterministic: cudnn.deterministic, cudnn.benchmark off,
torch.use_deterministic_algorithms(warn_only), CUBLAS_WORKSPACE_CONFIG set.
Result: the final and the mean loss (3 decimals), the workers, the epochs,
the steps.
Runs ~1-2 s after start-up for the default --steps 40 (start-up: import of
torch and torchvision, ~4 s).
"""
import os
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], steps=40)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--samples", type=int, default=640,
                   help="dataset size; each epoch (samples/batch steps) forks new workers")
    p.add_argument("--size", type=int, default=64, help="image side")
    p.add_argument("--lr", type=float, default=0.02)
    args = p.parse_args()
    # cuBLAS is deterministic only with a fixed workspace configuration; it is
    # read when the first handle is created.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

    import torch
    import torch.nn.functional as F
    import torchvision
    from torch.utils.data import DataLoader, Dataset

    size, seed = args.size, args.seed

    class SynthImages(Dataset):
        """Image idx: Gaussian noise plus a class-dependent pattern, drawn
        from a generator seeded with (seed, idx): the same in any process."""

        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, idx):
            label = (idx * 7 + 3) % 10
            g = torch.Generator().manual_seed(seed * 1000003 + idx)
            img = torch.randn(3, size, size, generator=g)
            img[label % 3] += 0.25 * (label - 4.5)
            return img, label

    dev = gc.setup(args)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=True)
    with torch.device(dev):
        model = torchvision.models.resnet18(num_classes=10)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    pin = args.workers > 0 and dev.type == "cuda"
    loader = DataLoader(SynthImages(args.samples), batch_size=args.batch, shuffle=True,
                        generator=torch.Generator().manual_seed(seed),
                        num_workers=args.workers, pin_memory=pin, drop_last=True,
                        multiprocessing_context="fork" if args.workers > 0 else None)
    if len(loader) == 0:
        gc.log("--samples must be at least --batch")
        raise SystemExit(2)

    n, epochs = 0, 0
    loss_sum = torch.zeros((), device=dev)
    last = torch.zeros((), device=dev)
    gc.sync(dev)
    t0 = time.perf_counter()
    it = None
    for _ in gc.steps_loop(args):
        batch = next(it, None) if it is not None else None
        if batch is None:  # a new epoch: the DataLoader forks its workers again
            it = iter(loader)
            epochs += 1
            batch = next(it)
        x, y = batch
        x = x.to(dev, non_blocking=pin)
        y = y.to(dev, non_blocking=pin)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        last = loss.detach()
        loss_sum += last
        n += 1
    gc.sync(dev)
    wall = time.perf_counter() - t0
    final = float(last) if n else float("nan")
    mean = float(loss_sum) / n if n else float("nan")
    del it
    gc.log("%d steps, %d epochs, %.2f s" % (n, epochs, wall))
    # Each step launches kernels: a lower bound the trace must reach.
    extra = {"expect_min": {"kernel": n}} if args.steps > 0 else {}
    gc.emit("resnet_train", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 3), "loss_mean": round(mean, 3),
                    "workers": args.workers, "epochs": epochs},
            expect_finding=None, **extra)


if __name__ == "__main__":
    main()
