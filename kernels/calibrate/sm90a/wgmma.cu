// wgmma (warpgroup MMA, PTX ISA 9.7.15) for `iosim calibrate`: the tensor
// rate with every SM busy, and the latency of a dependent chain. wgmma exists
// on sm_90a only, so this file is compiled for that architecture alone
// (kernels/CMakeLists.txt) and its functions are called only on a device of
// compute capability 9.0 (kernels/calibrate/calibrate.cpp).
//
// The instructions, fences and shared-memory descriptors are FA3's
// (kernels/fa3/fa3_wgmma.cuh, fa3_hopper.cuh), on tiles laid out as FA3 lays
// out Q, K and V: 128-byte swizzle, 1024-byte aligned, A and B K-major for the
// SS form (S = Q K^T), B N-major for the RS form (O += P V).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/bench_common.cuh"
#include "kernels/calibrate/benchmarks.h"
#include "kernels/common/device_primitives.cuh"
#include "kernels/fa3/fa3_hopper.cuh"
#include "kernels/fa3/fa3_wgmma.cuh"

namespace iosim::calibrate::bench {
namespace {

namespace dev = kernels::dev;
namespace hopper = kernels::hopper;

constexpr int kThreads = 128;    // one warpgroup per CTA
constexpr int kCtasPerSm = 4;    // 4 warpgroups per SM: 4 warps per scheduler
constexpr int kAtomRow = 128;    // bytes per swizzled row: 64 16-bit elements
constexpr int kKSteps = 4;       // k16 steps across one 64-element swizzle atom: one group
constexpr int kUnroll = 8;       // groups between two clock checks (a barrier each)
constexpr int kABytes = 64 * kAtomRow;       // A: 64 rows x 64 K, K-major
constexpr int kBHalf = 128 * kAtomRow;       // B: 128 rows (K-major) or 128 K-rows of 64 N (N-major)
constexpr int kBBytes = 2 * kBHalf;          // N-major B of N = 128: two 64-column halves
constexpr int kSmemBytes = kABytes + kBBytes + 1024;  // + slack to align to the swizzle's period
static_assert(kSmemBytes <= 48 * 1024, "no opt-in to more than 48 KiB of dynamic shared memory here");

// The shape and operand sources of one benchmark.
enum class Form { ss_n128, rs_n128, rs_n64 };
constexpr int n_of(Form f) { return f == Form::rs_n64 ? 64 : 128; }

struct Tiles {
  std::uint32_t a = 0, b = 0;  // shared-memory byte addresses
};

// Generic-proxy writes to shared memory become visible to the async proxy
// (wgmma's operand reads) only after this fence (PTX ISA 9.7.13.4.18).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The CTA's tiles in its dynamic shared memory, aligned to 1024 bytes and
// filled with small non-zero values (all-zero operands draw less power and
// would flatter the clock; products this small keep every sum finite).
template <class Elem>
__device__ Tiles fill_tiles() {
  extern __shared__ __align__(1024) std::uint8_t wgmma_smem_raw[];
  std::uint8_t* smem = wgmma_smem_raw + ((1024 - (dev::smem_addr(wgmma_smem_raw) & 1023)) & 1023);
  auto* words = reinterpret_cast<std::uint32_t*>(smem);
  for (int i = static_cast<int>(threadIdx.x); i < (kABytes + kBBytes) / 4; i += static_cast<int>(blockDim.x))
    words[i] = dev::pack2<Elem>(0.0625f + 0.001f * static_cast<float>(i & 15), 0.03125f);
  fence_proxy_async();
  __syncthreads();
  const std::uint32_t base = dev::smem_addr(smem);
  return {base, base + kABytes};
}

// One wgmma m64nNk16 at k16 step kk (0..3) of the tiles, accumulating.
template <class Elem, Form F>
__device__ __forceinline__ void issue(float (&acc)[n_of(F) / 2], const Tiles& t, const std::uint32_t (&a)[4], int kk) {
  constexpr bool kBf16 = std::is_same_v<Elem, __nv_bfloat16>;
  if constexpr (F == Form::ss_n128) {
    const std::uint32_t off = static_cast<std::uint32_t>(kk) * 32;  // 16 elements along the swizzled row
    hopper::wgmma_ss_m64n128k16<kBf16>(acc, hopper::desc_sw128(t.a + off, 0), hopper::desc_sw128(t.b + off, 0), 1);
  } else {
    const std::uint64_t db = hopper::desc_sw128(t.b + static_cast<std::uint32_t>(kk) * 16 * kAtomRow, kBHalf);
    if constexpr (F == Form::rs_n128)
      hopper::wgmma_rs_m64n128k16<kBf16>(acc, a, db, 1);
    else
      hopper::wgmma_rs_m64n64k16<kBf16>(acc, a, db, 1);
  }
}

// The A fragment of the RS form (registers), small and non-zero.
template <class Elem>
__device__ __forceinline__ void a_fragment(std::uint32_t (&a)[4]) {
#pragma unroll
  for (int q = 0; q < 4; ++q) a[q] = dev::pack2<Elem>(0.0625f, 0.001f * static_cast<float>((threadIdx.x & 31) + q + 1));
}

// Stores `s` only if it is a value the benchmark never produces, so the
// compiler must keep the work behind it.
__device__ __forceinline__ void keep(float s, std::uint32_t* sink) {
  if (__float_as_uint(s) == 0x7FC01234u) *sink = __float_as_uint(s);
}

template <int R>
__device__ __forceinline__ float sum_of(float (&acc)[R]) {
  float s = 0;
#pragma unroll
  for (int i = 0; i < R; ++i) s += acc[i];
  return s;
}

// Throughput: each warpgroup issues groups of kKSteps wgmmas into one
// accumulator (as a GEMM's k loop does: wgmmas of one shape into the same
// registers are ordered without waits), keeping at most two groups in flight
// (wait_group 1), and counts each warp's share: 16 rows x N x 16 x 2 FLOP.
template <class Elem, Form F>
__global__ void __launch_bounds__(kThreads, kCtasPerSm)
    wgmma_rate_kernel(std::uint64_t duration_ns, WarpRecord* records, std::uint32_t* sink) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kN = n_of(F);
  const Tiles t = fill_tiles<Elem>();
  std::uint32_t a[4];
  a_fragment<Elem>(a);
  float acc[kN / 2] = {};
  constexpr std::uint64_t kFlopPerWarp = kKSteps * 2ull * 16 * kN * 16;
  timed_loop_cta<kUnroll>(records, duration_ns, kFlopPerWarp, [&] {
    hopper::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kKSteps; ++kk) issue<Elem, F>(acc, t, a, kk);
    hopper::wgmma_commit();
    hopper::wgmma_wait<1>();
  });
  hopper::wgmma_wait<0>();
  hopper::fence_operands(acc);
  keep(sum_of(acc), sink);
#endif
}

