# SPDX-License-Identifier: MIT
"""lightning_fit: a Lightning Trainer.fit whose Dataset does its CPU work in __getitem__.

What it is: the way many Lightning projects start: a LightningModule (a
small CNN on 3x--size [64] images, 10 classes, SGD), a Dataset that
"decodes and augments" each sample on the CPU (numpy, --aug [20] passes),
a DataLoader with the default num_workers=0, and Trainer(accelerator="gpu",
devices=1, max_steps=--steps or max_time, no logger, no checkpoints, no
progress bar). Lightning runs the loop; the program only defines it.

The cause, by construction: with num_workers=0 the main process builds
every batch (--batch [64] samples) between steps, so the GPU waits for it
from the first step on. Expected first finding: slow_data_loader (or
host_busy); not start-up (issue 23: a Lightning Trainer.fit with CPU work in
the Dataset had 896 ms of its 995 ms window set aside as start-up, then
pageable_copies 86 % of the rest).
Needs the lightning (or pytorch_lightning) package: exits 3 without it.
Result: the steps trained (with --steps).
"""
import os
import sys
import time

import gt_common as gc


def lightning():
    """The lightning package (lightning or pytorch_lightning), or exit 3."""
    try:
        import lightning.pytorch as pl
        return pl
    except ImportError:
        pass
    try:
        import pytorch_lightning as pl
        return pl
    except ImportError:
        print("lightning_fit: neither lightning nor pytorch_lightning is installed",
              file=sys.stderr)
        sys.exit(3)


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=8.0)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--aug", type=int, default=20)
    args = p.parse_args()
    pl = lightning()
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, Dataset

    size, aug = args.size, args.aug

    class Augmented(Dataset):
        def __len__(self):
            return 1 << 20

        def __getitem__(self, idx):  # "decode + augment"
            return torch.from_numpy(gc.augmented_image(idx, size, aug)), idx % 10

    class Net(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                nn.Flatten(), nn.Linear(128, 10))

        def training_step(self, batch, _):
            x, y = batch
            return F.cross_entropy(self.body(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)

    class Count(pl.Callback):
        def __init__(self):
            self.n = 0

        def on_train_batch_end(self, *a, **k):
            self.n += 1
            if self.n == 1:
                gc.log("first step done")

    gc.setup(args)
    pl.seed_everything(args.seed, workers=True)
    count = Count()
    limit = {"max_steps": args.steps} if args.steps else \
        {"max_time": {"seconds": max(1, int(args.seconds))}, "max_steps": -1}
    trainer = pl.Trainer(accelerator="gpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[count], **limit)
    loader = DataLoader(Augmented(), batch_size=args.batch, shuffle=False, num_workers=0)
    os.environ.setdefault("PL_DISABLE_FORK", "1")
    t0 = time.perf_counter()
    trainer.fit(Net(), loader)
    wall = time.perf_counter() - t0
    gc.emit("lightning_fit", args, count.n, wall, samples_per_step=args.batch,
            expect_finding=["slow_data_loader", "host_busy"])


if __name__ == "__main__":
    main()
