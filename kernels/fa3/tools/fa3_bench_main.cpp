// iosim-fa3-bench: times the FlashAttention-3 forward beside our FA2 forward
// in one process, on the same generated inputs and the harness's timing
// (harness::bench: CUDA events, median over the timed runs, input sets
// rotated past the L2), for the targets: d = 64 and 128, N = 4k..16k
// tokens, causal and not, fp16 and bf16, 16k tokens per batch.
//   iosim-fa3-bench [iters]       (default 20)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "kernels/harness/runner.h"

namespace {

iosim::harness::BenchResult time_one(const std::string& algo, const iosim::workload::Problem& p, int iters) {
  iosim::harness::RunSpec s;
  s.problem = p;
  s.algorithm = algo;
  iosim::harness::BenchOptions o;
  o.iters = iters;
  return iosim::harness::bench(s, iosim::workload::Pass::fwd, o);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
    if (iters < 1) {
      std::fprintf(stderr, "iosim-fa3-bench: iters must be >= 1 (got '%s')\n", argv[1]);
      return 2;
    }
    std::printf("%-5s %-4s %-6s %6s %3s %3s  %10s %8s  %10s %8s  %6s\n", "dtype", "d", "causal", "N", "B", "H",
                "fa2 ms", "TFLOP/s", "fa3 ms", "TFLOP/s", "fa3/fa2");
    for (const auto dtype : {iosim::workload::DType::fp16, iosim::workload::DType::bf16}) {
      for (const iosim::i64 d : {64, 128}) {
        for (const bool causal : {false, true}) {
          for (const iosim::i64 n : {4096, 8192, 16384}) {
            iosim::workload::Problem p;
            p.batch = 16384 / n;
            p.heads = 2048 / d;  // FlashAttention-3's benchmark: hidden size 2048
            p.kv_heads = p.heads;
            p.seq_q = p.seq_k = n;
            p.head_dim = d;
            p.dtype = dtype;
            p.causal = causal;
            const auto a = time_one("fa2", p, iters);
            const auto b = time_one("fa3", p, iters);
            std::printf("%-5s %-4lld %-6s %6lld %3lld %3lld  %10.4f %8.1f  %10.4f %8.1f  %6.2fx   [%s]\n",
                        std::string(iosim::workload::to_string(dtype)).c_str(), static_cast<long long>(d),
                        causal ? "yes" : "no", static_cast<long long>(n), static_cast<long long>(p.batch),
                        static_cast<long long>(p.heads), a.median_ms, a.tflops, b.median_ms,
                        b.tflops, a.median_ms / b.median_ms, b.device.c_str());
            std::fflush(stdout);
          }
        }
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "iosim-fa3-bench: %s\n", e.what());
    return 1;
  }
}
