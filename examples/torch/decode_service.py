# SPDX-License-Identifier: MIT
"""decode_service: a token-streaming inference service (transformers GPT-2, greedy, KV cache).

What it is: the loop of an inference server that streams tokens to its
client, serving requests back to back until --seconds pass: a GPT-2-sized
model (GPT2Config(n_layer=--layers), random weights, no download), batch 1,
prompts of --prompt [32] tokens, --new-tokens [64] tokens a request, decoded
one forward() at a time with the KV cache (the way a streaming server calls
the model, not generate()). Every token is sent as soon as it exists:
`int(next_id)` waits for the GPU (a device-to-host copy and a sync), then the
host does the per-token work of a server (detokenize, format, filter, write
to the socket, a safety filter), modelled as --host-ms [20] ms of CPU time.

The cause, by construction: each token's forward() gives the GPU well under
the --host-ms of work (GPT-2 small at batch 1 on an H200: a few ms; --measure
prints the span of one forward on the GPU, its kernels and the launch gaps
between them, as timing.forward_span_ms), and
then the GPU waits while the host does the token's work after the sync.
Launching one eager forward() (12 layers, ~200 kernels of ~3 us) itself
keeps the host ~9 ms per token on the H200's host: with --host-ms 6 the run
is two causes of equal size (tests/gpu/results/capture_parity.run13.txt:
launch_bound 52 %, sync_turnaround 40 %), so the default host work is the
larger one by a factor of two.
Expected first finding: sync_turnaround (the host returned from the sync and
did not launch more work for ~--host-ms), or host_busy. With host stacks the
finding's call site is the `int(next_id)` line (SITE-TOKEN).
This is the program a capture of a live service (gaptrace capture, issue 22)
must explain: run it dormant, capture any window of it.
Result: requests served, tokens, a checksum of the token ids (deterministic
for a given --steps; with --seconds the count depends on speed).
"""
import time

import gt_common as gc


def host_work(ms, tok):
    """A server's per-token CPU work: --host-ms of string building, the way
    detokenizing and formatting an SSE event costs time (deterministic)."""
    end = time.perf_counter() + ms / 1e3
    s, n = "", 0
    while time.perf_counter() < end:
        s = ('data: {"token": %d, "n": %d}\n\n' % (tok, n))[: 64]
        n += 1
    return len(s)


def main():
    p = gc.make_parser(__doc__.splitlines()[0], seconds=10.0)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--prompt", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--host-ms", type=float, default=20.0)
    p.add_argument("--measure", action="store_true",
                   help="also time the GPU work of one token (CUDA events; an extra sync)")
    args = p.parse_args()

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    try:
        from transformers.utils import logging as hf_logging
        hf_logging.set_verbosity_error()
    except ImportError:
        pass

    dev = gc.setup(args)
    cfg = GPT2Config(n_layer=args.layers)
    with torch.device(dev):
        model = GPT2LMHeadModel(cfg)
    model = model.eval()
    gen = torch.Generator().manual_seed(args.seed)
    gc.log("decode_service: model ready, serving")

    requests, tokens, check, gpu_ms = 0, 0, 0, []
    t0 = time.perf_counter()
    with torch.no_grad():
        for r in gc.steps_loop(args):
            ids = torch.randint(0, cfg.vocab_size, (1, args.prompt), generator=gen).to(dev)
            out = model(input_ids=ids, use_cache=True)
            past = out.past_key_values
            next_id = out.logits[:, -1].argmax(-1, keepdim=True)
            for _ in range(args.new_tokens):
                tok = int(next_id)  # the token goes to the client: SITE-TOKEN
                check = (check * 31 + tok) % 1000000007
                tokens += 1
                host_work(args.host_ms, tok)
                if args.measure and len(gpu_ms) < 50:
                    e0 = torch.cuda.Event(enable_timing=True)
                    e1 = torch.cuda.Event(enable_timing=True)
                    e0.record()
                out = model(input_ids=next_id, past_key_values=past, use_cache=True)
                past = out.past_key_values
                next_id = out.logits[:, -1].argmax(-1, keepdim=True)
                if args.measure and len(gpu_ms) < 50:
                    e1.record()
                    e1.synchronize()
                    gpu_ms.append(e0.elapsed_time(e1))
            requests += 1
            if r == 0:
                gc.log("first request done")
    gc.sync(dev)
    wall = time.perf_counter() - t0
    timing = {"tokens_per_s": round(tokens / wall, 1) if wall else 0}
    if gpu_ms:
        gpu_ms.sort()
        timing["forward_span_ms"] = round(gpu_ms[len(gpu_ms) // 2], 3)
    gc.emit("decode_service", args, requests, wall,
            result={"tokens": tokens, "check": check} if args.steps else {},
            expect_finding=["sync_turnaround", "host_busy"],
            expect_site={"finding": ["sync_turnaround", "host_busy"],
                         "site": gc.marked_site("SITE-TOKEN", "main")},
            timing=timing)


if __name__ == "__main__":
    main()
