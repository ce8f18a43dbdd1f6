#!/usr/bin/env python3
"""Times eager PyTorch standard attention, the peer of our standard kernels
(issue 11), with the same timing method as `iosim-kernels bench`.

Two variants per shape, forward and forward+backward:
- "eager": S = q @ k.transpose(-2, -1), P = softmax(S), O = P @ v, with q
  scaled by 1/sqrt(d) before timing (our kernels fold the scale into the
  softmax, so neither side pays an extra pass for it): three kernels forward,
  as in the issue's definition.
- "gpt2": GPT-2's eager attention (Hugging Face's GPT2Attention._attn):
  S / sqrt(d), torch.where(causal mask, S, finfo.min), softmax, dropout(p),
  @ v, each a kernel over the N x N matrix: the paper's baseline, beside our
  standard-eager kernels.
Tensors are (B, H, N, d) contiguous (BHSD, our `--layout bhsd`), fp16 by
default. Timing: CUDA events, warm-up runs, then the median of --iters runs,
inputs rotated over enough sets to exceed --l2-multiple L2s. Writes one JSON
object per (shape, variant, pass) to --out (JSON lines).

  python3 experiments/bench_standard.py --shapes 16x16x1024x64,2x16x4096x128 --out torch-standard.jsonl
"""
import argparse
import json
import math
import statistics
import sys

import torch

from bench_attention import time_cuda  # the same timing as the FA2 benchmark


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        b, h, n, d = (int(x) for x in item.split("x"))
        shapes.append((b, h, n, d))
    return shapes


def attention_flops(b, h, n, d, pass_):
    fwd = 4.0 * b * h * n * n * d
    return fwd if pass_ == "fwd" else 3.5 * fwd


def make_set(b, h, n, d, dtype, grad, prescale):
    def t():
        return torch.randn(b, h, n, d, device="cuda", dtype=dtype).requires_grad_(grad)
    q, k, v = t(), t(), t()
    if prescale:
        with torch.no_grad():
            q.mul_(1.0 / math.sqrt(d))
    return {"q": q, "k": k, "v": v, "do": torch.randn(b, h, n, d, device="cuda", dtype=dtype) if grad else None}


def eager(s, d, causal_mask, dropout):
    scores = s["q"] @ s["k"].transpose(-2, -1)
    return torch.softmax(scores, dim=-1) @ s["v"]


def gpt2(s, d, causal_mask, dropout):
    w = s["q"] @ s["k"].transpose(-2, -1)
    w = w / torch.full([], d ** 0.5, dtype=w.dtype, device=w.device)
    w = torch.where(causal_mask, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device))
    w = torch.nn.functional.dropout(torch.softmax(w, dim=-1), p=dropout, training=True)
    return w @ s["v"]


VARIANTS = {"eager": eager, "gpt2": gpt2}
PRESCALED = {"eager": True, "gpt2": False}  # whether q carries 1/sqrt(d) (eager) or the pass divides (gpt2)


def time_variant(variant, b, h, n, d, dtype, pass_, args, l2_bytes):
    fn = VARIANTS[variant]
    grad = pass_ == "fwdbwd"
    elem = torch.finfo(dtype).bits // 8
    per_set = b * h * n * d * elem * (8 if grad else 4) + b * h * n * n * elem * (4 if grad else 2)
    n_sets = min(max(2, math.ceil(args.l2_multiple * l2_bytes / per_set)), 64)
    sets = [make_set(b, h, n, d, dtype, grad, PRESCALED[variant]) for _ in range(n_sets)]
    causal_mask = torch.ones(n, n, device="cuda", dtype=torch.bool).tril()

    def run(s):
        if grad:
            out = fn(s, d, causal_mask, args.dropout)
            torch.autograd.grad(out, (s["q"], s["k"], s["v"]), s["do"])
        else:
            with torch.no_grad():
                fn(s, d, causal_mask, args.dropout)

    return time_cuda(run, sets, args.warmup, args.iters), n_sets


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", required=True, help="comma list of BxHxNxd")
    ap.add_argument("--variants", default="eager,gpt2")
    ap.add_argument("--passes", default="fwd,fwdbwd")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    ap.add_argument("--dropout", type=float, default=0.1, help="gpt2 variant's attention dropout [0.1, GPT-2's]")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--l2-multiple", type=float, default=4.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 * 2**20)
    with open(args.out, "a") as out:
        for b, h, n, d in parse_shapes(args.shapes):
            for variant in args.variants.split(","):
                for pass_ in args.passes.split(","):
                    rec = {"source": "torch", "variant": variant, "pass": pass_, "batch": b, "heads": h, "seq": n,
                           "head_dim": d, "dtype": args.dtype, "layout": "bhsd", "device": props.name,
                           "torch": torch.__version__}
                    if variant == "gpt2":
                        rec["dropout"] = args.dropout
                    try:
                        ms, n_sets = time_variant(variant, b, h, n, d, dtype, pass_, args, l2_bytes)
                        med = statistics.median(ms)
                        rec.update(median_ms=med, min_ms=min(ms), iters=args.iters, sets=n_sets,
                                   tflops=attention_flops(b, h, n, d, pass_) / (med * 1e-3) / 1e12)
                    except torch.cuda.OutOfMemoryError as e:
                        rec["error"] = f"OutOfMemoryError: {str(e).splitlines()[0][:200]}"
                    torch.cuda.empty_cache()
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                    print(f"torch {variant:5s} {pass_:6s} B={b} H={h} N={n} d={d}: "
                          + (f"{rec['median_ms']:.3f} ms" if "median_ms" in rec else rec["error"]), flush=True)


if __name__ == "__main__":
    sys.exit(main())
