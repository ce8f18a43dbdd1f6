// Memory-system benchmarks: DRAM read, write and copy bandwidth, the read rate
// of short pieces far apart, L2 re-read
// bandwidth (all SMs, and one SM alone), and the L1 / L2 capacities from
// latency-bound working-set sweeps. Streaming kernels use 16-byte accesses
// and one wave of CTAs; every figure is the median of plan.runs timed runs
// after a warm-up run.
#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/calibrate/analysis.h"
#include "kernels/calibrate/bench_common.cuh"
#include "kernels/calibrate/benchmarks.h"

namespace iosim::calibrate::bench {
namespace {

constexpr int kStreamThreads = 512;
constexpr int kOneSmThreads = 1024;  // one CTA, the most one SM takes at once
constexpr int kOneSmLoads = 4;       // loads in flight per thread
constexpr int kChaseThreads = 1024;  // 32 warps, each one chain (lane 0 only)
constexpr i64 kLine = 128;           // bytes per chained line (one L2 line)
constexpr int kWarmPasses = 3;
constexpr double kMiB = 1024.0 * 1024.0;

__global__ void __launch_bounds__(kStreamThreads) stream_read(const uint4* __restrict__ src, i64 n,
                                                              std::uint32_t* sink) {
  std::uint32_t acc = 0;
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n; i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const uint4 v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7FC01234u) *sink = acc;
}

__global__ void __launch_bounds__(kStreamThreads) stream_write(uint4* __restrict__ dst, i64 n, uint4 value) {
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n; i += static_cast<i64>(gridDim.x) * blockDim.x)
    dst[i] = value;
}

// Copies `passes` times; thread 0 of each CTA records the CTA's span: the SM
// clock under DRAM load.
__global__ void __launch_bounds__(kStreamThreads) stream_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                              i64 n, int passes, WarpRecord* ctas) {
  const std::uint64_t g0 = global_ns(), c0 = clock_cycles();
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n; i += stride) dst[i] = src[i];
  if (threadIdx.x == 0) {
    const std::uint64_t c1 = clock_cycles(), g1 = global_ns();
    ctas[blockIdx.x] = span_record(c0, c1, g0, g1, 1);
  }
}

// DRAM reads of short pieces far apart (experiments/probes/dram_pieces_probe.cu,
// the same kernel): element i (16 B) is byte (i * 16) % piece of piece
// (i * 16) / piece, at piece * stride; 4 independent loads in flight per thread.
constexpr int kPieceThreads = 1024;
constexpr int kPieceLoads = 4;
constexpr i64 kPieceStride = 10240;

__device__ __forceinline__ i64 piece_offset(i64 i, int piece, i64 stride) {
  const i64 byte = i * 16;
  return byte / piece * stride + byte % piece;
}

__global__ void __launch_bounds__(kPieceThreads) read_pieces(const char* __restrict__ base, i64 elems, int piece,
                                                             i64 stride, std::uint32_t* sink) {
  std::uint32_t acc = 0;
  const i64 step = static_cast<i64>(gridDim.x) * kPieceThreads;
  for (i64 i = blockIdx.x * static_cast<i64>(kPieceThreads) + threadIdx.x; i < elems; i += kPieceLoads * step) {
    uint4 v[kPieceLoads];
#pragma unroll
    for (int u = 0; u < kPieceLoads; ++u)
      v[u] = i + u * step < elems ? __ldcg(reinterpret_cast<const uint4*>(base + piece_offset(i + u * step, piece, stride)))
                                  : uint4{0, 0, 0, 0};
#pragma unroll
    for (int u = 0; u < kPieceLoads; ++u) acc ^= v[u].x ^ v[u].w;
  }
  if (acc == 0x7FC01234u) *sink = acc;
}

__global__ void __launch_bounds__(kStreamThreads) l2_reread(const uint4* __restrict__ buf, i64 n, int passes,
                                                            std::uint32_t* sink) {
  std::uint32_t acc = 0;
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n; i += stride) {
      const uint4 v = ld_cg_v4(buf + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (acc == 0x7FC01234u) *sink = acc;
}

// Stores into lines the L2 holds: CTA c of kStoreChunkThreads threads stores
// chunk c mod `chunks` (kStoreChunkBytes each), every thread its 16-byte
// stores back to back, values that differ by CTA and thread. This shape
// takes in 4.75 TB/s on an H200 where a one-wave grid-stride loop of one
// store per iteration reaches 3.95 (experiments/results/2026-12-02-h200-l2-write;
// zeros or not makes no difference).
constexpr int kStoreChunkThreads = 256;
constexpr i64 kStoreChunkBytes = 32768;
__global__ void __launch_bounds__(kStoreChunkThreads) l2_store_chunks(uint4* __restrict__ buf, i64 chunks) {
  constexpr int kPerThread = static_cast<int>(kStoreChunkBytes / 16 / kStoreChunkThreads);
  const i64 base = (static_cast<i64>(blockIdx.x) % chunks) * (kStoreChunkBytes / 16);
  const std::uint32_t v = blockIdx.x * 2654435761u + threadIdx.x;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) buf[base + i * kStoreChunkThreads + threadIdx.x] = make_uint4(v, v, v, v);
}

