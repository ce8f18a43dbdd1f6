#!/usr/bin/env python3
"""One pass of PyTorch's scaled_dot_product_attention, for Nsight Compute to count (GPU machine).

Runs the pass twice untimed, then once between cudaProfilerStart/Stop, so that
`ncu --profile-from-start off` sees exactly that pass's kernels. Inputs as in
experiments/bench_attention.py: (batch, seq, heads, dim) in memory, viewed as
(batch, heads, seq, dim), random fp16. For the backward pass the forward runs
outside the profiled range; the range holds torch.autograd.grad of its output.

  python3 torch_counters.py --backend flash --pass fwd --head-dim 64 --seq 2048 --batch 8 --heads 32 [--causal]
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=sorted(BACKENDS), required=True)
    ap.add_argument("--pass", dest="pass_", choices=["fwd", "bwd"], required=True)
    ap.add_argument("--head-dim", type=int, required=True)
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--causal", action="store_true")
    a = ap.parse_args()
    backward = a.pass_ == "bwd"

    def tensor():
        x = torch.randn(a.batch, a.seq, a.heads, a.head_dim, device="cuda", dtype=torch.float16).transpose(1, 2)
        return x.requires_grad_(backward)

    q, k, v = tensor(), tensor(), tensor()
    with sdpa_kernel([BACKENDS[a.backend]]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)
        dout = torch.randn_like(out)

        def run():
            if backward:
                torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
            else:
                F.scaled_dot_product_attention(q, k, v, is_causal=a.causal)

        run()
        run()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        run()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled: {a.backend} {a.pass_} d={a.head_dim} N={a.seq} B={a.batch} H={a.heads} causal={int(a.causal)} "
          f"on {torch.cuda.get_device_name(0)}, torch {torch.__version__}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
