// Reduction bursts, spread: does a CTA's burst of red.global.add.v2.f32 stall its warps less when the
// REDs are spaced by other work, or when the warps reach their bursts at different times?
//
// Why (docs/engine.md, "Reductions"): red_burst_probe.cu finds that 8 warps bursting k REDs each right
// after a barrier cost their step (8 k 256 B - 3.4 KiB) / 16 cycles: an SM drains 16 B a cycle behind
// a queue of about 3.4 KiB. By that, FA2 backward at d 128 64 x 128 (16 REDs a warp, 32 KiB a CTA per
// step) would lose ~1800 cycles a step to lg_throttle; Nsight Compute finds no lg_throttle sample on
// its REDs at all, while 128 x 64 (32 a warp, 64 KiB) loses ~1 cycle per instruction there
// (experiments/results/2026-11-28-h200-fa2-bwd-red-stalls). Two candidate reasons, one variant each:
//   gap      G independent FFMA after every RED of a warp (FA2's SASS: 4 or 8 REDs back to back, then
//            ~14 other instructions, so G = 0 with groups; here the simplest spacing);
//   group    REDs in groups of 4 with 14 FFMA between groups (FA2 64 x 128's SASS pattern);
//   stagger  warp w waits w x S cycles (clock64 spin) after the barrier before its burst, so the
//            warps' bursts arrive one after another.
// Each step: W dependent-chain FFMA per warp (8 chains), a barrier, the variant's REDs; the REDs of
// step s go to new rows (8 row sets rotating, as FA2's query blocks). Cycles per step: clock64 over
// the steps, the slowest warp of a CTA, the median CTA; extra = against the same variant with k = 0.
// One CTA of 8 warps on every SM (FA2 backward's CTA at d 128 and its occupancy).
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/red_spread_probe.cu -o red_spread_probe
//   ./red_spread_probe > red_spread.csv
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "probe_check.h"

constexpr int kThreads = 256;    // 8 warps
constexpr int kRowFloats = 128;  // an fp32 dQ row at d = 128 (512 B)
constexpr int kRotations = 8;

__device__ __forceinline__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void __launch_bounds__(kThreads) red_spread(float* buf, int steps, int work, int k, int gap, int group,
                                                       int stagger, long long* cycles) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float* warp_base = buf + (static_cast<long long>(blockIdx.x) * 8 + warp) * kRotations * 4 * 8 * kRowFloats;
  float a0 = lane, a1 = lane + 1, a2 = lane + 2, a3 = lane + 3, a4 = lane + 4, a5 = lane + 5, a6 = lane + 6, a7 = lane + 7;
  float g0 = lane * 0.5f, g1 = lane * 0.25f;
  __syncthreads();
  const long long c0 = clock64();
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < work; i += 8) {
      a0 = fmaf(a0, 1.0001f, 0.5f); a1 = fmaf(a1, 1.0001f, 0.5f); a2 = fmaf(a2, 1.0001f, 0.5f); a3 = fmaf(a3, 1.0001f, 0.5f);
      a4 = fmaf(a4, 1.0001f, 0.5f); a5 = fmaf(a5, 1.0001f, 0.5f); a6 = fmaf(a6, 1.0001f, 0.5f); a7 = fmaf(a7, 1.0001f, 0.5f);
    }
    __syncthreads();
    if (stagger > 0) spin(static_cast<long long>(warp) * stagger);
    float* base = warp_base + (s % kRotations) * 4 * 8 * kRowFloats;
    for (int j = 0; j < k; ++j) {
      float* p = base + ((j / 16) % 4) * 8 * kRowFloats + (lane / 4) * kRowFloats + 8 * (j % 16) + 2 * (lane % 4);
      asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a0), "f"(a1) : "memory");
      const int spacing = group > 0 ? ((j + 1) % group == 0 ? 14 : 0) : gap;
      for (int q = 0; q < spacing; q += 2) {
        asm volatile("fma.rn.f32 %0, %0, 0f3F800054, 0f3F000000;\n" : "+f"(g0));
        asm volatile("fma.rn.f32 %0, %0, 0f3F800054, 0f3F000000;\n" : "+f"(g1));
      }
    }
  }
  __syncthreads();
  const long long c1 = clock64();
  if (lane == 0) cycles[blockIdx.x * 8 + warp] = c1 - c0;
  if (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + g0 + g1 == 12345.f) buf[0] = 1;  // keep the work
}

