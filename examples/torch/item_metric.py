# SPDX-License-Identifier: MIT
"""item_metric: per-step loss.item() plus a Python-side metric. The article's
section 3.2 story: a detection model at 40% utilization because every
iteration called loss.item() and then computed an eval metric in Python,
leaving the GPU idle for the whole CPU part (fixed by computing the metric
every 100 steps).

Per step: a training step of an MLP (--layers [3] x Linear(--width [2048]),
batch --batch [1024], 100 classes), then loss.item() (a sync), then
predictions .tolist() and a macro-F1 computed in pure Python --passes [30]
times (~10 ms of CPU). --metric-every N computes it only every N steps (the
fix; default 1).

Expected diagnosis (first finding): sync_turnaround - the GPU idles right
after the host returned from a synchronize (.item()) while the thread is in
Python (host_busy is the neighbouring class). Fix named by the finding: drop
the per-step .item()/metric or move it off the critical path.
With host stacks (gaptrace run --stacks) the finding's first call site is
the .tolist() line (SITE-TOLIST): both it and loss.item() synchronize, but
the argmax kernel runs after loss.item() returns, so the GPU's idle time
starts where .tolist() returns; loss.item()'s line comes after it.
Runs ~4 s (+ start-up) on an H200.
"""
import time

import gt_common as gc


def macro_f1(preds, labels, classes):
    """Macro F1 in pure Python, as a metric written inline in a training loop."""
    tp = [0] * classes
    fp = [0] * classes
    fn = [0] * classes
    for p, t in zip(preds, labels):
        if p == t:
            tp[p] += 1
        else:
            fp[p] += 1
            fn[t] += 1
    f1 = 0.0
    for c in range(classes):
        prec = tp[c] / (tp[c] + fp[c]) if tp[c] + fp[c] else 0.0
        rec = tp[c] / (tp[c] + fn[c]) if tp[c] + fn[c] else 0.0
        f1 += 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return f1 / classes


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=4.0)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--passes", type=int, default=30)
    p.add_argument("--metric-every", type=int, default=1)
    args = p.parse_args()

    import torch
    import torch.nn.functional as F

    dev = gc.setup(args)
    classes = 100
    model = gc.mlp(args.width, args.layers, classes=classes).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    batches = []
    for _ in range(4):
        x = torch.randn(args.batch, args.width, generator=g)
        y = torch.randint(0, classes, (args.batch,), generator=g)
        batches.append((x.to(dev), y.to(dev), y.tolist()))

    n, metric_s, f1, loss_v = 0, 0.0, 0.0, float("nan")
    t0 = time.perf_counter()
    for i in gc.steps_loop(args):
        x, y, labels = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        if i % args.metric_every == 0:
            loss_v = loss.item()  # a per-step sync (the argmax kernel runs after it)
            tm = time.perf_counter()
            preds = out.argmax(1).tolist()  # the last sync before the metric: SITE-TOLIST
            for _ in range(args.passes):
                f1 = macro_f1(preds, labels, classes)
            metric_s += time.perf_counter() - tm
        n += 1
    gc.sync(dev)
    wall = time.perf_counter() - t0
    gc.emit("item_metric", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(loss_v, 4), "f1": round(f1, 4)},
            expect_finding=["sync_turnaround", "host_busy"],
            expect_site={"finding": "sync_turnaround",
                         "site": gc.marked_site("SITE-TOLIST", "main")},
            timing={"metric_share": round(metric_s / wall, 3) if wall else 0})


if __name__ == "__main__":
    main()
