// SM pipe throughputs (mma.sync, FFMA, ex2, ldmatrix, issue) with every SM
// busy, and latencies of one warp or CTA alone (dependent chains, a barrier,
// branches). Each throughput kernel runs a duration-bounded loop per warp
// (timed_loop) over independent chains, so the pipe, not a dependency, limits
// it; inputs are non-zero and results are kept live.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <vector>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/bench_common.cuh"
#include "kernels/calibrate/benchmarks.h"
#include "kernels/common/device_primitives.cuh"

namespace iosim::calibrate::bench {
namespace {

namespace dev = kernels::dev;

constexpr int kThreads = 256;        // 8 warps per CTA
constexpr int kMmaCtasPerSm = 2;     // 16 warps per SM: 4 per scheduler
constexpr int kAluCtasPerSm = 4;     // 32 warps per SM
constexpr int kChains = 8;           // independent accumulators / chains per thread
constexpr int kUnroll = 8;           // loop bodies between two %globaltimer checks (mma, ldmatrix)
// FFMA and the issue mix are limited by the issue rate itself, which the
// check's few instructions share: a longer body (256 FFMA) makes them ~3%.
constexpr int kLongUnroll = 32;
constexpr int kIssueUnroll = 16;  // 384 instructions per check
constexpr std::uint64_t kMmaFlop = 2ull * 16 * 8 * 16;  // one m16n8k16
constexpr std::uint64_t kLdmatrixBytes = 4 * 8 * 8 * 2;  // x4: four 8x8 b16 matrices

// Stores `v` only if it is a value the benchmark never produces, so the
// compiler must keep the work that computes it.
__device__ __forceinline__ void keep(std::uint32_t v, std::uint32_t* sink) {
  if (v == 0x7FC01234u) *sink = v;
}

// Non-zero A and B fragments whose products stay small (sums of millions of
// them stay finite in fp32).
template <class Elem>
struct MmaInputs {
  std::uint32_t a[4];
  std::uint32_t b0, b1;
  __device__ __forceinline__ MmaInputs() {
    const float lane = static_cast<float>((threadIdx.x & 31) + 1);
#pragma unroll
    for (int i = 0; i < 4; ++i) a[i] = dev::pack2<Elem>(0.001f * lane, 0.002f * (i + 1));
    b0 = dev::pack2<Elem>(0.003f, 0.001f * lane);
    b1 = dev::pack2<Elem>(0.002f * lane, 0.004f);
  }
};

template <class Elem>
__global__ void __launch_bounds__(kThreads) mma_kernel(std::uint64_t duration_ns, WarpRecord* records,
                                                       std::uint32_t* sink) {
  const MmaInputs<Elem> in;
  float acc[kChains][4] = {};
  timed_loop<kUnroll>(records, duration_ns, kChains * kMmaFlop, [&] {
#pragma unroll
    for (int c = 0; c < kChains; ++c) dev::mma_16816<Elem>(acc[c], in.a, in.b0, in.b1);
  });
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  keep(__float_as_uint(s), sink);
}

// One lane-op per chain step, each step depending on the last: kChains
// independent chains per thread keep the pipe busy. Inputs are non-zero and
// stay finite and normal.
struct Ffma {  // x <- x * 0.9999 + 0.0001 converges to 1
  static constexpr float kStart = 0.5f;
  __device__ __forceinline__ float operator()(float x) const { return fmaf(x, 0.9999f, 0.0001f); }
};
struct Ex2 {  // x <- 2^-x converges to ~0.64 (2^-x = x has one root in (0, 1))
  static constexpr float kStart = 0.25f;
  __device__ __forceinline__ float operator()(float x) const { return dev::exp2_approx(-x); }
};
// FMNMX, the softmax's row maximum (ALU pipe). Written as PTX so that the
// compiler cannot fold the idempotent max of a chain.
struct Fmnmx {
  static constexpr float kStart = 0.5f;
  __device__ __forceinline__ float operator()(float x) const {
    float y;
    asm volatile("max.f32 %0, %1, 0f3E800000;" : "=f"(y) : "f"(x));
    return y;
  }
};
// A butterfly shuffle, the row reductions' step (one lane-op per lane).
struct Shfl {
  static constexpr float kStart = 0.5f;
  __device__ __forceinline__ float operator()(float x) const { return __shfl_xor_sync(0xffffffffu, x, 1); }
};

template <class Op>
__global__ void __launch_bounds__(kThreads) lane_op_kernel(std::uint64_t duration_ns, WarpRecord* records,
                                                           std::uint32_t* sink) {
  float x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = Op::kStart + 0.01f * c + 0.0001f * threadIdx.x;
  const Op op;
  timed_loop<kLongUnroll>(records, duration_ns, kChains * 32ull, [&] {
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = op(x[c]);
  });
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += x[c];
  keep(__float_as_uint(s), sink);
}

// Conflict-free ldmatrix.x4 from every warp: each one reads 512 contiguous
// bytes, lane l giving the row at l x 16, so each 8-lane phase reads 128
// contiguous bytes, one word per bank. A warp's chain c reads at off + c x 512
// in its CTA's tile, and `off` advances by `step` (a kernel argument, a
// multiple of kChains x 512) after each body, wrapping in the tile: ptxas
// merges ldmatrix of addresses it can prove equal (with loop-invariant
// addresses it kept 8 of the loop's 64 and the kernel timed the XORs, 466
// "B/cycle"), and an unknown step makes every address new. The tile is shared
// by the CTA's warps (no hardware merges requests of different instructions).
constexpr int kLdsmTileBytes = 4 * kChains * static_cast<int>(kLdmatrixBytes);  // 16 KiB per CTA

__global__ void __launch_bounds__(kThreads) ldmatrix_kernel(std::uint64_t duration_ns, WarpRecord* records,
                                                            std::uint32_t* sink, std::uint32_t step) {
  __shared__ __align__(128) std::uint32_t tile[kLdsmTileBytes / 4];
  for (int i = threadIdx.x; i < kLdsmTileBytes / 4; i += kThreads) tile[i] = 0x3C003C00u + i;
  constexpr std::uint32_t kX4 = kLdmatrixBytes;
  const std::uint32_t rows = dev::smem_addr(tile) + (threadIdx.x & 31) * 16;
  std::uint32_t off = threadIdx.x / 32 * kChains * kX4 % kLdsmTileBytes;  // the warps start apart
  std::uint32_t acc = 0;
  timed_loop<kUnroll>(records, duration_ns, kChains * kLdmatrixBytes, [&] {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      std::uint32_t r[4];
      dev::ldmatrix_x4(r, rows + off + c * kX4);
      acc ^= r[0] ^ r[1] ^ r[2] ^ r[3];
    }
    off = (off + step) % kLdsmTileBytes;
  });
  keep(acc, sink);
}

__device__ __forceinline__ std::uint32_t majority(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// Two FFMA (FMA pipes) to one LOP3 (ALU pipe): on Hopper the FMA pipes take
// a warp instruction per scheduler per cycle and the ALU half of one, so
// neither fills and the schedulers' issue rate limits. Work counts the warp
// instructions of the body only (the clock checks' few are not: a lower
// bound).
__global__ void __launch_bounds__(kThreads) issue_kernel(std::uint64_t duration_ns, WarpRecord* records,
                                                         std::uint32_t* sink) {
  float x[kChains], z[kChains];
  std::uint32_t y[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) {
    x[c] = 0.5f + 0.01f * c;
    z[c] = 0.25f + 0.01f * c;
    y[c] = 0x9E3779B9u * (threadIdx.x + c + 1);
  }
  const std::uint32_t p = 0x5A5A5A5Au ^ threadIdx.x;
  timed_loop<kIssueUnroll>(records, duration_ns, 3 * kChains, [&] {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      x[c] = fmaf(x[c], 0.9999f, 0.0001f);
      y[c] = majority(y[c], y[(c + 1) % kChains], p);
      z[c] = fmaf(z[c], 0.9998f, 0.0002f);
    }
  });
  std::uint32_t s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s ^= __float_as_uint(x[c]) ^ __float_as_uint(z[c]) ^ y[c];
  keep(s, sink);
}

// One warp: a chain of mma.sync, each taking the previous one's accumulator.
__global__ void mma_chain_kernel(int n, std::uint64_t* cycles, std::uint32_t* sink) {
  const MmaInputs<__half> in;
  float acc[4] = {};
  dev::mma_16816<__half>(acc, in.a, in.b0, in.b1);  // the instruction is fetched before timing
  const std::uint64_t c0 = clock_cycles();
#pragma unroll 16
  for (int i = 0; i < n; ++i) dev::mma_16816<__half>(acc, in.a, in.b0, in.b1);
  __shared__ float done;
  done = acc[0];  // waits for the last mma before the clock is read
  const std::uint64_t c1 = clock_cycles();
  if (threadIdx.x == 0) *cycles = c1 - c0;
  keep(__float_as_uint(done + acc[1] + acc[2] + acc[3]), sink);
}

// One warp: a chain of n lane operations, each taking the previous result.
template <class Op>
__global__ void lane_chain_kernel(int n, std::uint64_t* cycles, std::uint32_t* sink) {
  const Op op;
  float x = Op::kStart + 0.001f * threadIdx.x;
  x = op(x);  // the instruction is fetched before timing
  const std::uint64_t c0 = clock_cycles();
#pragma unroll 16
  for (int i = 0; i < n; ++i) x = op(x);
  __shared__ float done;
  done = x;  // waits for the last result before the clock is read
  const std::uint64_t c1 = clock_cycles();
  if (threadIdx.x == 0) *cycles = c1 - c0;
  keep(__float_as_uint(done), sink);
}

// One CTA of 8 warps: n barriers back to back.
__global__ void __launch_bounds__(kThreads) barrier_kernel(int n, std::uint64_t* cycles) {
  __syncthreads();
  const std::uint64_t c0 = clock_cycles();
#pragma unroll 8
  for (int i = 0; i < n; ++i) __syncthreads();
  const std::uint64_t c1 = clock_cycles();
  if (threadIdx.x == 0) *cycles = c1 - c0;
}

// Branches, one warp per SM sub-partition (one CTA of 4 warps, as every
// kernel of ours has at least: a taken branch costs one warp alone on the SM
// 21.6 cycles on an H200, 27.1 with a warp on each sub-partition, which share
// the SM's instruction fetch), with the blocks of
// experiments/probes/branch_probe.cu.
// A block is one branch over kBranchBody dependent FFMAs, or the FFMAs alone
// (the baseline). The body is long because ptxas if-converts a branch over
// one FFMA into predicated FFMAs: there would be no branch to time.
constexpr int kBranchBody = 24;  // FFMAs per block (IOSIM_FFMA24 below)
// Blocks per loop iteration: the probe's 8, which the compiler unrolled 4
// times more, so its loop's counter and backward branch were 1/32 of a block.
constexpr int kBranchUnroll = 32;

enum class BranchBlock {
  ffma_only,  // the 24-FFMA chain, no branch
  uniform,    // bra.uni on a predicate from a kernel parameter: UISETP, @P BRA
  per_lane,   // bra on lane < a kernel parameter: BSSY, @P BRA, BSYNC
};

#define IOSIM_FFMA4                                                                             \
  "fma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\tfma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\t" \
  "fma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\tfma.rn.f32 %0, %0, 0f3F7FF972, 0f38D1B717;\n\t"
#define IOSIM_FFMA24 IOSIM_FFMA4 IOSIM_FFMA4 IOSIM_FFMA4 IOSIM_FFMA4 IOSIM_FFMA4 IOSIM_FFMA4

// x <- 24 x fma(x, 0.9999, 0.0001) unless the branch skips them. The label is
// local to the asm's `{ }` scope, so the block may be repeated. The uniform
// branch is taken when limit != 0; the per-lane one when lane < limit (the
// same for every lane at limit 0 or 32, which the compiler cannot know).
template <BranchBlock B>
__device__ __forceinline__ void branch_block(float& x, std::uint32_t lane, std::uint32_t limit) {
  if constexpr (B == BranchBlock::ffma_only) {
    asm volatile(IOSIM_FFMA24 : "+f"(x));
  } else if constexpr (B == BranchBlock::uniform) {
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p bra.uni SKIP;\n\t" IOSIM_FFMA24 "SKIP:\n\t}"
                 : "+f"(x)
                 : "r"(limit));
  } else {
    asm volatile("{\n\t.reg .pred p;\n\tsetp.lt.u32 p, %1, %2;\n\t@p bra SKIP;\n\t" IOSIM_FFMA24 "SKIP:\n\t}"
                 : "+f"(x)
                 : "r"(lane), "r"(limit));
  }
}

