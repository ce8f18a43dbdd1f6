#!/usr/bin/env python3
"""Times PyTorch's scaled_dot_product_attention backends on the FlashAttention
benchmark shapes, with the same timing method as `iosim-kernels bench`.

For every shape: each backend of torch.nn.attention.sdpa_kernel (flash,
cudnn, efficient, math), forward and backward, timed with CUDA events: warm-up
runs, then the median of --iters runs, inputs rotated over enough buffer sets
that they exceed --l2-multiple times the L2 cache. FLOPs are counted as
4*B*H*N*N*d forward (halved for causal), 2.5x that for backward, as the
FlashAttention papers do. Tensors are laid out (batch, seq, heads, dim) in
memory, FlashAttention's native layout and the one our kernels use.

Writes one JSON object per (shape, backend, pass) to --out (JSON lines); a
backend that refuses a shape is recorded with its error.

  python3 experiments/bench_attention.py --out torch.jsonl                 # the full sweep
  python3 experiments/bench_attention.py --head-dims 64 --seqs 4096 --out x.jsonl
"""
import argparse
import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "math": SDPBackend.MATH,
}


def attention_flops(b, h, n, d, causal, pass_):
    fwd = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
    return fwd if pass_ == "fwd" else 2.5 * fwd


def make_set(b, h, n, d, dtype, requires_grad):
    # (B, N, H, d) in memory, viewed as (B, H, N, d) for SDPA.
    def t():
        x = torch.randn(b, n, h, d, device="cuda", dtype=dtype).transpose(1, 2)
        return x.requires_grad_(requires_grad)
    return t(), t(), t()


def time_cuda(run, sets, warmup, iters):
    """Milliseconds of `iters` runs of run(set), each between CUDA events on the
    next of `sets`, after `warmup` untimed runs (also rotating)."""
    for i in range(warmup):
        run(sets[i % len(sets)])
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        run(sets[(warmup + i) % len(sets)])
        stops[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, stops)]


def time_backend(backend, b, h, n, d, causal, dtype, pass_, warmup, iters, l2_bytes, l2_multiple):
    tensor_bytes = b * h * n * d * torch.finfo(dtype).bits // 8
    per_set = tensor_bytes * (4 if pass_ == "fwd" else 8)
    n_sets = max(2, math.ceil(l2_multiple * l2_bytes / per_set))
    n_sets = min(n_sets, 64)
    backward = pass_ == "bwd"
    sets = []
    with sdpa_kernel([BACKENDS[backend]]):
        for _ in range(n_sets):
            q, k, v = make_set(b, h, n, d, dtype, backward)
            if backward:
                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                dout = torch.randn_like(out)
                sets.append((q, k, v, out, dout))
            else:
                sets.append((q, k, v))

        def run(s):
            if backward:
                q, k, v, out, dout = s
                torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
            else:
                q, k, v = s
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        ms = time_cuda(run, sets, warmup, iters)
    return ms, n_sets


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--head-dims", default="64,128")
    ap.add_argument("--seqs", default="2048,4096,8192")
    ap.add_argument("--tokens", type=int, default=16384, help="batch * seq_len [16384]")
    ap.add_argument("--hidden", type=int, default=2048, help="heads * head_dim [2048]")
    ap.add_argument("--causal", default="0,1", help="0 = non-causal, 1 = causal [0,1]")
    ap.add_argument("--passes", default="fwd,bwd")
    ap.add_argument("--backends", default="flash,cudnn,efficient,math")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--math-iters", type=int, default=5, help="timed runs for the (slow) math backend [5]")
    ap.add_argument("--l2-multiple", type=float, default=4.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 * 2**20)
    with open(args.out, "a") as out:
        for d in map(int, args.head_dims.split(",")):
            h = args.hidden // d
            for n in map(int, args.seqs.split(",")):
                b = max(1, args.tokens // n)
                for causal in map(lambda s: s == "1", args.causal.split(",")):
                    for pass_ in args.passes.split(","):
                        for backend in args.backends.split(","):
                            rec = {"source": "torch", "backend": backend, "pass": pass_, "batch": b, "heads": h,
                                   "seq": n, "head_dim": d, "causal": causal, "dtype": args.dtype,
                                   "device": props.name, "torch": torch.__version__}
                            iters = args.math_iters if backend == "math" else args.iters
                            try:
                                ms, n_sets = time_backend(backend, b, h, n, d, causal, dtype, pass_, args.warmup,
                                                          iters, l2_bytes, args.l2_multiple)
                                med = statistics.median(ms)
                                rec.update(median_ms=med, min_ms=min(ms), max_ms=max(ms), iters=iters, sets=n_sets,
                                           tflops=attention_flops(b, h, n, d, causal, pass_) / (med * 1e-3) / 1e12)
                            except Exception as e:  # a backend that does not support the shape
                                rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                            torch.cuda.empty_cache()
                            out.write(json.dumps(rec) + "\n")
                            out.flush()
                            print(f"{backend:9s} {pass_} d={d} N={n} B={b} H={h} causal={int(causal)}: "
                                  + (f"{rec['median_ms']:.3f} ms {rec['tflops']:.1f} TFLOP/s" if "median_ms" in rec
                                     else rec["error"]), flush=True)


if __name__ == "__main__":
    sys.exit(main())
