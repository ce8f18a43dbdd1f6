// FA2 backward's dQ phase in miniature: how far apart do a CTA's 8 warps finish an mma.sync GEMM and
// start their dQ reductions, and what do the reductions then cost?
//
// Why (docs/engine.md, "Reductions"; experiments/results/2026-11-28-h200-red-spread-probe): an SM
// drains red.global at ~16.8 B a cycle behind a 4-5 KiB queue, and a 4 KiB burst per warp costs
// almost nothing once the warps reach their bursts 256+ cycles apart, but ~1,400 cycles a step when
// they burst together. FA2 backward d 128 64 x 128 issues 4 KiB per warp per step and shows no
// lg_throttle on the GPU; the SM model's warps reach their REDs within 170 cycles of each other.
//
// Per step, after a barrier, each warp computes a 16 x 64 fp32 tile of dQ = dS K (dS 64 x 128 and
// K 128 x 128 in shared memory, fp16; ldmatrix.x4 for dS, ldmatrix.x2 for K, 8 k-steps x 8
// mma.sync.m16n8k16: FA2 64 x 128's dQ GEMM per warp at d 128, warps 4 (rows) x 2 (columns)), then
// issues `reds` red.global.add.v2.f32 of its accumulators (FA2's pattern: 8 rows x 32 B each), then
// reads clock64. Printed per step (steps 10..end) and warp: when it finished its GEMM and when its
// last RED issued, in cycles after the step's barrier; summaries: the warps' spread at the GEMM's
// end and the step's length, with reds = 0 and 16.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/dq_spread_probe.cu -o dq_spread_probe
//   ./dq_spread_probe > dq_spread.csv
//   ./dq_spread_probe groups > dq_groups.csv   (2026-12-02: CTAs in groups of g reducing into the same 64
//       rows, g = 1 .. every SM, reds 0, 16 and 32; per (g, reds) the mean step length over every CTA and step)
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "probe_check.h"

constexpr int kThreads = 256;      // 8 warps
constexpr int kRowsA = 64, kK = 128, kColsB = 128;
constexpr int kLd = kK + 8;        // padded rows (halves): ldmatrix rows fall on distinct banks
constexpr int kSmemHalves = (kRowsA + kColsB) * kLd;
constexpr int kRowFloats = 128;    // a dQ row at d = 128
constexpr int kSteps = 40, kSkip = 10;

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__global__ void __launch_bounds__(kThreads) dq_spread(float* buf, int reds, int group, long long* times) {
  extern __shared__ __half smem[];
  __half* sA = smem;                 // dS: 64 rows x 128 (k)
  __half* sB = smem + kRowsA * kLd;  // K: 128 rows (n) x 128 (k), n-major as FA2 reads K for dS K
  for (int i = threadIdx.x; i < kSmemHalves; i += kThreads) smem[i] = __float2half(0.001f * (i % 97));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m0 = (warp % 4) * 16, n0 = (warp / 4) * 64;
  // CTAs in groups of `group` reduce into the same 64 rows, as FA2's CTAs of one head (its key blocks) do into
  // the dQ rows of the query block they are at (group = every SM: all CTAs; 1: each CTA its own rows).
  const long long cta_rows = static_cast<long long>(blockIdx.x / group) * kRowsA;
  float* dq = buf + (cta_rows + m0 + lane / 4) * kRowFloats + n0 + 2 * (lane % 4);
  __syncthreads();
  for (int s = 0; s < kSteps; ++s) {
    __syncthreads();
    const long long t0 = clock64();
    float acc[8][4];
#pragma unroll
    for (int n = 0; n < 8; ++n)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[n][q] = 0.f;
#pragma unroll
    for (int k = 0; k < kK / 16; ++k) {
      std::uint32_t a[4];
      const __half* pa = sA + (m0 + (lane % 16)) * kLd + k * 16 + (lane / 16) * 8;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                   : "r"(smem_addr(pa)));
#pragma unroll
      for (int n = 0; n < 8; ++n) {
        std::uint32_t b[2];
        const __half* pb = sB + (n0 + n * 8 + (lane % 8)) * kLd + k * 16 + ((lane / 8) % 2) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(b[0]), "=r"(b[1])
                     : "r"(smem_addr(pb)));
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(acc[n][0]), "+f"(acc[n][1]), "+f"(acc[n][2]), "+f"(acc[n][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
    }
    // The GEMM's results are in (the first RED reads them); then the reductions.
    asm volatile("" ::"f"(acc[0][0]), "f"(acc[7][3]));
    const long long t1 = clock64();
    for (int j = 0; j < reds; ++j) {
      const int n = j % 8, h = (j / 8) % 2;  // fragment n, its upper (h) or lower 8 rows
      float* p = dq + h * 8 * kRowFloats + n * 8;
      asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(acc[n][2 * h]), "f"(acc[n][2 * h + 1])
                   : "memory");
    }
    const long long t2 = clock64();
    if (lane == 0) {
      long long* out = times + ((static_cast<long long>(blockIdx.x) * kSteps + s) * 8 + warp) * 3;
      out[0] = t0;
      out[1] = t1;
      out[2] = t2;
    }
  }
}