#undef IOSIM_FFMA24
#undef IOSIM_FFMA4

// Each warp: iters x kBranchUnroll blocks back to back; warp 0's cycles.
template <BranchBlock B>
__global__ void branch_chain_kernel(int iters, std::uint32_t limit, std::uint64_t* cycles, std::uint32_t* sink) {
  float x = 0.5f + 0.001f * threadIdx.x;
  const std::uint32_t lane = threadIdx.x & 31;
  branch_block<B>(x, lane, limit);  // the instructions are fetched before timing
  const std::uint64_t c0 = clock_cycles();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kBranchUnroll; ++k) branch_block<B>(x, lane, limit);
  }
  __shared__ float done;
  done = x;  // waits for the last FFMA before the clock is read
  const std::uint64_t c1 = clock_cycles();
  if (threadIdx.x == 0) *cycles = c1 - c0;
  keep(__float_as_uint(done), sink);
}

std::string ms(std::uint64_t ns) { return std::to_string(ns / 1000000) + " ms"; }

// The arguments after `what` go to the kernel after its (duration, records,
// sink); a non-deduced context lets the kernel's parameter types decide them.
template <class T>
struct Exactly {
  using type = T;
};

// A warm-up run of `warmup_ns`, then plan.runs runs of `run_ns`, each timed
// by the host (wall_ns: the clock's time base); the median rate and clocks.
template <class... Extra>
profile::PipeRate run_pipe(const Plan& plan, void (*kernel)(std::uint64_t, WarpRecord*, std::uint32_t*, Extra...),
                           int ctas_per_sm, std::uint64_t warmup_ns, std::uint64_t run_ns, const std::string& what,
                           typename Exactly<Extra>::type... extra) {
  const int grid = one_wave_grid(kernel, kThreads, plan.sm_count, ctas_per_sm);
  kernels::DeviceBuffer<WarpRecord> records(static_cast<std::size_t>(grid) * (kThreads / 32));
  kernels::DeviceBuffer<std::uint32_t> sink(1);
  std::vector<profile::PipeRate> runs;
  for (int r = -1; r < plan.runs; ++r) {
    records.fill_bytes(0);
    const std::uint64_t ns = r < 0 ? warmup_ns : run_ns;
    const double wall = wall_ns([&] { kernel<<<grid, kThreads>>>(ns, records.get(), sink.get(), extra...); });
    if (r >= 0) runs.push_back(pipe_rate(records.download(), wall));
  }
  profile::PipeRate out = median_rate(runs);
  out.setup = what + ", " + std::to_string(grid / plan.sm_count) + " CTAs x " + std::to_string(kThreads / 32) +
              " warps per SM, " + ms(run_ns) + " per run after a " + ms(warmup_ns) + " warm-up";
  return out;
}