// No register of a queued RED is written again before the next burst: fixed data registers, a fixed
// base address per lane and immediate offsets (the REDs go to the same rows each step). The FFMA work
// after a burst then need not wait for the REDs to leave the queue (red_spread's FFMA rewrite a0/a1,
// the REDs' data, at once), so the extra cycles are the queue's alone: lg_throttle when it is full.
template <int J>
__device__ __forceinline__ void red_at(float* base, float d0, float d1) {
  asm volatile("red.global.add.v2.f32 [%0+%3], {%1, %2};\n" ::"l"(base), "f"(d0), "f"(d1),
               "n"((((J / 16) % 4) * 8 * kRowFloats + 8 * (J % 16)) * 4)
               : "memory");
}
template <int... J>
__device__ __forceinline__ void reds(float* base, float d0, float d1, std::integer_sequence<int, J...>) {
  (red_at<J>(base, d0, d1), ...);
}
template <int K>
__global__ void __launch_bounds__(kThreads) red_nowar(float* buf, int steps, int work, int stagger, long long* cycles) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float* base = buf + (static_cast<long long>(blockIdx.x) * 8 + warp) * kRotations * 4 * 8 * kRowFloats +
                (lane / 4) * kRowFloats + 2 * (lane % 4);
  const float d0 = 0.5f * lane, d1 = 0.25f * lane;
  float a0 = lane, a1 = lane + 1, a2 = lane + 2, a3 = lane + 3, a4 = lane + 4, a5 = lane + 5, a6 = lane + 6, a7 = lane + 7;
  __syncthreads();
  const long long c0 = clock64();
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < work; i += 8) {
      a0 = fmaf(a0, 1.0001f, 0.5f); a1 = fmaf(a1, 1.0001f, 0.5f); a2 = fmaf(a2, 1.0001f, 0.5f); a3 = fmaf(a3, 1.0001f, 0.5f);
      a4 = fmaf(a4, 1.0001f, 0.5f); a5 = fmaf(a5, 1.0001f, 0.5f); a6 = fmaf(a6, 1.0001f, 0.5f); a7 = fmaf(a7, 1.0001f, 0.5f);
    }
    __syncthreads();
    if (stagger > 0) spin(static_cast<long long>(warp) * stagger);
    reds(base, d0, d1, std::make_integer_sequence<int, K>{});
  }
  __syncthreads();
  const long long c1 = clock64();
  if (lane == 0) cycles[blockIdx.x * 8 + warp] = c1 - c0;
  if (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 == 12345.f) buf[0] = 1;  // keep the work
}