// One CTA re-reads n 16-byte elements (n a multiple of kOneSmThreads x
// kOneSmLoads) `passes` times, kOneSmLoads loads in flight per thread; each
// warp records its span and bytes.
__global__ void __launch_bounds__(kOneSmThreads) one_sm_reread(const uint4* __restrict__ buf, i64 n, int passes,
                                                               WarpRecord* warps, std::uint32_t* sink) {
  std::uint32_t acc = 0;
  __syncthreads();
  const std::uint64_t g0 = global_ns(), c0 = clock_cycles();
  for (int p = 0; p < passes; ++p)
    for (i64 i = threadIdx.x; i < n; i += kOneSmThreads * kOneSmLoads) {
      uint4 v[kOneSmLoads];
#pragma unroll
      for (int k = 0; k < kOneSmLoads; ++k) v[k] = ld_cg_v4(buf + i + k * kOneSmThreads);
#pragma unroll
      for (int k = 0; k < kOneSmLoads; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
  __shared__ std::uint32_t seen[kOneSmThreads];
  seen[threadIdx.x] = acc;  // waits for the last loads before the clock is read
  const std::uint64_t c1 = clock_cycles(), g1 = global_ns();
  if ((threadIdx.x & 31) == 0)
    warps[threadIdx.x / 32] =
        span_record(c0, c1, g0, g1, static_cast<std::uint64_t>(passes) * static_cast<std::uint64_t>(n / kOneSmThreads) * 32 * 16);
  if (seen[threadIdx.x] == 0x7FC01234u) *sink = acc;
}

// red.global.add.v2.f32 as FA2 backward's dQ reduction issues it (one mma
// fragment per warp instruction: lane l adds two floats at row l / 4, columns
// 2 (l % 4), 2 (l % 4) + 1 of an 8 x 8 block; rows kRedRowFloats floats
// apart, the fp32 dQ row at d = 128): 8 rows of 32 B, 256 B per instruction.
// Each warp walks its own 8-row bands of the CTA's `rows` rows, kRedBlocks
// blocks across each band per iteration (independent: reductions return
// nothing), `passes` times over the CTA's region (CTA c: rows [c rows,
// (c + 1) rows)). Thread 0 of each warp records its span.
constexpr int kRedThreads = 256;   // 8 warps, FA2 backward's CTA
constexpr int kRedRowFloats = 128;
constexpr int kRedBlocks = kRedRowFloats / 8;
__global__ void __launch_bounds__(kRedThreads) sm_reduce(float* buf, i64 rows, int passes, WarpRecord* warps) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int nwarps = kRedThreads / 32;
  float* region = buf + static_cast<i64>(blockIdx.x) * rows * kRedRowFloats;
  const i64 bands = rows / 8;
  __syncthreads();
  const std::uint64_t g0 = global_ns(), c0 = clock_cycles();
  for (int p = 0; p < passes; ++p)
    for (i64 band = warp; band < bands; band += nwarps) {
      float* row = region + (band * 8 + lane / 4) * kRedRowFloats + 2 * (lane % 4);
#pragma unroll
      for (int k = 0; k < kRedBlocks; ++k)
        asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(row + 8 * k), "f"(1.0f), "f"(0.5f) : "memory");
    }
  __syncthreads();  // every warp's reductions issued (they complete in L2 on their own)
  const std::uint64_t c1 = clock_cycles(), g1 = global_ns();
  if (lane == 0)
    warps[blockIdx.x * nwarps + warp] =
        span_record(c0, c1, g0, g1, static_cast<std::uint64_t>(passes) * static_cast<std::uint64_t>(bands) * 256 * kRedBlocks / nwarps);
}

// A burst of k reductions per warp, as above, all 8 warps of one CTA at once
// after a barrier: each warp's clock64 before its first and after its last
// (the clock is read once the last has left the warp for the SM's queue).
__global__ void __launch_bounds__(kRedThreads) sm_reduce_burst(float* buf, int k, WarpRecord* warps) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  float* band = buf + (static_cast<i64>(warp) * 8 + lane / 4) * kRedRowFloats + 2 * (lane % 4);
  __syncthreads();
  const std::uint64_t g0 = global_ns(), c0 = clock_cycles();
  for (int j = 0; j < k; ++j)
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(band + (j / kRedBlocks) * 64 * kRedRowFloats + 8 * (j % kRedBlocks)),
                 "f"(1.0f), "f"(0.5f)
                 : "memory");
  const std::uint64_t c1 = clock_cycles(), g1 = global_ns();
  if (lane == 0) warps[warp] = span_record(c0, c1, g0, g1, static_cast<std::uint64_t>(k) * 256);
}