// Cycles per step of a single-CTA latency kernel: median over runs.
template <class Launch>
profile::Measured per_step(const Plan& plan, int steps, Launch&& launch, const std::string& setup) {
  kernels::DeviceBuffer<std::uint64_t> cycles(1);
  std::vector<double> v;
  for (int r = -1; r < plan.runs; ++r) {
    launch(cycles.get());
    IOSIM_CUDA_CHECK_LAUNCH();
    IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
    if (r >= 0) v.push_back(static_cast<double>(cycles.download()[0]) / steps);
  }
  return {profile::median(v), setup + ", median of " + std::to_string(plan.runs)};
}

}  // namespace

profile::PipeRate mma_rate(const Plan& plan, bool bf16) {
  const auto k = bf16 ? mma_kernel<__nv_bfloat16> : mma_kernel<__half>;
  return run_pipe(plan, k, kMmaCtasPerSm, plan.warmup_ns, plan.tensor_ns,
                  std::string("mma.sync m16n8k16 ") + (bf16 ? "bf16" : "f16") + " -> f32, " +
                      std::to_string(kChains) + " independent accumulators per warp");
}

profile::PipeRate ffma_rate(const Plan& plan) {
  return run_pipe(plan, lane_op_kernel<Ffma>, kAluCtasPerSm, plan.pipe_ns, plan.pipe_ns,
                  "FFMA, " + std::to_string(kChains) + " independent chains per thread, " +
                      std::to_string(kChains * kLongUnroll) +
                      " per check of the clock (whose instructions share the issue slots: a lower bound)");
}

