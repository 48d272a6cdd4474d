# SPDX-License-Identifier: MIT
"""flax_input: a Flax (linen) + optax training loop whose input pipeline runs on the host, in the loop.

What it is: the loop of a Flax script that makes each batch in NumPy on
the training thread: --host-ms [15] ms of per-sample preprocessing
(decode/augment stand-in: a deterministic Python loop plus NumPy flips and
normalisation of a --batch [256] x --width [1024] float32 batch), then
jnp.asarray(batch) (host to device) and a jitted train step (an MLP of
Dense(--width) x 3, optax SGD with momentum, value_and_grad). No host sync
in the loop: the loss is read once at the end.

The cause, by construction: the jitted step is ~1 ms of GPU work and the
host takes ~--host-ms to make the next batch, so the GPU waits for the
host every step with nothing queued. Expected first finding: host_busy (or
slow_data_loader); not sync_turnaround (nothing synchronizes in the loop)
and not dependency_wait (XLA's stream waits are the mechanism, not the cause).
Result: the final loss (6 decimals) and the step count (with --steps).
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import gt_common as gc  # noqa: E402


def preprocess(rng, batch, width, host_ms):
    """One batch, made on the host: --host-ms of per-sample work, deterministic."""
    import numpy as np
    x = rng.standard_normal((batch, width), dtype=np.float32)
    x[::2] = x[::2, ::-1]  # "augmentation": flip every other sample
    x = (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-5)
    end = time.perf_counter() + host_ms / 1e3
    acc = 0
    while time.perf_counter() < end:  # the rest of the decode/augment cost
        acc = (acc * 1103515245 + 12345) % 2147483648
    y = rng.integers(0, 10, size=(batch,))
    return x, y


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=8.0)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--host-ms", type=float, default=15.0)
    args = p.parse_args()

    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
        import flax.linen as nn
        import optax
    except ImportError as e:
        print("flax_input: %s" % e, file=sys.stderr)
        sys.exit(3)
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("flax_input: no GPU visible to JAX", file=sys.stderr)
        sys.exit(3)

    class MLP(nn.Module):
        width: int

        @nn.compact
        def __call__(self, x):
            for _ in range(3):
                x = nn.relu(nn.Dense(self.width)(x))
            return nn.Dense(10)(x)

    model = MLP(args.width)
    rng = np.random.default_rng(args.seed)
    x0, _ = preprocess(rng, args.batch, args.width, 0)
    params = model.init(jax.random.PRNGKey(args.seed), jnp.asarray(x0))
    tx = optax.sgd(0.01, momentum=0.9)
    opt_state = tx.init(params)

    @jax.jit
    def train_step(params, opt_state, x, y):
        def loss_fn(p):
            logits = model.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        loss, g = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(g, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    n, loss = 0, None
    t0 = time.perf_counter()
    for _ in gc.steps_loop(args):
        x, y = preprocess(rng, args.batch, args.width, args.host_ms)  # the host's input pipeline
        params, opt_state, loss = train_step(params, opt_state, jnp.asarray(x), jnp.asarray(y))
        n += 1
        if n == 1:
            gc.log("first step done")
    final = float(loss) if loss is not None else float("nan")
    wall = time.perf_counter() - t0
    gc.emit("flax_input", args, n, wall, samples_per_step=args.batch,
            result={"loss": round(final, 6)} if args.steps else {},
            expect_finding=["host_busy", "slow_data_loader"])


if __name__ == "__main__":
    main()