// Global stores from one SM, in two warp-instruction forms (kStoreThreads,
// 8 warps; every store independent, into L2-resident rows of
// kStoreRowWords 4-byte words, 256 B: d = 128 in fp16):
//   fragment: st.global.b32 as an MMA fragment is written out (FA3's O, FA2's
//     accumulators): lane l at row l / 4, word l % 4 of a 16-byte column
//     block, so one instruction writes 8 rows x 16 B (8 lines, 8 sectors);
//     a warp walks its 8-row bands, the row's 16 column blocks per iteration;
//   contiguous: st.global.v4.b32, 16 B per lane, 512 contiguous bytes (4
//     lines), as the tile copies write staged rows.
// Thread 0 of each warp records its span and bytes.
constexpr int kStoreThreads = 256;
constexpr int kStoreRowWords = 64;
constexpr int kStoreBlocks = kStoreRowWords / 4;
template <bool Fragment>
__device__ __forceinline__ void store_one(std::uint32_t* band, int lane, int k) {
  if constexpr (Fragment) {
    asm volatile("st.global.b32 [%0], %1;\n" ::"l"(band + (lane / 4) * kStoreRowWords + 4 * k + lane % 4), "r"(k)
                 : "memory");
  } else {
    asm volatile("st.global.v4.b32 [%0], {%1, %1, %1, %1};\n" ::"l"(band + 4 * (k * 32 + lane)), "r"(k) : "memory");
  }
}
template <bool Fragment>
__global__ void __launch_bounds__(kStoreThreads) sm_store(std::uint32_t* buf, i64 rows, int passes, WarpRecord* warps) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int nwarps = kStoreThreads / 32;
  const i64 bands = rows / 8;  // 8 rows = 2 KiB: one fragment band, or 4 contiguous instructions' worth
  __syncthreads();
  const std::uint64_t g0 = global_ns(), c0 = clock_cycles();
  for (int p = 0; p < passes; ++p)
    for (i64 band = warp; band < bands; band += nwarps) {
      std::uint32_t* b = buf + band * 8 * kStoreRowWords;
#pragma unroll
      for (int k = 0; k < (Fragment ? kStoreBlocks : kStoreBlocks / 4); ++k) store_one<Fragment>(b, lane, k);
    }
  __syncthreads();  // every warp's stores issued
  const std::uint64_t c1 = clock_cycles(), g1 = global_ns();
  if (lane == 0)
    warps[warp] = span_record(c0, c1, g0, g1,
                              static_cast<std::uint64_t>(passes) * static_cast<std::uint64_t>(bands) * 2048 / nwarps);
}

// A burst of k fragment stores per warp, all 8 warps of one CTA at once after
// a barrier: each warp's clock64 before its first and after its last.
__global__ void __launch_bounds__(kStoreThreads) sm_store_burst(std::uint32_t* buf, int k, WarpRecord* warps) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  __syncthreads();
  const std::uint64_t g0 = global_ns(), c0 = clock_cycles();
  for (int j = 0; j < k; ++j)
    store_one<true>(buf + (static_cast<i64>(warp) * 64 + j / kStoreBlocks * 8) * kStoreRowWords, lane, j % kStoreBlocks);
  const std::uint64_t c1 = clock_cycles(), g1 = global_ns();
  if (lane == 0) warps[warp] = span_record(c0, c1, g0, g1, static_cast<std::uint64_t>(k) * 128);
}

// Reads a buffer in chunks, each chunk `reuse` times (see L2Flush).
__global__ void __launch_bounds__(kStreamThreads) flush_chunks(const uint4* __restrict__ buf, i64 n, i64 chunk,
                                                               int reuse, std::uint32_t* sink) {
  std::uint32_t acc = 0;
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 base = 0; base < n; base += chunk)
    for (int r = 0; r < reuse; ++r)
      for (i64 i = base + blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < base + chunk && i < n; i += stride) {
        const uint4 v = ld_cg_v4(buf + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      }
  if (acc == 0x7FC01234u) *sink = acc;
}

