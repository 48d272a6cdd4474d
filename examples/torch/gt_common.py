# SPDX-License-Identifier: MIT
"""Helpers shared by the PyTorch examples.

Every example prints exactly one JSON line on stdout when it ends:
  {"example": NAME, "result": {...}, "expect": {...}, "expect_finding": [...],
   "timing": {...}}
"result" and "expect" are deterministic for a given command line (a traced run
must print the same); everything that depends on speed is under "timing".
"expect_finding" lists the finding ids that must rank first in
`gaptrace report` ([] = healthy: no finding; null = not a diagnosis example).
Logs and progress go to stderr. Every example also takes --torch-profiler
[--profiler-activities cpu,cuda] [--export trace.json] (start_profiler /
stop_profiler) for the torch.profiler cross-check and the overhead bench.
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time


def make_parser(description, steps=0, seconds=4.0):
    """An ArgumentParser with the options every example takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--steps", type=int, default=steps,
                   help="run exactly this many steps (0: run for --seconds)")
    p.add_argument("--seconds", type=float, default=seconds,
                   help="run for about this long when --steps is 0")
    p.add_argument("--device", default="cuda",
                   help="cuda (default), cuda:N, or cpu for a smoke test without a GPU")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-profiler", action="store_true",
                   help="run under torch.profiler, started before CUDA is initialized")
    p.add_argument("--profiler-activities", default="cpu,cuda")
    p.add_argument("--export", default="", help="Chrome trace path (with --torch-profiler)")
    return p


def start_profiler(args):
    """With --torch-profiler: start torch.profiler (call before setup(), so
    it sees the same kernels as a CUPTI tracer started at cuInit). Returns
    the profiler or None."""
    if not args.torch_profiler:
        return None
    import torch
    kinds = {"cpu": torch.profiler.ProfilerActivity.CPU,
             "cuda": torch.profiler.ProfilerActivity.CUDA}
    acts = [kinds[a.strip()] for a in args.profiler_activities.split(",") if a.strip()]
    prof = torch.profiler.profile(activities=acts)
    prof.start()
    return prof


def stop_profiler(args, prof, timing, extra):
    """Stop the profiler; count its GPU events into extra["profiler"]; with
    --export write its Chrome trace (export time into timing["export_s"])."""
    if prof is None:
        return
    prof.stop()
    gpu_events = sum(1 for e in prof.events()
                     if str(getattr(e, "device_type", "")).endswith("CUDA"))
    extra["profiler"] = {"gpu_events": gpu_events}
    if args.export:
        t = time.perf_counter()
        prof.export_chrome_trace(args.export)
        timing["export_s"] = round(time.perf_counter() - t, 3)


def setup(args):
    """Seed everything and return the torch.device; exits 3 without CUDA."""
    import torch
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("%s: CUDA is not available (use --device cpu for a smoke test)"
              % os.path.basename(sys.argv[0]), file=sys.stderr)
        sys.exit(3)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    try:
        import numpy as np
        np.random.seed(args.seed)
    except ImportError:
        pass
    dev = torch.device(args.device)
    if dev.type == "cuda":
        if dev.index is None:  # torch 2.11's set_device wants an index
            dev = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(dev)
    return dev


def sync(dev):
    """Wait for the device (no-op on cpu)."""
    import torch
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


# The step log of bench/paired (GT_STEP_LOG=PATH, read once at import): one
# line "END_NS N" per logged point, CLOCK_MONOTONIC (time.monotonic_ns), N
# steps since the previous point (0: a boundary, no duration). Kept in a list
# and written at exit; with GT_STEP_LOG unset, step_mark returns at once.
# Where each example logs (bench/paired/README.md, "Step logs"): a BlockTimer
# logs once per block, after its device sync (GPU time); otherwise
# steps_loop logs each step's end on the host.
_STEP_LOG_PATH = os.environ.get("GT_STEP_LOG") or None
_step_marks = []
_step_log_by_block = False


def step_mark(n=1):
    """Log that n steps ended now (n=0: a boundary). No-op without GT_STEP_LOG."""
    if _STEP_LOG_PATH is not None:
        _step_marks.append((time.monotonic_ns(), n))


def _write_step_log():
    with open(_STEP_LOG_PATH, "w") as f:
        f.write("".join("%d %d\n" % m for m in _step_marks))


if _STEP_LOG_PATH is not None:
    import atexit
    atexit.register(_write_step_log)