// One warpgroup alone: n wgmma m64n128k16 (SS, f16) into one accumulator.
// kWaitEach: each waits for the previous (commit, wait_group 0): cycles from
// issue to completion. Otherwise groups of kKSteps with at most two in flight
// (the throughput kernel's loop, without the other warpgroups).
template <bool kWaitEach>
__global__ void __launch_bounds__(kThreads) wgmma_chain_kernel(int n, std::uint64_t* cycles, std::uint32_t* sink) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const Tiles t = fill_tiles<__half>();
  const std::uint32_t a[4] = {};
  float acc[64] = {};
  // One before timing: the instructions are fetched, the descriptors set up.
  hopper::wgmma_fence();
  issue<__half, Form::ss_n128>(acc, t, a, 0);
  hopper::wgmma_commit();
  hopper::wgmma_wait<0>();
  hopper::fence_operands(acc);
  __syncthreads();
  const std::uint64_t c0 = clock_cycles();
  if constexpr (kWaitEach) {
#pragma unroll 4
    for (int i = 0; i < n; ++i) {
      hopper::wgmma_fence();
      issue<__half, Form::ss_n128>(acc, t, a, i & (kKSteps - 1));
      hopper::wgmma_commit();
      hopper::wgmma_wait<0>();
      hopper::fence_operands(acc);
    }
  } else {
    for (int i = 0; i < n; i += kKSteps) {
      hopper::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) issue<__half, Form::ss_n128>(acc, t, a, kk);
      hopper::wgmma_commit();
      hopper::wgmma_wait<1>();
    }
  }
  hopper::wgmma_wait<0>();
  hopper::fence_operands(acc);
  const std::uint64_t c1 = clock_cycles();
  if (threadIdx.x == 0) *cycles = c1 - c0;
  keep(sum_of(acc), sink);
#endif
}

std::string ms(std::uint64_t ns) { return std::to_string(ns / 1000000) + " ms"; }