// Lane 0 of each warp chases its share of `lines` 128-byte lines (lines
// w, w + W, w + 2W, ... for warp w of W), one dependent load at a time: the
// next address adds `guard`, 0 in practice (the buffer holds zeros) but only
// known once the load returns. A cold pass, then kWarmPasses warm ones, each
// timed with clock64; storing `guard` before reading the clock makes the clock
// wait for the pass's last load. kL1: .ca loads in one CTA, after reading
// `evict` (more than the L1) twice to empty the CTA's L1. No shared memory, so
// that the smallest carve-out leaves the whole unified L1 to caching.
template <bool kL1>
__global__ void __launch_bounds__(kChaseThreads) resident_chase(const std::uint32_t* buf, i64 lines,
                                                                const std::uint32_t* evict, i64 evict_lines,
                                                                ChaseRecord* out) {
  const i64 chains = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
  const i64 chain = static_cast<i64>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  volatile std::uint64_t* last = &out[chain].passes;
  if (kL1) {
    std::uint32_t acc = 0;
    for (int r = 0; r < 2; ++r)
      for (i64 l = threadIdx.x; l < evict_lines; l += blockDim.x) acc ^= ld_ca(evict + l * (kLine / 4));
    if (acc == 0x7FC01234u) *last = acc;
  }
  __syncthreads();
  if ((threadIdx.x & 31) != 0) return;
  std::uint32_t guard = 0;
  auto pass = [&]() {
    std::uint64_t n = 0;
    for (i64 k = chain; k < lines; k += chains, ++n) {
      const std::uint32_t* p = buf + k * (kLine / 4) + guard;
      const std::uint32_t v = kL1 ? ld_ca(p) : ld_cg(p);
      guard = v == 0x7FC01234u ? 1u : 0u;
    }
    *last = guard;
    return n;
  };
  const std::uint64_t c0 = clock_cycles();
  const std::uint64_t n = pass();
  const std::uint64_t c1 = clock_cycles();
  for (int p = 0; p < kWarmPasses; ++p) pass();
  const std::uint64_t c2 = clock_cycles();
  ChaseRecord r;
  r.cold_cycles = c1 - c0;
  r.warm_cycles = c2 - c1;
  r.accesses = n;
  r.passes = kWarmPasses;
  out[chain] = r;
}

std::string mib(double bytes) { return profile::plain_decimal(bytes / kMiB, 4) + " MiB"; }

// Median of plan.runs timings (ms) after one warm-up.
template <class Launch>
double median_ms(const Plan& plan, Launch&& launch) {
  std::vector<double> t;
  for (int r = -1; r < plan.runs; ++r) {
    const float ms = time_ms(launch);
    if (r >= 0) t.push_back(ms);
  }
  return profile::median(t);
}

// One point of a resident sweep: median over plan.runs of the cold and warm
// per-access latencies, `before` run ahead of each (the flush).
template <bool kL1, class Before>
SweepPoint chase_point(const Plan& plan, int grid, const kernels::DeviceBuffer<std::uint32_t>& buf, i64 working_set,
                       const std::uint32_t* evict, i64 evict_lines, Before&& before) {
  kernels::DeviceBuffer<ChaseRecord> records(static_cast<std::size_t>(grid) * (kChaseThreads / 32));
  std::vector<double> cold, warm;
  for (int r = 0; r < plan.runs; ++r) {
    before();
    resident_chase<kL1><<<grid, kChaseThreads>>>(buf.get(), working_set / kLine, evict, evict_lines, records.get());
    IOSIM_CUDA_CHECK_LAUNCH();
    IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
    const SweepPoint p = sweep_point(working_set, records.download());
    cold.push_back(p.cold);
    warm.push_back(p.warm);
  }
  return {working_set, profile::median(cold), profile::median(warm)};
}

// Each point as a log line: the per-access latencies and what they imply.
void log_points(const Plan& plan, const char* what, const std::vector<SweepPoint>& points) {
  if (plan.log == nullptr) return;
  const double hit = points.front().warm;
  for (const SweepPoint& p : points) {
    const double fraction = (p.cold - p.warm) / (p.cold - hit);
    *plan.log << "    " << what << " working set " << mib(static_cast<double>(p.working_set)) << ": cold "
              << profile::plain_decimal(p.cold, 4) << ", warm " << profile::plain_decimal(p.warm, 4)
              << " cycles per load, hit fraction " << profile::plain_decimal(fraction, 3) << "\n";
  }
}

// base x 2^(k/8) for k = first, first + step, ..., last, in whole lines.
std::vector<i64> geometric_sizes(double base, int first, int last, int step) {
  std::vector<i64> out;
  for (int k = first; k <= last; k += step)
    out.push_back(static_cast<i64>(base * std::exp2(k / 8.0)) / kLine * kLine);
  return out;
}

}  // namespace

L2Flush::L2Flush(i64 l2_bytes) {
  int device = 0;
  IOSIM_CUDA_CHECK(cudaGetDevice(&device));
  IOSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  const i64 bytes = std::max<i64>(i64{512} << 20, 8 * l2_bytes);
  buffer_ = kernels::DeviceBuffer<uint4>(static_cast<std::size_t>(bytes / 16));
  buffer_.fill_bytes(0x11);
  sink_ = kernels::DeviceBuffer<std::uint32_t>(1);
  chunk_ = l2_bytes / 2 / 16;
}

void L2Flush::run() const {
  const int grid = one_wave_grid(flush_chunks, kStreamThreads, sm_count_);
  flush_chunks<<<grid, kStreamThreads>>>(buffer_.get(), static_cast<i64>(buffer_.size()), chunk_, 3, sink_.get());
  IOSIM_CUDA_CHECK_LAUNCH();
}