double median_cta_cycles(const std::vector<long long>& host, int ctas, int steps) {
  std::vector<long long> per_cta(static_cast<size_t>(ctas));
  for (int c = 0; c < ctas; ++c) per_cta[c] = *std::max_element(host.begin() + c * 8, host.begin() + c * 8 + 8);
  std::nth_element(per_cta.begin(), per_cta.begin() + ctas / 2, per_cta.end());
  return static_cast<double>(per_cta[ctas / 2]) / steps;
}

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  float* buf = nullptr;
  const long long floats = static_cast<long long>(sms) * 8 * kRotations * 4 * 8 * kRowFloats;
  CK(cudaMalloc(&buf, floats * sizeof(float)));
  CK(cudaMemset(buf, 0, floats * sizeof(float)));
  long long* cyc = nullptr;
  CK(cudaMalloc(&cyc, sizeof(long long) * sms * 8));
  std::vector<long long> host(static_cast<size_t>(sms) * 8);
  const int steps = 200, work = 4096;
  std::printf("# device: %s, %d SMs; one CTA of %d threads per SM; per step: %d FFMA per warp (8 chains), a "
              "barrier, the variant's k REDs per warp (256 B each, new rows each step); %d steps; cycles per "
              "step: the slowest warp of a CTA, the median CTA; extra: against the variant with k = 0\n",
              prop.name, sms, kThreads, work, steps);
  std::printf("variant,param,k_per_warp,burst_bytes_per_cta,cycles_per_step,extra_cycles_per_step\n");
  std::printf("# nowar rows: param = CTAs (one SM, or one CTA on every SM)\n");
  struct Variant {
    const char* name;
    int gap, group, stagger;
    int param;
  };
  std::vector<Variant> variants;
  for (const int g : {0, 2, 4, 8, 16}) variants.push_back({"gap", g, 0, 0, g});
  variants.push_back({"group", 0, 4, 0, 4});
  variants.push_back({"group", 0, 8, 0, 8});
  for (const int st : {128, 256, 512, 1024}) variants.push_back({"stagger", 0, 0, st, st});
  for (const Variant& v : variants) {
    double base = 0;
    for (const int k : {0, 8, 16, 32}) {
      red_spread<<<sms, kThreads>>>(buf, 5 * kRotations, work, k, v.gap, v.group, v.stagger, cyc);  // warm-up
      CK(cudaGetLastError());
      red_spread<<<sms, kThreads>>>(buf, steps, work, k, v.gap, v.group, v.stagger, cyc);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(host.data(), cyc, sizeof(long long) * sms * 8, cudaMemcpyDeviceToHost));
      std::vector<long long> per_cta(sms);
      for (int c = 0; c < sms; ++c) per_cta[c] = *std::max_element(host.begin() + c * 8, host.begin() + c * 8 + 8);
      std::nth_element(per_cta.begin(), per_cta.begin() + sms / 2, per_cta.end());
      const double per_step = static_cast<double>(per_cta[sms / 2]) / steps;
      if (k == 0) base = per_step;
      std::printf("%s,%d,%d,%d,%.1f,%.1f\n", v.name, v.param, k, k * 256 * 8, per_step, per_step - base);
    }
  }
  // No WAR: K REDs a warp after the barrier, nothing rewriting their registers.
  for (const int ctas : {1, sms}) {
    auto run = [&](auto kernel, int k, double base_cycles, int stagger = 0) {
      kernel<<<ctas, kThreads>>>(buf, 5 * kRotations, work, stagger, cyc);
      CK(cudaGetLastError());
      kernel<<<ctas, kThreads>>>(buf, steps, work, stagger, cyc);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(host.data(), cyc, sizeof(long long) * ctas * 8, cudaMemcpyDeviceToHost));
      const double per_step = median_cta_cycles(host, ctas, steps);
      std::printf("%s,%d,%d,%d,%.1f,%.1f\n", stagger ? ("nowar_stagger" + std::to_string(stagger)).c_str() : "nowar",
                  ctas, k, k * 256 * 8, per_step, per_step - base_cycles);
      return per_step;
    };
    const double base = run(red_nowar<0>, 0, 0);
    run(red_nowar<4>, 4, base);
    run(red_nowar<8>, 8, base);
    run(red_nowar<16>, 16, base);
    run(red_nowar<24>, 24, base);
    run(red_nowar<32>, 32, base);
    run(red_nowar<48>, 48, base);
    run(red_nowar<64>, 64, base);
    // The same bursts with warp w starting its own w x S cycles after the barrier.
    for (const int st : {256, 512, 1024}) {
      const double b = run(red_nowar<0>, 0, 0, st);
      run(red_nowar<16>, 16, b, st);
      run(red_nowar<32>, 32, b, st);
    }
  }
  CK(cudaFree(buf));
  CK(cudaFree(cyc));
  return 0;
}
