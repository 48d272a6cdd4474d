# SPDX-License-Identifier: MIT
"""host_step: a jitted JAX training step followed by float(loss) and Python work every step.

What it is: the loop of many JAX training scripts: a jitted step (MLP
--width [1024], batch --batch [256], SGD, value_and_grad), then
`float(loss)` for the progress line (a device-to-host copy: the host waits
for the step), then --host-ms [5] ms of Python (metrics, logging, a
checkpoint decision), then the next step.

The cause, by construction: after float(loss) returns the GPU has nothing
queued until the host has done its Python work and launched the next step.
XLA runs the step on its own streams, waits on events and host callbacks
between them, and launches from its own threads; none of that is why the
GPU is idle. Expected first finding: sync_turnaround (the host returned from
the wait and did not launch for ~--host-ms) or host_busy; not
dependency_wait (issue 23: the streams' waits are the mechanism, the host's
work is the cause). With host stacks the call site is the step() line
(SITE-STEP), where the host comes back to the GPU after its work: float(loss)
waits inside XLA's runtime (its own threads and events), not in a CUDA call
of the Python thread, so no stack is taken there (the H200, run 15:
host_busy 96.8 %, the step() line 94 % of its idle time).
Result: the final loss (6 decimals) and the step count (with --steps).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import gt_common as gc  # noqa: E402


def host_work(ms):
    """--host-ms of Python: the step's metrics and logging (deterministic)."""
    end = time.perf_counter() + ms / 1e3
    acc = 0
    while time.perf_counter() < end:
        acc = (acc * 1103515245 + 12345) % 2147483648
    return acc


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=10.0)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--host-ms", type=float, default=5.0)
    args = p.parse_args()
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_gpu_deterministic_ops" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_gpu_deterministic_ops=true").strip()

    import jax
    import jax.numpy as jnp
    import numpy as np

    if not any(d.platform == "gpu" for d in jax.devices()):
        print("host_step: no GPU visible to JAX", file=sys.stderr)
        sys.exit(3)
    key = jax.random.PRNGKey(args.seed)
    k1, k2, k3 = jax.random.split(key, 3)
    w = args.width
    params = {
        "w1": jax.random.normal(k1, (w, w)) * (1.0 / w) ** 0.5,
        "w2": jax.random.normal(k2, (w, w)) * (1.0 / w) ** 0.5,
        "w3": jax.random.normal(k3, (w, 10)) * (1.0 / w) ** 0.5,
    }

    def loss_fn(p, x, y):
        h = jax.nn.relu(x @ p["w1"])
        h = jax.nn.relu(h @ p["w2"])
        logits = h @ p["w3"]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 10), axis=-1))

    @jax.jit
    def step(p, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g), loss

    rng = np.random.default_rng(args.seed)
    x = jnp.asarray(rng.standard_normal((args.batch, w), dtype=np.float32))
    y = jnp.asarray(rng.integers(0, 10, size=(args.batch,)))
    n, final = 0, float("nan")
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        params, loss = step(params, x, y)  # the host comes back to the GPU here: SITE-STEP
        final = float(loss)  # the progress line waits for the step
        host_work(args.host_ms)
        n += 1
        if n == 1:
            gc.log("first step done")
    wall = time.perf_counter() - t0
    gc.emit("host_step", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 6)} if args.steps else {},
            expect_finding=["sync_turnaround", "host_busy"],
            expect_site={"finding": ["sync_turnaround", "host_busy"],
                         "site": gc.marked_site("SITE-STEP", "main")})


if __name__ == "__main__":
    main()