DramRates dram_rates(const Plan& plan) {
  const i64 n = plan.dram_bytes / 16;
  kernels::DeviceBuffer<uint4> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
  kernels::DeviceBuffer<std::uint32_t> sink(1);
  a.fill_bytes(0x5A);
  b.fill_bytes(0);
  const int grid = one_wave_grid(stream_copy, kStreamThreads, plan.sm_count);
  kernels::DeviceBuffer<WarpRecord> ctas(static_cast<std::size_t>(grid));
  const double bytes = static_cast<double>(plan.dram_bytes);
  DramRates out;
  out.read = bytes / 1e-3 / median_ms(plan, [&] { stream_read<<<grid, kStreamThreads>>>(a.get(), n, sink.get()); });
  const uint4 value{0x3C003C00u, 0x12345678u, 0x9ABCDEF0u, 0x0F1E2D3Cu};
  out.write = bytes / 1e-3 / median_ms(plan, [&] { stream_write<<<grid, kStreamThreads>>>(b.get(), n, value); });
  const double copy_ms =
      median_ms(plan, [&] { stream_copy<<<grid, kStreamThreads>>>(a.get(), b.get(), n, 1, ctas.get()); });
  out.copy = 2 * bytes / 1e-3 / copy_ms;
  // The clock: one launch copying for about plan.pipe_ns, so that the host's launch and wake-up time are small.
  const int passes = static_cast<int>(std::max(1.0, std::ceil(static_cast<double>(plan.pipe_ns) / (copy_ms * 1e6))));
  const double wall =
      wall_ns([&] { stream_copy<<<grid, kStreamThreads>>>(a.get(), b.get(), n, passes, ctas.get()); });
  const profile::PipeRate clock = pipe_rate(ctas.download(), wall);
  out.copy_clock_hz = clock.clock_hz;
  out.copy_timer_clock_hz = clock.timer_clock_hz;
  out.clock_setup = "one launch copying " + mib(bytes) + " " + std::to_string(passes) + " times";
  out.setup = "16 B per thread, " + std::to_string(grid / plan.sm_count) + " CTAs x " +
              std::to_string(kStreamThreads) + " threads per SM (one wave)";
  return out;
}

DramPieces dram_pieces(const Plan& plan) {
  // The probe's sizes: up to 1 GiB of pieces per launch within an address span of 24 GiB (at most half the
  // free memory), each launch after an L2 flush, so every piece comes from DRAM once. A quick run keeps
  // them: with a 4 GiB span the 32-byte pieces were 13 MB a launch and the events' overhead showed (0.20
  // of the stream on an H200 where the full span gives 0.27).
  std::size_t free_bytes = 0, total_bytes = 0;
  IOSIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const i64 span = std::min<i64>(i64{24} << 30, static_cast<i64>(free_bytes) / 2) / (i64{1} << 20) * (i64{1} << 20);
  kernels::DeviceBuffer<uint4> buf(static_cast<std::size_t>(span / 16));
  kernels::DeviceBuffer<std::uint32_t> sink(1);
  buf.fill_bytes(0x5A);
  const L2Flush flush(plan.l2_bytes);
  const int grid = one_wave_grid(read_pieces, kPieceThreads, plan.sm_count, 2);
  const char* base = reinterpret_cast<const char*>(buf.get());
  auto rate = [&](int piece, i64 stride) {
    i64 bytes = std::min<i64>(i64{1} << 30, span);
    while (bytes / piece * stride > span) bytes /= 2;
    std::vector<double> t;
    for (int r = 0; r < plan.runs; ++r) {
      flush.run();
      t.push_back(time_ms([&] { read_pieces<<<grid, kPieceThreads>>>(base, bytes / 16, piece, stride, sink.get()); }));
    }
    return static_cast<double>(bytes) / (profile::median(t) * 1e-3);
  };
  DramPieces out;
  out.stream = rate(4096, 4096);
  const int pieces[4] = {32, 64, 128, 256};
  for (int k = 0; k < 4; ++k) out.piece[static_cast<std::size_t>(k)] = rate(pieces[k], kPieceStride);
  out.setup = "all SMs (" + std::to_string(grid / plan.sm_count) + " CTAs x " + std::to_string(kPieceThreads) +
              " threads, " + std::to_string(kPieceLoads) + " 16-byte ld.global.cg in flight per thread) reading up to " +
              "1 GiB of pieces " + std::to_string(kPieceStride) + " bytes apart within " + mib(static_cast<double>(span)) +
              " after an L2 flush, median of " + std::to_string(plan.runs) +
              " launches (CUDA events), against a stream of the same kernel";
  return out;
}