def steps_loop(args):
    """Yield step numbers: exactly --steps of them, or until --seconds pass.
    With GT_STEP_LOG, each step's end is logged (unless a BlockTimer logs)."""
    t0 = time.perf_counter()
    i = 0
    log_steps = _STEP_LOG_PATH is not None
    if log_steps:
        step_mark(0)
    while True:
        if args.steps > 0:
            if i >= args.steps:
                return
        elif time.perf_counter() - t0 >= args.seconds:
            return
        yield i
        if log_steps and not _step_log_by_block:
            step_mark(1)
        i += 1


def mlp(width, layers, classes=None):
    """nn.Sequential of `layers` x (Linear(width, width), ReLU), then a
    Linear(width, classes) head when classes is given."""
    import torch.nn as nn
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    if classes:
        mods.append(nn.Linear(width, classes))
    return nn.Sequential(*mods)


class BlockTimer:
    """Median step time without a sync per step: the device is synchronized
    every `block` steps and each block's mean step time is one sample."""

    def __init__(self, dev, block=10):
        self.dev, self.block, self.samples = dev, max(1, block), []
        self.n, self.t = 0, None

    def start(self):
        global _step_log_by_block
        sync(self.dev)
        self.n, self.t = 0, time.perf_counter()
        _step_log_by_block = True
        step_mark(0)

    def step_done(self):
        self.n += 1
        if self.n == self.block:
            sync(self.dev)
            now = time.perf_counter()
            self.samples.append((now - self.t) * 1e3 / self.block)
            self.n, self.t = 0, now
            step_mark(self.block)

    def summary(self):
        if not self.samples:
            return {}
        return {"ms_per_step_median": round(statistics.median(self.samples), 4),
                "ms_per_step_mean": round(statistics.fmean(self.samples), 4),
                "ms_per_step_min": round(min(self.samples), 4),
                "blocks": len(self.samples)}


def augmented_image(idx, size, aug, flips=False):
    """A deterministic 3 x size x size float32 "decoded and augmented" sample
    (numpy: aug passes of elementwise work, a flip every third with flips):
    the CPU work of a vision Dataset's __getitem__, a few ms a sample."""
    import numpy as np
    rng = np.random.default_rng(idx)
    img = rng.standard_normal((3, size, size), dtype=np.float32)
    for k in range(aug):
        img = np.tanh(img * 1.01 + 0.01 * k)
        if flips and k % 3 == 0:
            img = img[:, ::-1, :].copy()
    return img


def marked_site(marker, func):
    """The call site a traced run with host stacks (gaptrace run --stacks) must
    name: "file.py:LINE func" of the line of the caller's file whose comment
    ends with MARKER (its own line number, so edits above it keep it right)."""
    import inspect
    path = inspect.stack()[1].filename
    with open(path) as f:
        for n, line in enumerate(f, 1):
            code, _, comment = line.partition("#")
            if comment.rstrip().endswith(marker) and "marked_site(" not in code:
                return "%s:%d %s" % (os.path.basename(path), n, func)
    raise SystemExit("marked_site: no comment ends with '%s' in %s" % (marker, path))


def emit(name, args, steps, wall_s, samples_per_step=None, result=None, expect=None,
         expect_finding=None, timing=None, **extra):
    """Print the one-line JSON summary on stdout."""
    res = dict(result or {})
    tim = {"wall_s": round(wall_s, 4)}
    if args.steps > 0:
        res["steps"] = steps
    else:
        tim["steps"] = steps
    if samples_per_step and wall_s > 0:
        tim["samples_per_s"] = round(steps * samples_per_step / wall_s, 1)
    tim.update(timing or {})
    out = {"example": name, "result": res}
    if expect:
        out["expect"] = expect
    out["expect_finding"] = expect_finding
    out.update(extra)
    out["timing"] = tim
    print(json.dumps(_finite(out), sort_keys=False), flush=True)


def _finite(v):
    """NaN/inf are not JSON: write them as null."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def wait_json(procs):
    """Wait for subprocesses started with stdout=PIPE and text=True; return
    (the JSON object lines they printed, parsed, in order; the first non-zero
    exit status, or 0)."""
    found, rc = [], 0
    for pr in procs:
        out, _ = pr.communicate()
        rc = rc or pr.returncode
        for line in out.splitlines():
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except ValueError:
                    pass
    return found, rc


def log(msg):
    print("%s: %s" % (os.path.basename(sys.argv[0]), msg), file=sys.stderr, flush=True)
