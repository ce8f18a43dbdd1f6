// Reduction bursts between work: how many red.global.add.v2.f32 a CTA of 8 warps can leave behind
// at the end of a step before its warps wait for them (docs/engine.md, "Reductions").
//
// FA2 backward ends each step with a burst of REDs (its dQ, one MMA fragment per instruction: 8 rows
// x 32 B, 256 B) and starts the next with a barrier and work. On an H200 the tiles whose burst is
// 32 KiB per CTA do not wait on them while those with 64 KiB do (lg_throttle,
// experiments/results/2026-11-28-h200-fa2-bwd-red-stalls), where calibrate's burst benchmark (REDs
// alone, back to back) finds one SM draining 16 B per cycle behind a queue of 337 B. Here each step
// is W dependent-chain FFMA (8 chains) per warp, a barrier, then k REDs per warp into the warp's own
// L2-resident rows; cycles per step (clock64 over S steps, the slowest warp, median CTA) against k,
// with one CTA on one SM and one CTA on every SM.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/red_burst_probe.cu -o red_burst_probe
//   ./red_burst_probe > red_burst.csv
#include <algorithm>
#include <cstdio>
#include <vector>

#include "probe_check.h"

constexpr int kThreads = 256;  // 8 warps, FA2 backward's CTA
constexpr int kRowFloats = 128;  // an fp32 dQ row at d = 128 (512 B)

constexpr int kRotations = 8;  // rotate: each step reduces into the next of this many sets of rows
__global__ void __launch_bounds__(kThreads) red_steps(float* buf, int steps, int work, int k, int rotate, long long* cycles) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // The warp's band: 8 rows x 128 floats per 16 REDs (a row's 16 32-byte column blocks), 4 bands a
  // set; `rotate`: a step's REDs go to set s % kRotations (new rows each step, as FA2's dQ of query
  // block i), else always to set 0 (the same rows, as calibrate's benchmark).
  float* warp_base = buf + (static_cast<long long>(blockIdx.x) * 8 + warp) * kRotations * 4 * 8 * kRowFloats;
  float a0 = lane, a1 = lane + 1, a2 = lane + 2, a3 = lane + 3, a4 = lane + 4, a5 = lane + 5, a6 = lane + 6, a7 = lane + 7;
  __syncthreads();
  const long long c0 = clock64();
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < work; i += 8) {
      a0 = fmaf(a0, 1.0001f, 0.5f); a1 = fmaf(a1, 1.0001f, 0.5f); a2 = fmaf(a2, 1.0001f, 0.5f); a3 = fmaf(a3, 1.0001f, 0.5f);
      a4 = fmaf(a4, 1.0001f, 0.5f); a5 = fmaf(a5, 1.0001f, 0.5f); a6 = fmaf(a6, 1.0001f, 0.5f); a7 = fmaf(a7, 1.0001f, 0.5f);
    }
    __syncthreads();
    float* base = warp_base + (rotate ? s % kRotations : 0) * 4 * 8 * kRowFloats;
    for (int j = 0; j < k; ++j) {
      float* p = base + ((j / 16) % 4) * 8 * kRowFloats + (lane / 4) * kRowFloats + 8 * (j % 16) + 2 * (lane % 4);
      asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a0), "f"(a1) : "memory");
    }
  }
  __syncthreads();
  const long long c1 = clock64();
  if (lane == 0) cycles[blockIdx.x * 8 + warp] = c1 - c0;
  if (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 == 12345.f) buf[0] = 1;  // keep the work
}

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  float* buf = nullptr;
  const long long floats = static_cast<long long>(sms) * 8 * kRotations * 4 * 8 * kRowFloats;  // 132 MiB
  CK(cudaMalloc(&buf, floats * sizeof(float)));
  CK(cudaMemset(buf, 0, floats * sizeof(float)));
  long long* cyc = nullptr;
  CK(cudaMalloc(&cyc, sizeof(long long) * sms * 8));
  std::vector<long long> host(static_cast<size_t>(sms) * 8);
  const int steps = 200;
  std::printf("# device: %s, %d SMs; CTA of %d threads; per step: W FFMA per warp (8 chains), a barrier, k REDs "
              "per warp (256 B each); %d steps; cycles per step: the slowest warp of a CTA, the median CTA\n",
              prop.name, sms, kThreads, steps);
  std::printf("rotate,ctas,work_ffma,k_per_warp,burst_bytes_per_cta,cycles_per_step,extra_cycles_per_step\n");
  for (const int rotate : {0, 1})
  for (const int ctas : {1, sms}) {
    for (const int work : {8192}) {
      double base = 0;
      for (const int k : {0, 4, 8, 16, 24, 32, 48, 64, 96, 128}) {
        red_steps<<<ctas, kThreads>>>(buf, 5 * kRotations, work, k, rotate, cyc);  // warm-up
        CK(cudaGetLastError());
        red_steps<<<ctas, kThreads>>>(buf, steps, work, k, rotate, cyc);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(host.data(), cyc, sizeof(long long) * ctas * 8, cudaMemcpyDeviceToHost));
        std::vector<long long> per_cta(ctas);
        for (int c = 0; c < ctas; ++c) per_cta[c] = *std::max_element(host.begin() + c * 8, host.begin() + c * 8 + 8);
        std::nth_element(per_cta.begin(), per_cta.begin() + ctas / 2, per_cta.end());
        const double per_step = static_cast<double>(per_cta[ctas / 2]) / steps;
        if (k == 0) base = per_step;
        std::printf("%d,%d,%d,%d,%d,%.1f,%.1f\n", rotate, ctas, work, k, k * 256 * 8, per_step, per_step - base);
      }
    }
  }
  CK(cudaFree(buf));
  CK(cudaFree(cyc));
  return 0;
}