profile::PipeRate ex2_rate(const Plan& plan) {
  return run_pipe(plan, lane_op_kernel<Ex2>, kAluCtasPerSm, plan.pipe_ns, plan.pipe_ns,
                  "ex2.approx.ftz.f32, " + std::to_string(kChains) + " independent chains per thread");
}

profile::PipeRate ldmatrix_rate(const Plan& plan) {
  constexpr std::uint32_t kStep = kChains * kLdmatrixBytes;
  static_assert(kLdsmTileBytes % kStep == 0, "a body's reads must not wrap around the tile");
  return run_pipe(plan, ldmatrix_kernel, kAluCtasPerSm, plan.pipe_ns, plan.pipe_ns,
                  "ldmatrix.sync.aligned.m8n8.x4 (512 B), lane l's row at l x 16 B (conflict-free), " +
                      std::to_string(kChains) + " per warp per step, each step " + std::to_string(kStep) +
                      " B further in a " + std::to_string(kLdsmTileBytes / 1024) +
                      " KiB tile per CTA (a stride the compiler does not know: no load is merged)",
                  kStep);
}

profile::PipeRate issue_rate(const Plan& plan) {
  return run_pipe(plan, issue_kernel, kAluCtasPerSm, plan.pipe_ns, plan.pipe_ns,
                  "two FFMA to one LOP3, " + std::to_string(kChains) +
                      " independent chains of each per thread, counting only those (the clock checks' "
                      "instructions are not counted: a lower bound)");
}

