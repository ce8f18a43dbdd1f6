// iosim-fa3-bench: times the FlashAttention-3 forward beside our FA2 forward
// in one process, for the targets (16k tokens per batch, hidden size
// 2048: FlashAttention-3's benchmark shapes).
//   1. fa2 and fa3 through the harness (harness::bench: the same generated
//      inputs, CUDA events, median of the timed runs, input sets rotated past
//      the L2), d in the given head dims, N = 4k, 8k, 16k, causal and not,
//      fp16 and bf16.
//   2. fa3's scheduling variants (ForwardVariant) at N = 8k, fp16: each launch
//      timed alone with CUDA events, the median of `iters`.
//   iosim-fa3-bench [iters [d ...]]      (defaults: 20; 64 128)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/device_buffer.h"
#include "kernels/fa3/fa3_launch.h"
#include "kernels/fa3/fa3_patterned_run.h"
#include "kernels/harness/runner.h"

namespace {

using iosim::i64;
using iosim::workload::DType;
using iosim::workload::Problem;

Problem shape(DType dtype, i64 d, bool causal, i64 n) {
  Problem p;
  p.batch = 16384 / n;
  p.heads = 2048 / d;
  p.kv_heads = p.heads;
  p.seq_q = p.seq_k = n;
  p.head_dim = d;
  p.dtype = dtype;
  p.causal = causal;
  return p;
}

iosim::harness::BenchResult time_harness(const std::string& algo, const Problem& p, int iters) {
  iosim::harness::RunSpec s;
  s.problem = p;
  s.algorithm = algo;
  iosim::harness::BenchOptions o;
  o.iters = iters;
  return iosim::harness::bench(s, iosim::workload::Pass::fwd, o);
}

void harness_table(const std::vector<i64>& dims, int iters) {
  std::printf("%-5s %-4s %-6s %6s %3s %3s  %10s %8s  %10s %8s  %7s\n", "dtype", "d", "causal", "N", "B", "H",
              "fa2 ms", "TFLOP/s", "fa3 ms", "TFLOP/s", "fa3/fa2");
  for (const DType dtype : {DType::fp16, DType::bf16}) {
    for (const i64 d : dims) {
      for (const bool causal : {false, true}) {
        for (const i64 n : {4096, 8192, 16384}) {
          const Problem p = shape(dtype, d, causal, n);
          const auto a = time_harness("fa2", p, iters);
          const auto b = time_harness("fa3", p, iters);
          std::printf("%-5s %-4lld %-6s %6lld %3lld %3lld  %10.4f %8.1f  %10.4f %8.1f  %6.2fx   [%s]\n",
                      std::string(iosim::workload::to_string(dtype)).c_str(), static_cast<long long>(d),
                      causal ? "yes" : "no", static_cast<long long>(n), static_cast<long long>(p.batch),
                      static_cast<long long>(p.heads), a.median_ms, a.tflops, b.median_ms, b.tflops,
                      a.median_ms / b.median_ms, b.device.c_str());
          std::fflush(stdout);
        }
      }
    }
  }
}

// Median time of one fa3 launch with variant v (patterned inputs).
double variant_ms(const Problem& p, const iosim::kernels::fa3::ForwardVariant& v, int iters) {
  using iosim::kernels::CudaEvent;
  const iosim::kernels::fa3::PatternedRun run(p);
  const iosim::kernels::ForwardBuffers b = run.buffers();
  for (int w = 0; w < 3; ++w) iosim::kernels::fa3::forward(run.config, b, nullptr, v);
  std::vector<double> ms;
  CudaEvent start, stop;
  for (int it = 0; it < iters; ++it) {
    start.record(nullptr);
    iosim::kernels::fa3::forward(run.config, b, nullptr, v);
    stop.record(nullptr);
    IOSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    ms.push_back(stop.ms_since(start));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void variant_table(const std::vector<i64>& dims, int iters) {
  struct Named {
    const char* name;
    iosim::kernels::fa3::ForwardVariant v;
  };
  const Named variants[] = {{"default", {true, true}}, {"no-pingpong", {false, true}}, {"kv-together", {true, false}}};
  std::printf("\nfa3 variants, fp16, N = 8192 (median of %d single launches)\n", iters);
  std::printf("%-4s %-6s %-22s %10s %8s\n", "d", "causal", "variant", "ms", "TFLOP/s");
  for (const i64 d : dims) {
    for (const bool causal : {false, true}) {
      const Problem p = shape(DType::fp16, d, causal, 8192);
      const double flops = iosim::harness::attention_flops(p, iosim::workload::Pass::fwd);
      for (const Named& n : variants) {
        const double ms = variant_ms(p, n.v, iters);
        std::printf("%-4lld %-6s %-22s %10.4f %8.1f\n", static_cast<long long>(d), causal ? "yes" : "no", n.name, ms,
                    flops / (ms * 1e-3) / 1e12);
        std::fflush(stdout);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
    if (iters < 1) {
      std::fprintf(stderr, "iosim-fa3-bench: iters must be an integer >= 1 (got '%s')\n", argv[1]);
      return 2;
    }
    std::vector<i64> dims;
    for (int a = 2; a < argc; ++a) {
      const i64 d = std::atoll(argv[a]);
      if (d != 64 && d != 128) {
        std::fprintf(stderr, "iosim-fa3-bench: head dim '%s' is not compiled (valid: 64, 128)\n", argv[a]);
        return 2;
      }
      dims.push_back(d);
    }
    if (dims.empty()) dims = {64, 128};
    harness_table(dims, iters);
    variant_table(dims, iters);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "iosim-fa3-bench: %s\n", e.what());
    return 1;
  }
}