// A warm-up run, then plan.runs timed runs (run_pipe's protocol in pipes.cu):
// the median rate per SM per cycle and the clocks under that load.
template <class Elem, Form F>
profile::PipeRate run_rate(const Plan& plan, const std::string& what) {
  auto* kernel = wgmma_rate_kernel<Elem, F>;
  const int grid = one_wave_grid(kernel, kThreads, plan.sm_count, kCtasPerSm, kSmemBytes);
  kernels::DeviceBuffer<WarpRecord> records(static_cast<std::size_t>(grid) * (kThreads / 32));
  kernels::DeviceBuffer<std::uint32_t> sink(1);
  std::vector<profile::PipeRate> runs;
  for (int r = -1; r < plan.runs; ++r) {
    records.fill_bytes(0);
    const std::uint64_t ns = r < 0 ? plan.warmup_ns : plan.tensor_ns;
    const double wall = wall_ns([&] { kernel<<<grid, kThreads, kSmemBytes>>>(ns, records.get(), sink.get()); });
    if (r >= 0) runs.push_back(pipe_rate(records.download(), wall));
  }
  profile::PipeRate out = median_rate(runs);
  out.setup = what + ", " + std::to_string(kKSteps) +
              " k16 steps per commit_group into one accumulator, at most 2 groups in flight per warpgroup "
              "(wait_group 1), " +
              std::to_string(grid / plan.sm_count) + " CTAs x 1 warpgroup per SM, " + ms(plan.tensor_ns) +
              " per run after a " + ms(plan.warmup_ns) + " warm-up";
  return out;
}

// Cycles per wgmma of a one-warpgroup chain kernel: median over runs.
template <bool kWaitEach>
double chain_cycles(const Plan& plan, int n) {
  kernels::DeviceBuffer<std::uint64_t> cycles(1);
  kernels::DeviceBuffer<std::uint32_t> sink(1);
  std::vector<double> v;
  for (int r = -1; r < plan.runs; ++r) {
    wgmma_chain_kernel<kWaitEach><<<1, kThreads, kSmemBytes>>>(n, cycles.get(), sink.get());
    IOSIM_CUDA_CHECK_LAUNCH();
    IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
    if (r >= 0) v.push_back(static_cast<double>(cycles.download()[0]) / n);
  }
  return profile::median(v);
}

}  // namespace

bool has_wgmma(const Plan& plan) { return plan.cc == 90; }

profile::PipeRate wgmma_rate(const Plan& plan, WgmmaForm form) {
  const std::string from_smem = "A and B from 128-byte-swizzled shared memory (descriptors)";
  const std::string a_in_regs = "A from registers, B from 128-byte-swizzled shared memory (N-major)";
  switch (form) {
    case WgmmaForm::ss_f16:
      return run_rate<__half, Form::ss_n128>(plan, "wgmma.mma_async m64n128k16 f16 -> f32, " + from_smem);
    case WgmmaForm::ss_bf16:
      return run_rate<__nv_bfloat16, Form::ss_n128>(plan, "wgmma.mma_async m64n128k16 bf16 -> f32, " + from_smem);
    case WgmmaForm::rs_f16_n128:
      return run_rate<__half, Form::rs_n128>(plan, "wgmma.mma_async m64n128k16 f16 -> f32, " + a_in_regs);
    case WgmmaForm::rs_f16_n64:
      return run_rate<__half, Form::rs_n64>(plan, "wgmma.mma_async m64n64k16 f16 -> f32, " + a_in_regs);
  }
  throw std::logic_error("wgmma_rate: unknown form");
}

profile::Measured wgmma_latency(const Plan& plan) {
  const int n = plan.quick ? 1024 : 16384;
  const double chain = chain_cycles<true>(plan, n);
  const double alone = chain_cycles<false>(plan, n);
  return {chain, "one warpgroup (one CTA of 128 threads), " + std::to_string(n) +
                     " wgmma.mma_async m64n128k16 f16 (A and B from shared memory) into one accumulator, each "
                     "followed by commit_group and wait_group 0, clock64 cycles per wgmma, median of " +
                     std::to_string(plan.runs) + " (the same warpgroup in groups of " + std::to_string(kKSteps) +
                     " with 2 groups in flight: " + profile::plain_decimal(alone, 4) + " cycles per wgmma)"};
}

}  // namespace iosim::calibrate::bench