L2Read l2_read_bandwidth(const Plan& plan) {
  const int grid = one_wave_grid(l2_reread, kStreamThreads, plan.sm_count);
  kernels::DeviceBuffer<uint4> buf(static_cast<std::size_t>(plan.l2_bytes / 2 / 16));
  kernels::DeviceBuffer<std::uint32_t> sink(1);
  buf.fill_bytes(0x5A);
  L2Read best;
  for (const i64 ws : {plan.l2_bytes / 4, plan.l2_bytes / 2}) {
    const i64 n = ws / 16;
    const int passes = static_cast<int>(std::max<i64>(1, plan.l2_read_bytes / ws));
    const double t = median_ms(plan, [&] { l2_reread<<<grid, kStreamThreads>>>(buf.get(), n, passes, sink.get()); });
    const double rate = static_cast<double>(ws) * passes / (t * 1e-3);
    if (rate > best.bytes_per_s) best = {rate, ws, ""};
  }
  best.setup = "all SMs re-reading a working set of a quarter and of half the L2 (the better kept) with 16 B "
               "ld.global.cg, " + std::to_string(grid / plan.sm_count) + " CTAs x " + std::to_string(kStreamThreads) +
               " threads per SM, " + mib(static_cast<double>(plan.l2_read_bytes)) + " read per run";
  return best;
}

L2Read l2_write_bandwidth(const Plan& plan) {
  // An eighth of the L2: well inside the dirty limit of every GPU measured
  // (H100, H200: about half the L2), so no store leads to a DRAM write-back.
  const i64 chunks = std::max<i64>(1, plan.l2_bytes / 8 / kStoreChunkBytes);
  const i64 ws = chunks * kStoreChunkBytes;
  kernels::DeviceBuffer<uint4> buf(static_cast<std::size_t>(ws / 16));
  buf.fill_bytes(0x5A);
  const i64 ctas = std::max<i64>(chunks, plan.l2_read_bytes / kStoreChunkBytes / chunks * chunks);
  l2_store_chunks<<<static_cast<unsigned>(chunks), kStoreChunkThreads>>>(buf.get(), chunks);  // into L2
  IOSIM_CUDA_CHECK_LAUNCH();
  const double t =
      median_ms(plan, [&] { l2_store_chunks<<<static_cast<unsigned>(ctas), kStoreChunkThreads>>>(buf.get(), chunks); });
  L2Read out{static_cast<double>(ctas * kStoreChunkBytes) / (t * 1e-3), ws, ""};
  out.setup = "all SMs storing into an L2-resident working set of an eighth of the L2 (" + mib(static_cast<double>(ws)) +
              ", inside the dirty limit: no write-backs): CTAs of " + std::to_string(kStoreChunkThreads) +
              " threads, each storing a " + std::to_string(kStoreChunkBytes / 1024) +
              " KiB chunk with 16 B st.global, 8 back to back per thread, " +
              mib(static_cast<double>(ctas * kStoreChunkBytes)) + " stored per run";
  return out;
}

profile::Measured l2_load_one_sm(const Plan& plan) {
  constexpr i64 kStep = static_cast<i64>(kOneSmThreads) * kOneSmLoads;
  const i64 ws = std::min<i64>(i64{16} << 20, plan.l2_bytes / 4) / 16 / kStep * kStep * 16;
  const i64 n = ws / 16;
  const int passes = static_cast<int>(std::max<i64>(1, (plan.quick ? i64{64} << 20 : i64{512} << 20) / ws));
  kernels::DeviceBuffer<uint4> buf(static_cast<std::size_t>(n));
  kernels::DeviceBuffer<std::uint32_t> sink(1);
  kernels::DeviceBuffer<WarpRecord> warps(kOneSmThreads / 32);
  buf.fill_bytes(0x5A);
  const int grid = one_wave_grid(l2_reread, kStreamThreads, plan.sm_count);
  l2_reread<<<grid, kStreamThreads>>>(buf.get(), n, 2, sink.get());  // into L2
  IOSIM_CUDA_CHECK_LAUNCH();
  std::vector<double> rates;
  for (int r = -1; r < plan.runs; ++r) {
    const double wall =
        wall_ns([&] { one_sm_reread<<<1, kOneSmThreads>>>(buf.get(), n, passes, warps.get(), sink.get()); });
    if (r >= 0) rates.push_back(pipe_rate(warps.download(), wall).per_cycle);
  }
  return {profile::median(rates),
          "one CTA of " + std::to_string(kOneSmThreads) + " threads (one SM) re-reading an L2-resident " +
              mib(static_cast<double>(ws)) + " with 16 B ld.global.cg, " + std::to_string(kOneSmLoads) +
              " loads in flight per thread, " + std::to_string(passes) + " passes per run, median of " +
              std::to_string(plan.runs) + ": bytes / clock64 cycles"};
}

