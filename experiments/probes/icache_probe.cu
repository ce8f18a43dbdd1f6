// Instruction fetch: how fast warps issue a loop body of N independent instructions as N grows past
// the SM's instruction caches, for 1, 2 and 4 warps per sub-partition (SMSP).
//
// Why (docs/engine.md, "Pipe intervals" and the memory-order experiments): FA1's step is 1,900-4,400
// instructions per warp (30-70 KB of code), and Nsight Compute puts 0.68 cycles per issued instruction
// of FA1 forward on `no_instruction` (experiments/results/2026-11-25-h100-fa1-stalls), a cost the SM
// model does not have. This measures the instruction caches' capacity (where the rate breaks) and the
// fetch rate beyond them.
//
// The body: N FFMA in 8 independent chains (each FFMA's latency hidden by the 7 others), written as
// inline PTX so that ptxas keeps one SASS instruction per FFMA in order; the loop runs `iters` times.
// One CTA per SM, W warps (warp w on SMSP w % 4). Cycles: clock64 around the loop, the slowest warp
// of a CTA, the median CTA; printed per warp instruction per SMSP, and the body's bytes (16 per
// instruction).
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/icache_probe.cu -o icache_probe
//   ./icache_probe > icache.csv
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "probe_check.h"

template <int J>
__device__ __forceinline__ void ffma_at(float (&r)[8]) {
  asm volatile("fma.rn.f32 %0, %0, 0f3F800054, 0f3C000000;\n" : "+f"(r[J % 8]));
}
template <int... J>
__device__ __forceinline__ void body(float (&r)[8], std::integer_sequence<int, J...>) {
  (ffma_at<J>(r), ...);
}

template <int N>
__global__ void fetch(float* out, int iters, long long* cycles) {
  float r[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) r[k] = threadIdx.x + k;
  __syncthreads();
  const long long c0 = clock64();
  for (int i = 0; i < iters; ++i) body(r, std::make_integer_sequence<int, N>{});
  const long long c1 = clock64();
  if ((threadIdx.x & 31) == 0) cycles[blockIdx.x * 32 + threadIdx.x / 32] = c1 - c0;
  float s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) s += r[k];
  if (s == 12345.f) out[0] = s;
}

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  long long* cyc = nullptr;
  float* out = nullptr;
  CK(cudaMalloc(&cyc, sizeof(long long) * sms * 32));
  CK(cudaMalloc(&out, sizeof(float)));
  std::vector<long long> host(static_cast<size_t>(sms) * 32);
  std::printf("# device: %s, %d SMs; one CTA per SM; body of N FFMA in 8 chains, looped; cycles per warp "
              "instruction per SMSP = cycles / (warps per SMSP x iterations x N); the slowest warp, the median CTA\n",
              prop.name, sms);
  std::printf("n_instr,body_bytes,warps_per_smsp,cycles_per_instr_per_smsp\n");
  auto run = [&](auto kernel, int n) {
    for (const int warps : {4, 8, 16}) {
      const int iters = std::max(4, 2 * 65536 / n);
      kernel<<<sms, 32 * warps>>>(out, 2, cyc);  // warm-up (and the first fetch of the code)
      CK(cudaGetLastError());
      kernel<<<sms, 32 * warps>>>(out, iters, cyc);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(host.data(), cyc, sizeof(long long) * sms * 32, cudaMemcpyDeviceToHost));
      std::vector<long long> per_cta(static_cast<size_t>(sms));
      for (int c = 0; c < sms; ++c)
        per_cta[c] = *std::max_element(host.begin() + c * 32, host.begin() + c * 32 + warps);
      std::nth_element(per_cta.begin(), per_cta.begin() + sms / 2, per_cta.end());
      const double per_smsp = static_cast<double>(per_cta[sms / 2]) / (warps / 4.0 * iters * n);
      std::printf("%d,%d,%d,%.3f\n", n, 16 * n, warps / 4, per_smsp);
    }
  };
  run(fetch<256>, 256);
  run(fetch<512>, 512);
  run(fetch<1024>, 1024);
  run(fetch<1536>, 1536);
  run(fetch<2048>, 2048);
  run(fetch<3072>, 3072);
  run(fetch<4096>, 4096);
  run(fetch<6144>, 6144);
  run(fetch<8192>, 8192);
  run(fetch<12288>, 12288);
  CK(cudaFree(cyc));
  CK(cudaFree(out));
  return 0;
}