int main(int argc, char** argv) {
  const bool groups_mode = argc > 1 && std::string(argv[1]) == "groups";
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  float* buf = nullptr;
  CK(cudaMalloc(&buf, sizeof(float) * sms * kRowsA * kRowFloats));
  CK(cudaMemset(buf, 0, sizeof(float) * sms * kRowsA * kRowFloats));
  long long* times = nullptr;
  const size_t n_times = static_cast<size_t>(sms) * kSteps * 8 * 3;
  CK(cudaMalloc(&times, sizeof(long long) * n_times));
  const int smem_bytes = kSmemHalves * static_cast<int>(sizeof(__half));
  CK(cudaFuncSetAttribute(dq_spread, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  std::vector<long long> host(n_times);
  std::printf("# device: %s, %d SMs; one CTA of 8 warps per SM; per step: barrier, a 16x64x128 mma.sync GEMM per "
              "warp from shared memory, `reds` red.global.add.v2.f32; cycles after the step's barrier (the step "
              "starts when the last warp leaves it); steps %d..%d\n",
              prop.name, sms, kSkip, kSteps - 1);
  if (groups_mode) {
    std::printf("group,reds,bytes_per_cta_step,mean_step_cycles\n");
    for (const int group : {1, 2, 4, 8, 16, 33, 66, sms})
      for (const int reds : {0, 16, 32}) {
        dq_spread<<<sms, kThreads, smem_bytes>>>(buf, reds, group, times);  // warm-up
        CK(cudaGetLastError());
        dq_spread<<<sms, kThreads, smem_bytes>>>(buf, reds, group, times);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(host.data(), times, sizeof(long long) * n_times, cudaMemcpyDeviceToHost));
        double sum = 0;
        long long count = 0;
        for (int c = 0; c < sms; ++c)
          for (int s = kSkip; s + 1 < kSteps; ++s) {
            const long long* st = host.data() + (static_cast<size_t>(c) * kSteps + s) * 8 * 3;
            const long long* nx = st + 8 * 3;
            long long start = st[0], next = nx[0];
            for (int w = 1; w < 8; ++w) start = std::max(start, st[3 * w]), next = std::max(next, nx[3 * w]);
            sum += static_cast<double>(next - start);
            ++count;
          }
        std::printf("%d,%d,%d,%.1f\n", group, reds, reds * 8 * 256, sum / static_cast<double>(count));
      }
    return 0;
  }
  std::printf("shared_rows,reds,cta,step,warp,gemm_end,reds_end,step_length\n");
  for (const int shared : {0, 1})
  for (const int reds : {0, 16, 32}) {
    dq_spread<<<sms, kThreads, smem_bytes>>>(buf, reds, shared ? sms : 1, times);  // warm-up
    CK(cudaGetLastError());
    dq_spread<<<sms, kThreads, smem_bytes>>>(buf, reds, shared ? sms : 1, times);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(host.data(), times, sizeof(long long) * n_times, cudaMemcpyDeviceToHost));
    for (int c = 0; c < sms; c += 33)  // four CTAs' rows in full
      for (int s = kSkip; s + 1 < kSteps; ++s) {
        const long long* st = host.data() + (static_cast<size_t>(c) * kSteps + s) * 8 * 3;
        const long long* nx = st + 8 * 3;
        long long start = st[0], next = nx[0];
        for (int w = 1; w < 8; ++w) start = std::max(start, st[3 * w]), next = std::max(next, nx[3 * w]);
        for (int w = 0; w < 8; ++w)
          std::printf("%d,%d,%d,%d,%d,%lld,%lld,%lld\n", shared, reds, c, s, w, st[3 * w + 1] - start,
                      st[3 * w + 2] - start, next - start);
      }
  }
  CK(cudaFree(buf));
  CK(cudaFree(times));
  return 0;
}
