// Branch probe: how long a branch holds the warp that issues it, taken and
// not taken, with a warp-uniform predicate (BRA on a uniform predicate) and a
// per-lane one (the divergence-capable form the compiler writes for `if`
// inside our kernels: BSSY, @P BRA, BSYNC), for 1, 2 and 4 warps per SM
// sub-partition (SMSP). It answers what Nsight Compute's branch_resolving and
// no_instruction stall reasons cost per branch instruction, which the SM model
// (sim/engine/sm_model.cpp) did not charge.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/branch_probe.cu -o branch_probe
//   ./branch_probe > branch.txt            (cuobjdump -sass branch_probe: the loops' instructions)
//
// One CTA per SM, W warps per CTA (warp w on SMSP w % 4). Each warp runs
// `iters` iterations of kUnroll blocks; a block is one branch over kBody FFMAs
// of a dependent chain (taken: they are skipped). The baseline is the same
// FFMA chain without a branch. Then loops that are not unrolled (loop_kernel). Cycles from clock64 around the loop, the
// slowest warp of the CTA, the median CTA; printed per block and per warp
// (cycles x warps-per-SMSP / blocks: a block's share of its SMSP's time).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_check.h"

constexpr int kUnroll = 8;
constexpr int kBody = 24;  // FFMAs a branch skips: too many to predicate (a 1-FFMA body was if-converted)

enum Variant { kBaseline, kUniform, kLane, kVariants };
static const char* kVariantNames[kVariants] = {"ffma chain (no branch)", "uniform predicate (BRA)",
                                               "per-lane predicate (BSSY/BRA/BSYNC)"};

#define FFMA_BODY                                                                  \
  "fma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\tfma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\t" \
  "fma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\tfma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\t"
#define FFMA_BODY24 FFMA_BODY FFMA_BODY FFMA_BODY FFMA_BODY FFMA_BODY FFMA_BODY

// x <- 24 x fma(x, 0.9999, 0.0001) unless the branch skips them.
template <int V>
__device__ __forceinline__ void block(float& x, std::uint32_t lane, std::uint32_t limit) {
  if constexpr (V == kBaseline) {
    asm volatile(FFMA_BODY24 : "+f"(x));
  } else if constexpr (V == kUniform) {
    // limit is a kernel parameter: the predicate is uniform and the compiler knows it.
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p bra.uni SKIP;\n\t" FFMA_BODY24 "SKIP:\n\t}"
        : "+f"(x)
        : "r"(limit));
  } else {
    // lane < limit: the same for every lane here (limit 0 or 1024), not provably so.
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.lt.u32 p, %1, %2;\n\t@p bra SKIP;\n\t" FFMA_BODY24 "SKIP:\n\t}"
        : "+f"(x)
        : "r"(lane), "r"(limit));
  }
}

// The CTA's slowest warp's cycles from c0 to c1, into cycles[blockIdx.x].
__device__ void record_slowest(long long c0, long long c1, long long* cycles) {
  __shared__ long long slowest;
  if (threadIdx.x == 0) slowest = 0;
  __syncthreads();
  if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<unsigned long long*>(&slowest), c1 - c0);
  __syncthreads();
  if (threadIdx.x == 0) cycles[blockIdx.x] = slowest;
}

template <int V>
__global__ void branch_kernel(int iters, std::uint32_t limit, long long* cycles, float* sink) {
  float x = 0.5f + 0.001f * threadIdx.x;
  const std::uint32_t lane = threadIdx.x & 31;
  block<V>(x, lane, limit);  // fetched before timing
  __syncthreads();
  const long long c0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) block<V>(x, lane, limit);
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x;  // waits for the chain
  record_slowest(c0, clock64(), cycles);
}

// A loop that is not unrolled: K independent FFMA chains per iteration, then
// the counter, its test and the taken backward branch. Cycles per iteration
// against K: the slope is an FFMA's issue, the intercept the loop's own cost.
template <int K>
__global__ void loop_kernel(int iters, long long* cycles, float* sink) {
  float x[K];
#pragma unroll
  for (int k = 0; k < K; ++k) x[k] = 0.5f + 0.001f * (threadIdx.x + k);
  __syncthreads();
  const long long c0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < K; ++k) asm volatile("fma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;" : "+f"(x[k]));
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) s += x[k];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
  record_slowest(c0, clock64(), cycles);
}

template <int K>
double run_loop(int sms, int warps, int iters, long long* d_cycles, float* d_sink) {
  std::vector<long long> h(sms);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    loop_kernel<K><<<sms, warps * 32>>>(iters, d_cycles, d_sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), d_cycles, sms * sizeof(long long), cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end());
    best = std::min(best, static_cast<double>(h[sms / 2]));
  }
  return best / iters;
}

template <int V>
double run(int sms, int warps, int iters, std::uint32_t limit, long long* d_cycles, float* d_sink) {
  std::vector<long long> h(sms);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    branch_kernel<V><<<sms, warps * 32>>>(iters, limit, d_cycles, d_sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), d_cycles, sms * sizeof(long long), cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end());
    best = std::min(best, static_cast<double>(h[sms / 2]));
  }
  return best;
}

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("# %s, %d SMs; one CTA per SM; %d blocks per loop iteration, %d FFMAs per block\n", prop.name, sms, kUnroll, kBody);
  long long* d_cycles = nullptr;
  float* d_sink = nullptr;
  CK(cudaMalloc(&d_cycles, sms * sizeof(long long)));
  CK(cudaMalloc(&d_sink, sms * 1024 * sizeof(float)));
  const int iters = 4096;
  const double blocks = static_cast<double>(iters) * kUnroll;
  std::printf("variant,taken,warps_per_smsp,cycles_per_block,smsp_cycles_per_block_per_warp\n");
  for (int per_smsp : {1, 2, 4}) {
    const int warps = 4 * per_smsp;
    auto print = [&](int v, const char* taken, double cyc) {
      std::printf("%s,%s,%d,%.3f,%.3f\n", kVariantNames[v], taken, per_smsp, cyc / blocks, cyc / blocks / per_smsp);
    };
    print(kBaseline, "-", run<kBaseline>(sms, warps, iters, 0, d_cycles, d_sink));
    print(kUniform, "no", run<kUniform>(sms, warps, iters, 0, d_cycles, d_sink));
    print(kUniform, "yes", run<kUniform>(sms, warps, iters, 1, d_cycles, d_sink));
    print(kLane, "no", run<kLane>(sms, warps, iters, 0, d_cycles, d_sink));
    print(kLane, "yes", run<kLane>(sms, warps, iters, 1024, d_cycles, d_sink));
  }
  std::printf("\nloop,ffma_per_iteration,warps_per_smsp,cycles_per_iteration\n");
  for (int per_smsp : {1, 4}) {
    const int warps = 4 * per_smsp;
    std::printf("loop,4,%d,%.3f\n", per_smsp, run_loop<4>(sms, warps, iters * 8, d_cycles, d_sink));
    std::printf("loop,8,%d,%.3f\n", per_smsp, run_loop<8>(sms, warps, iters * 8, d_cycles, d_sink));
    std::printf("loop,16,%d,%.3f\n", per_smsp, run_loop<16>(sms, warps, iters * 8, d_cycles, d_sink));
    std::printf("loop,32,%d,%.3f\n", per_smsp, run_loop<32>(sms, warps, iters * 8, d_cycles, d_sink));
  }
  CK(cudaFree(d_cycles));
  CK(cudaFree(d_sink));
  return 0;
}