profile::PipeRate fmnmx_rate(const Plan& plan) {
  return run_pipe(plan, lane_op_kernel<Fmnmx>, kAluCtasPerSm, plan.pipe_ns, plan.pipe_ns,
                  "FMNMX (max.f32), " + std::to_string(kChains) + " independent chains per thread");
}

profile::PipeRate shfl_rate(const Plan& plan) {
  return run_pipe(plan, lane_op_kernel<Shfl>, kAluCtasPerSm, plan.pipe_ns, plan.pipe_ns,
                  "shfl.sync.bfly.b32, " + std::to_string(kChains) + " independent chains per thread");
}

template <class Op>
profile::Measured lane_latency(const Plan& plan, const std::string& what) {
  const int n = plan.quick ? 4096 : 65536;
  const kernels::DeviceBuffer<std::uint32_t> sink(1);
  return per_step(
      plan, n, [&](std::uint64_t* cycles) { lane_chain_kernel<Op><<<1, 32>>>(n, cycles, sink.get()); },
      "one warp, " + std::to_string(n) + " dependent " + what + ", clock64 cycles per instruction");
}

profile::Measured fp32_latency(const Plan& plan) { return lane_latency<Ffma>(plan, "FFMA"); }
profile::Measured alu_latency(const Plan& plan) { return lane_latency<Fmnmx>(plan, "FMNMX"); }
profile::Measured mufu_latency(const Plan& plan) { return lane_latency<Ex2>(plan, "ex2.approx"); }
profile::Measured shfl_latency(const Plan& plan) { return lane_latency<Shfl>(plan, "shfl.sync.bfly"); }