// The median, over plan.runs launches after one warm-up, of the longest span
// (clock64 cycles) that one launch's warps record into `warps`: how long a
// one-CTA burst takes until its last warp has issued its last instruction.
template <class Launch>
double median_longest_span(const Plan& plan, kernels::DeviceBuffer<WarpRecord>& warps, Launch launch) {
  std::vector<double> cycles;
  for (int r = -1; r < plan.runs; ++r) {
    launch();
    IOSIM_CUDA_CHECK_LAUNCH();
    IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
    double longest = 0;
    for (const WarpRecord& w : warps.download()) longest = std::max(longest, static_cast<double>(w.clk1 - w.clk0));
    if (r >= 0) cycles.push_back(longest);
  }
  return profile::median(cycles);
}

RedRates l2_reduce_rates(const Plan& plan) {
  const int nwarps = kRedThreads / 32;
  const i64 per_pass = 8 * nwarps;  // rows: one band per warp
  RedRates out;
  for (const bool all : {false, true}) {
    const int grid = all ? plan.sm_count : 1;
    // The grid's rows within a quarter of the L2 (at most 2 MiB per CTA), the
    // same bytes reduced per CTA either way.
    const i64 fit = plan.l2_bytes / 4 / (grid * kRedRowFloats * 4) / per_pass * per_pass;
    const i64 rows = std::max(per_pass, std::min<i64>(4096, fit));
    const int passes = static_cast<int>((plan.quick ? 8 : 64) * 4096 / rows);
    kernels::DeviceBuffer<float> buf(static_cast<std::size_t>(grid * rows * kRedRowFloats));
    kernels::DeviceBuffer<WarpRecord> warps(static_cast<std::size_t>(grid * nwarps));
    buf.fill_bytes(0);
    sm_reduce<<<grid, kRedThreads>>>(buf.get(), rows, 1, warps.get());  // into L2
    IOSIM_CUDA_CHECK_LAUNCH();
    std::vector<double> rates;
    for (int r = -1; r < plan.runs; ++r) {
      const double wall = wall_ns([&] { sm_reduce<<<grid, kRedThreads>>>(buf.get(), rows, passes, warps.get()); });
      // pipe_rate: per SM, its warps' bytes over their joint span; the median over SMs.
      if (r >= 0) rates.push_back(pipe_rate(warps.download(), wall).per_cycle);
    }
    (all ? out.all_sms : out.one_sm) = profile::median(rates);
  }
  // The SM's queue: bursts of k reductions per warp (8 warps) into L2-resident
  // rows; the cycles until the last warp has issued its last. Past the queue
  // the burst issues at the drain rate, so queue = bytes - rate x cycles at
  // the longest burst (the rate: one SM alone, measured above).
  {
    const int nw = kRedThreads / 32;
    kernels::DeviceBuffer<float> buf(static_cast<std::size_t>(i64{4096} * kRedRowFloats));
    kernels::DeviceBuffer<WarpRecord> warps(static_cast<std::size_t>(nw));
    buf.fill_bytes(0);
    std::string points;
    for (const int k : {4, 8, 16, 32, 64, 128}) {
      const double c =
          median_longest_span(plan, warps, [&] { sm_reduce_burst<<<1, kRedThreads>>>(buf.get(), k, warps.get()); });
      const double bytes = 256.0 * k * nw;
      out.burst_cycles.push_back({bytes, c});
      points += (points.empty() ? "" : ", ") + profile::plain_decimal(bytes / 1024, 4) + " KiB in " + std::to_string(static_cast<long long>(c)) + " cycles";
      if (k == 128) out.queue_bytes = std::max(0.0, bytes - out.one_sm * c);
    }
    out.burst_setup = "one CTA of " + std::to_string(nw) + " warps, each a burst of k = 4..128 reductions (as above) "
                      "right after a barrier; the cycles until the last warp issued its last, median of " +
                      std::to_string(plan.runs) + ": " + points;
  }
  out.setup = "CTAs of " + std::to_string(kRedThreads) + " threads, each warp issuing red.global.add.v2.f32 as "
              "FA2 backward's dQ reduction does (per instruction 8 rows x 32 B of an fp32 row of " +
              std::to_string(kRedRowFloats * 4) + " B, 256 B), " + std::to_string(kRedBlocks) +
              " independent per iteration, into L2-resident rows (one SM: 2 MiB; every SM: a quarter of the L2 "
              "between them), " + std::to_string(plan.quick ? 8 : 64) + " x 2 MiB reduced per CTA and run, median of " +
              std::to_string(plan.runs) +
              ": bytes per SM / clock64 cycles";
  return out;
}

