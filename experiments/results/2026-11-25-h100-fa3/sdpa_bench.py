"""Times PyTorch's scaled_dot_product_attention forward with the cuDNN and
FlashAttention(-2) backends on iosim-fa3-bench's shapes (16k tokens per batch,
heads x d = 2048, BHSD, N = 4k/8k/16k, causal and not): the issue's cuDNN
reference. Median of `iters` launches, each timed with CUDA events.
    python3 sdpa_bench.py [iters]
"""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def median_ms(fn, iters):
    for _ in range(3):
        fn()
    times = []
    for _ in range(iters):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    print(f"{'dtype':5} {'d':4} {'causal':6} {'N':>6} {'backend':8} {'ms':>10} {'TFLOP/s':>8}")
    for dtype in (torch.float16, torch.bfloat16):
        for d in (64, 128):
            for causal in (False, True):
                for n in (4096, 8192, 16384):
                    b, h = 16384 // n, 2048 // d
                    q, k, v = (torch.empty(b, h, n, d, device="cuda", dtype=dtype).uniform_(-1, 1) for _ in range(3))
                    flops = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
                    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                                          ("flash", SDPBackend.FLASH_ATTENTION)):
                        try:
                            with sdpa_kernel(backend):
                                ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                               iters)
                            print(f"{str(dtype)[6:]:5} {d:<4} {'yes' if causal else 'no':6} {n:6} {name:8} "
                                  f"{ms:10.4f} {flops / ms / 1e9:8.1f}", flush=True)
                        except RuntimeError as e:
                            print(f"{str(dtype)[6:]:5} {d:<4} {'yes' if causal else 'no':6} {n:6} {name:8} "
                                  f"unavailable: {str(e).splitlines()[0][:80]}", flush=True)


if __name__ == "__main__":
    main()