profile::Measured mma_latency(const Plan& plan) {
  const int n = plan.quick ? 4096 : 65536;
  const kernels::DeviceBuffer<std::uint32_t> sink(1);
  return per_step(
      plan, n, [&](std::uint64_t* cycles) { mma_chain_kernel<<<1, 32>>>(n, cycles, sink.get()); },
      "one warp, " + std::to_string(n) +
          " mma.sync m16n8k16 f16 each taking the previous accumulator, clock64 cycles per mma");
}

namespace {

// Cycles per block of one warp's chain of branch blocks B (limit as
// branch_block reads it), median over runs.
template <BranchBlock B>
profile::Measured branch_block_cycles(const Plan& plan, std::uint32_t limit, const std::string& what) {
  const int iters = (plan.quick ? 4096 : 65536) / kBranchUnroll;
  const int blocks = iters * kBranchUnroll;
  const kernels::DeviceBuffer<std::uint32_t> sink(1);
  return per_step(
      plan, blocks,
      [&](std::uint64_t* cycles) { branch_chain_kernel<B><<<1, 128>>>(iters, limit, cycles, sink.get()); },
      "one CTA of 4 warps (one per SM sub-partition), each " + std::to_string(blocks) + " blocks (" +
          std::to_string(kBranchUnroll) +
          " per loop iteration), each " + what + ", clock64 cycles per block");
}

std::string cycles_text(double v) { return profile::plain_decimal(v, 4) + " cycles"; }

}  // namespace

// The differences isolate the branch: not taken, it delays the FFMA chain
// behind it; a per-lane predicate adds the BSSY/BSYNC pair (and whatever the
// divergence-capable branch costs beyond a uniform one) to a taken branch.
BranchLatencies branch_latencies(const Plan& plan) {
  const std::string body = std::to_string(kBranchBody) + " dependent FFMA";
  const profile::Measured chain = branch_block_cycles<BranchBlock::ffma_only>(plan, 0, body + " (no branch)");
  const profile::Measured taken = branch_block_cycles<BranchBlock::uniform>(
      plan, 1, "a bra.uni on a warp-uniform predicate (from a kernel parameter: UISETP, @P BRA), taken over " + body);
  const profile::Measured not_taken = branch_block_cycles<BranchBlock::uniform>(
      plan, 0, "the same bra.uni not taken, then the " + body);
  const profile::Measured lane_taken = branch_block_cycles<BranchBlock::per_lane>(
      plan, 32,
      "a bra on a per-lane predicate (lane < a kernel parameter: BSSY, @P BRA, BSYNC), true in every lane, taken "
      "over " + body);
  BranchLatencies out;
  out.taken = taken;
  out.not_taken = {not_taken.value - chain.value,
                   not_taken.setup + ": " + cycles_text(not_taken.value) + " per block, minus " +
                       cycles_text(chain.value) + " per block of " + chain.setup};
  out.reconverge = {lane_taken.value - taken.value,
                    lane_taken.setup + ": " + cycles_text(lane_taken.value) + " per block, minus " +
                        cycles_text(taken.value) + " per block of the uniform taken branch (" + taken.setup + ")"};
  return out;
}

profile::Measured barrier_latency(const Plan& plan) {
  const int n = plan.quick ? 4096 : 65536;
  return per_step(
      plan, n, [&](std::uint64_t* cycles) { barrier_kernel<<<1, kThreads>>>(n, cycles); },
      "one CTA of " + std::to_string(kThreads / 32) + " warps, " + std::to_string(n) +
          " __syncthreads back to back, clock64 cycles per barrier");
}

}  // namespace iosim::calibrate::bench
