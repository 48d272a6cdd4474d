# SPDX-License-Identifier: MIT
"""jit_loop: a jitted JAX training loop (MLP, SGD, host batches each step).

Why it is here: XLA launches from a pool of threads onto several streams, and
CUPTI gives every thread that records activity a buffer of its own (per-thread
activity buffers, CUPTI 12.3+). gaptrace 0.1's fixed pool of 16 buffers ran
dry on this program ("buffer_refused 166", issue 10). The torture suite
(tests/gpu/torture.sh) runs it in every capture mode and demands zero loss.

XLA is asked for deterministic reductions (--xla_gpu_deterministic_ops) so
that a traced run prints the same result as an untraced one.
Result: the final loss (6 decimals) and the step count.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import gt_common as gc  # noqa: E402


def main():
    p = gc.make_parser(__doc__.splitlines()[0], steps=300)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    args = p.parse_args()
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_gpu_deterministic_ops" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_gpu_deterministic_ops=true").strip()

    import jax
    import jax.numpy as jnp
    import numpy as np

    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jit_loop: no GPU visible to JAX", file=sys.stderr)
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
    loss = None
    t0 = time.perf_counter()
    n = 0
    for _ in gc.steps_loop(args):
        x = rng.standard_normal((args.batch, w), dtype=np.float32)
        y = rng.integers(0, 10, size=(args.batch,))
        params, loss = step(params, x, y)
        n += 1
    final = float(loss) if loss is not None else float("nan")
    wall = time.perf_counter() - t0
    gc.emit("jit_loop", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 6)}, expect_finding=None)


if __name__ == "__main__":
    main()
