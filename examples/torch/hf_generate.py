# SPDX-License-Identifier: MIT
"""hf_generate: a Hugging Face transformers generate() loop, the way an
inference service runs it: a GPT-2-sized model (GPT2Config(), random weights,
no download), greedy decoding, batch 1, prompts of growing length.

Why it is here: it is the program that hung under gaptrace 0.1 every time
(issue 10). Each round's prompt length differs, so new kernel variants are
launched for the first time mid-run; with CUDA's lazy module loading (the
default) each first launch loads its module under the driver's context lock.
The torture suite (tests/gpu/torture.sh) runs it in every capture mode, and
bench/realworld measures tokens/s with and without tracing.

The model is built directly on the GPU (--init-on device, the default; --init-on
cpu builds it on the CPU and moves it, as gaptrace 0.1's probe did: another
checksum, and a slower start-up).

Result (deterministic): the number of tokens generated and a checksum of
their ids. Timing: tokens/s over the rounds after the first (warm-up).
"""
import time

import gt_common as gc


def main():
    p = gc.make_parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=6, help="generate() calls")
    p.add_argument("--new-tokens", type=int, default=48, help="tokens per generate()")
    p.add_argument("--layers", type=int, default=12, help="GPT-2 blocks (GPT2Config: 12)")
    p.add_argument("--init-on", choices=("device", "cpu"), default="device",
                   help="where the model is built and its random weights drawn")
    args = p.parse_args()

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    try:  # transformers logs generation hints on stderr; keep it quiet
        from transformers.utils import logging as hf_logging
        hf_logging.set_verbosity_error()
    except ImportError:
        pass

    prof = gc.start_profiler(args)
    dev = gc.setup(args)
    cfg = GPT2Config(n_layer=args.layers)
    if args.init_on == "device":
        # Built and initialized on the GPU (its seeded RNG): no CPU-side init
        # of 124M parameters and no copy; the result differs from --init-on
        # cpu but is just as deterministic.
        with torch.device(dev):
            model = GPT2LMHeadModel(cfg)
        model = model.eval()
    else:
        model = GPT2LMHeadModel(cfg).to(dev).eval()
    gen = torch.Generator().manual_seed(args.seed)

    total, check, tok_s = 0, 0, []
    t_all = time.perf_counter()
    with torch.no_grad():
        for r in range(args.rounds):
            plen = 8 + 13 * r
            ids = torch.randint(0, cfg.vocab_size, (1, plen), generator=gen).to(dev)
            mask = torch.ones_like(ids)
            gc.sync(dev)
            gc.step_mark(0)  # GT_STEP_LOG: a round's tokens, after its sync
            t0 = time.perf_counter()
            out = model.generate(ids, attention_mask=mask, max_new_tokens=args.new_tokens,
                                 min_new_tokens=args.new_tokens, do_sample=False,
                                 pad_token_id=cfg.eos_token_id)
            gc.sync(dev)
            dt = time.perf_counter() - t0
            new = out[0, plen:].tolist()
            gc.step_mark(len(new))
            total += len(new)
            for i, t in enumerate(new):
                check = (check * 31 + t * (i + 1)) % 2147483647
            if r > 0 and dt > 0:
                tok_s.append(len(new) / dt)
            gc.log("round %d: prompt %d, %d tokens in %.3f s" % (r, plen, len(new), dt))
    wall = time.perf_counter() - t_all
    timing, extra = {}, {}
    if tok_s:
        timing["tokens_per_s_median"] = round(sorted(tok_s)[len(tok_s) // 2], 2)
        timing["tokens_per_s_mean"] = round(sum(tok_s) / len(tok_s), 2)
    gc.stop_profiler(args, prof, timing, extra)
    gc.emit("hf_generate", args, args.rounds, wall,
            result={"tokens": total, "checksum": check, "rounds": args.rounds},
            expect_finding=None, timing=timing, **extra)


if __name__ == "__main__":
    main()
