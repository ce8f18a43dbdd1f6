// SM pipe probe: latency and throughput of the instruction classes our
// attention kernels issue (mma.sync m16n8k16, ex2, FFMA, FMNMX, integer ALU,
// IMAD, shuffles, f32->f16x2 packing, ldmatrix.x4, barriers), as a function
// of the warps per SM sub-partition (SMSP) and of the independent chains each
// warp runs (ILP). It answers what the timing engine's SM model needs: how
// fast ONE warp goes through a stream of each class (latency-bound, or issue-
// bound), and where the pipe saturates when several warps share it.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/pipe_probe.cu -o pipe_probe
//   ./pipe_probe > pipe.txt          (./pipe_probe mio: shfl, ex2 and their mixes only)
//
// One CTA per SM (grid = SM count, so every SM runs the same), W warps per CTA
// (warp w on SMSP w % 4, so W/4 warps per SMSP). Each warp runs `iters`
// iterations of a body that issues kUnroll x ILP instructions of the class,
// ILP independent dependence chains; cycles from clock64 around the loop,
// the slowest warp of the CTA, the median CTA. Printed: cycles per warp
// instruction per SMSP (= cycles / (W/4 * iters * kUnroll * ILP)), and for a
// single chain (ILP 1, one warp per SMSP) that is the latency.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_check.h"

enum Op { kMma, kMmaBf16, kEx2, kFfma, kFmnmx, kIadd, kImad, kShfl, kF2fp, kLdsm, kBar, kMmaEx2, kShflEx2, kShflFfma, kOps };
static const char* kOpNames[kOps] = {"mma_f16", "mma_bf16", "ex2", "ffma", "fmnmx", "iadd", "imad", "shfl",
                                     "f2fp", "ldsm_x4", "bar_sync", "mma+4ex2", "shfl+ex2", "shfl+ffma"};
constexpr int kUnroll = 16;

template <int OP, int ILP>
__device__ __forceinline__ void body(float (&acc)[ILP][4], std::uint32_t (&u)[ILP], float (&x)[ILP], std::uint32_t a0,
                                     std::uint32_t b0, std::uint32_t smem) {
#pragma unroll
  for (int i = 0; i < ILP; ++i) {
    if constexpr (OP == kMma || OP == kMmaEx2) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(acc[i][0]), "+f"(acc[i][1]), "+f"(acc[i][2]), "+f"(acc[i][3])
          : "r"(a0), "r"(a0 ^ 1u), "r"(a0 ^ 2u), "r"(a0 ^ 3u), "r"(b0), "r"(b0 ^ 1u));
      if constexpr (OP == kMmaEx2) {
        // 4 ex2 per mma: the forward kernel's ratio at d = 64 (Br x Bc x 2 ex2
        // per 2 x Br x Bc x d / 4096 mma ... = 16 x 8 elements per m16n8 tile
        // per 4 k16 steps, i.e. 128 / 32 lanes / (d / 16)).
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("ex2.approx.ftz.f32 %0, %0;\n" : "+f"(acc[i][e]));
      }
    } else if constexpr (OP == kMmaBf16) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(acc[i][0]), "+f"(acc[i][1]), "+f"(acc[i][2]), "+f"(acc[i][3])
          : "r"(a0), "r"(a0 ^ 1u), "r"(a0 ^ 2u), "r"(a0 ^ 3u), "r"(b0), "r"(b0 ^ 1u));
    } else if constexpr (OP == kEx2) {
      asm volatile("ex2.approx.ftz.f32 %0, %0;\n" : "+f"(x[i]));
    } else if constexpr (OP == kFfma) {
      asm volatile("fma.rn.f32 %0, %0, 0f3F7FFFFF, 0f33800000;\n" : "+f"(x[i]));
    } else if constexpr (OP == kFmnmx) {
      asm volatile("max.f32 %0, %0, %1;\n" : "+f"(x[i]) : "f"(acc[0][0]));
    } else if constexpr (OP == kIadd) {
      asm volatile("add.u32 %0, %0, %1;\n" : "+r"(u[i]) : "r"(a0));
    } else if constexpr (OP == kImad) {
      asm volatile("mad.lo.u32 %0, %0, %1, %2;\n" : "+r"(u[i]) : "r"(a0), "r"(b0));
    } else if constexpr (OP == kShfl) {
      asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, 0xffffffff;\n" : "+r"(u[i]));
    } else if constexpr (OP == kShflEx2 || OP == kShflFfma) {
      // Two independent chains per step: do SHFL (MIO) and ex2 (MUFU, also issued through the MIO
      // queue) share a throughput? shfl+ffma is the control (FFMA is not an MIO instruction).
      // cycles/instr is then per pair.
      asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, 0xffffffff;\n" : "+r"(u[i]));
      if constexpr (OP == kShflEx2) {
        asm volatile("ex2.approx.ftz.f32 %0, %0;\n" : "+f"(x[i]));
      } else {
        asm volatile("fma.rn.f32 %0, %0, 0f3F7FFFFF, 0f33800000;\n" : "+f"(x[i]));
      }
    } else if constexpr (OP == kF2fp) {
      asm volatile("{ .reg .b32 t; cvt.rn.f16x2.f32 t, %1, %1; xor.b32 %0, %0, t; }\n" : "+r"(u[i]) : "f"(x[i]));
    } else if constexpr (OP == kLdsm) {
      // Lane l's row at l x 16 B (s_base), so each 8-lane phase reads 128 contiguous bytes: conflict-free.
      // The chain reads 512 B block u[i] % 8 (warp-uniform), then the next: u[i] + 1 plus this load's
      // data (zeros, which the compiler cannot know). A dependent chain per ILP lane whose address moves
      // every step, so no two loads can be merged (ptxas merges ldmatrix of addresses it proves equal;
      // the chain's IADD adds a few cycles to its latency).
      std::uint32_t r0, r1, r2, r3;
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                   : "r"(smem + (u[i] & 7u) * 512u));
      u[i] = (u[i] ^ r0 ^ r1 ^ r2 ^ r3) + 1u;
    } else if constexpr (OP == kBar) {
      __syncthreads();
    }
  }
}