StoreRates sm_store_rates(const Plan& plan) {
  const int nwarps = kStoreThreads / 32;
  const i64 rows = 8192;  // 2 MiB, L2-resident
  const int passes = plan.quick ? 4 : 32;
  kernels::DeviceBuffer<std::uint32_t> buf(static_cast<std::size_t>(rows * kStoreRowWords));
  kernels::DeviceBuffer<WarpRecord> warps(static_cast<std::size_t>(nwarps));
  buf.fill_bytes(0);
  StoreRates out;
  auto rate = [&](auto kernel) {
    kernel<<<1, kStoreThreads>>>(buf.get(), rows, 1, warps.get());  // into L2
    IOSIM_CUDA_CHECK_LAUNCH();
    std::vector<double> rates;
    for (int r = -1; r < plan.runs; ++r) {
      const double wall = wall_ns([&] { kernel<<<1, kStoreThreads>>>(buf.get(), rows, passes, warps.get()); });
      if (r >= 0) rates.push_back(pipe_rate(warps.download(), wall).per_cycle);
    }
    return profile::median(rates);
  };
  out.fragment_inst = rate(sm_store<true>) / 128;    // bytes per cycle over 128 B per instruction
  out.contiguous_inst = rate(sm_store<false>) / 512;  // over 512 B
  std::string points;
  for (const int k : {4, 8, 16, 32, 64, 128}) {
    const double c =
        median_longest_span(plan, warps, [&] { sm_store_burst<<<1, kStoreThreads>>>(buf.get(), k, warps.get()); });
    const double inst = static_cast<double>(k) * nwarps;
    points += (points.empty() ? "" : ", ") + std::to_string(static_cast<long long>(inst)) + " in " +
              std::to_string(static_cast<long long>(c)) + " cycles";
    if (k == 128) out.queue_inst = std::max(0.0, inst - out.fragment_inst * c);
  }
  out.setup = "one CTA of " + std::to_string(kStoreThreads) + " threads (one SM), every warp storing into L2-resident "
              "rows of " + std::to_string(kStoreRowWords * 4) + " B (2 MiB), " + std::to_string(passes) +
              " passes, independent stores, median of " + std::to_string(plan.runs) +
              ": warp store instructions / clock64 cycles";
  out.burst_setup = "one CTA of " + std::to_string(nwarps) + " warps, each a burst of k = 4..128 fragment stores "
                    "right after a barrier; the cycles until the last warp issued its last, median of " +
                    std::to_string(plan.runs) + ": " + points;
  return out;
}

profile::ResidentSweep l2_resident_sweep(const Plan& plan, const L2Flush& flush) {
  const std::vector<i64> sizes = geometric_sizes(static_cast<double>(plan.l2_bytes), -16, 16, plan.sweep_step_eighths);
  kernels::DeviceBuffer<std::uint32_t> buf(static_cast<std::size_t>(sizes.back() / 4));
  buf.fill_bytes(0);
  const int grid = one_wave_grid(resident_chase<false>, kChaseThreads, plan.sm_count, 1);
  std::vector<SweepPoint> points;
  for (const i64 ws : sizes)
    points.push_back(chase_point<false>(plan, grid, buf, ws, nullptr, 0, [&] { flush.run(); }));
  log_points(plan, "L2", points);
  profile::ResidentSweep out = resident_capacity(points);
  out.setup = "all SMs, " + std::to_string(grid / plan.sm_count) + " CTA x " + std::to_string(kChaseThreads / 32) +
              " warps per SM, one lane per warp chasing its share of the 128 B lines with dependent ld.global.cg; "
              "per working set, median of " + std::to_string(plan.runs) + ": a flush (" +
              mib(static_cast<double>(flush.bytes())) + " read in half-L2 chunks, each three times), a cold pass, " +
              std::to_string(kWarmPasses) + " warm passes";
  return out;
}

profile::ResidentSweep l1_resident_sweep(const Plan& plan) {
  const std::vector<i64> sizes = geometric_sizes(64.0 * 1024, 0, 24, plan.sweep_step_eighths);
  const i64 evict_bytes = i64{2} << 20;
  kernels::DeviceBuffer<std::uint32_t> buf(static_cast<std::size_t>(sizes.back() / 4));
  kernels::DeviceBuffer<std::uint32_t> evict(static_cast<std::size_t>(evict_bytes / 4));
  buf.fill_bytes(0);
  evict.fill_bytes(0);
  // The smallest shared-memory carve-out: as much of the unified L1 as the SM gives to caching.
  IOSIM_CUDA_CHECK(cudaFuncSetAttribute(resident_chase<true>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  std::vector<SweepPoint> points;
  for (const i64 ws : sizes)
    points.push_back(chase_point<true>(plan, 1, buf, ws, evict.get(), evict_bytes / kLine, [] {}));
  log_points(plan, "L1", points);
  profile::ResidentSweep out = resident_capacity(points);
  out.setup = "one CTA of " + std::to_string(kChaseThreads / 32) +
              " warps, one lane per warp chasing its share of the 128 B lines with dependent ld.global.ca; per "
              "working set, median of " + std::to_string(plan.runs) + ": " + mib(static_cast<double>(evict_bytes)) +
              " read twice to empty the L1, a cold pass, " + std::to_string(kWarmPasses) + " warm passes";
  return out;
}

}  // namespace iosim::calibrate::bench