template <int OP, int ILP>
__global__ void pipe_kernel(int iters, long long* cycles, float* sink) {
  __shared__ __align__(128) std::uint16_t smem[64 * 64];
  for (int k = threadIdx.x; k < 64 * 64; k += blockDim.x) smem[k] = 0;  // ldmatrix reads zeros (see body)
  __syncthreads();
  const std::uint32_t s_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem)) + (threadIdx.x % 32) * 16;
  float acc[ILP][4];
  std::uint32_t u[ILP];
  float x[ILP];
#pragma unroll
  for (int i = 0; i < ILP; ++i) {
    acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.001f * (i + 1);
    u[i] = OP == kLdsm ? static_cast<std::uint32_t>(i) : threadIdx.x * 7u + i;  // ldmatrix: warp-uniform blocks
    x[i] = 0.5f + 0.01f * i;
  }
  const std::uint32_t a0 = 0x3c003c00u ^ (threadIdx.x & 1u), b0 = 0x38003800u;
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int r = 0; r < kUnroll; ++r) body<OP, ILP>(acc, u, x, a0, b0, s_base);
  }
  const long long t1 = clock64();
  __syncthreads();
  if (threadIdx.x % 32 == 0) cycles[blockIdx.x * blockDim.x / 32 + threadIdx.x / 32] = t1 - t0;
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < ILP; ++i) s += acc[i][0] + acc[i][3] + x[i] + static_cast<float>(u[i] & 1u);
  if (s == 12345.678f) sink[threadIdx.x] = s;
}

struct Result {
  double per_instr;  // cycles per warp instruction per SMSP
  double clock_ghz;  // SM clock during the run (clock64 / wall time)
};

template <int OP, int ILP>
Result run(int sms, int warps, int iters) {
  long long* d_cycles;
  float* d_sink;
  const int n = sms * warps;
  CK(cudaMalloc(&d_cycles, n * sizeof(long long)));
  CK(cudaMalloc(&d_sink, 1024 * sizeof(float)));
  pipe_kernel<OP, ILP><<<sms, 32 * warps>>>(2, d_cycles, d_sink);  // warm-up
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0));
  pipe_kernel<OP, ILP><<<sms, 32 * warps>>>(iters, d_cycles, d_sink);
  CK(cudaGetLastError());
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  std::vector<long long> c(n);
  CK(cudaMemcpy(c.data(), d_cycles, n * sizeof(long long), cudaMemcpyDeviceToHost));
  std::vector<long long> per_cta(sms, 0);
  for (int b = 0; b < sms; ++b)
    for (int w = 0; w < warps; ++w) per_cta[b] = std::max(per_cta[b], c[b * warps + w]);
  std::sort(per_cta.begin(), per_cta.end());
  const double cyc = static_cast<double>(per_cta[sms / 2]);
  CK(cudaFree(d_cycles));
  CK(cudaFree(d_sink));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const double per_smsp = std::max(1.0, warps / 4.0);  // W < 4: one warp on each of W SMSPs
  const double instrs = per_smsp * iters * kUnroll * ILP;
  return {cyc / instrs, cyc / (ms * 1e-3) / 1e9};
}

template <int OP, int ILP>
void sweep(int sms) {
  const int iters = OP == kBar ? 2000 : (OP == kMma || OP == kMmaBf16 || OP == kMmaEx2 || OP == kEx2) ? 400 : 2000;
  for (int warps : {1, 4, 8, 16, 32}) {
    if (OP == kBar && ILP > 1) continue;
    const Result r = run<OP, ILP>(sms, warps, iters);
    std::printf("%-9s ilp=%d warps/cta=%2d warps/smsp=%4.2f  cycles/instr/smsp=%8.3f  clock=%.3f GHz\n", kOpNames[OP], ILP,
                warps, warps / 4.0, r.per_instr, r.clock_ghz);
  }
}

template <int OP>
void sweep_ilp(int sms) {
  sweep<OP, 1>(sms);
  sweep<OP, 2>(sms);
  sweep<OP, 4>(sms);
  sweep<OP, 8>(sms);
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int sms = prop.multiProcessorCount;
  if (argc > 1 && std::string(argv[1]) == "mio") {  // the MIO-sharing question alone
    sweep_ilp<kShfl>(sms);
    sweep_ilp<kEx2>(sms);
    sweep_ilp<kShflEx2>(sms);
    sweep_ilp<kShflFfma>(sms);
    return 0;
  }
  sweep_ilp<kMma>(sms);
  sweep_ilp<kMmaBf16>(sms);
  sweep_ilp<kMmaEx2>(sms);
  sweep_ilp<kEx2>(sms);
  sweep_ilp<kFfma>(sms);
  sweep_ilp<kFmnmx>(sms);
  sweep_ilp<kIadd>(sms);
  sweep_ilp<kImad>(sms);
  sweep_ilp<kShfl>(sms);
  sweep_ilp<kF2fp>(sms);
  sweep_ilp<kLdsm>(sms);
  sweep<kBar, 1>(sms);
  return 0;
}
