// Device and host helpers shared by the calibrate microbenchmarks: the
// clocks, cache-operator loads, a duration-bounded timed loop that writes a
// WarpRecord, one-wave grids and CUDA-event timing.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <vector>

#include "kernels/calibrate/records.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"

namespace iosim::calibrate {

__device__ __forceinline__ std::uint64_t clock_cycles() {
  std::uint64_t c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
  return c;
}
__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ std::uint32_t sm_id() {
  std::uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
// Loads that cache in L2 only (.cg) or in L1 too (.ca); volatile so that a
// benchmark's loads are neither merged nor dropped.
__device__ __forceinline__ std::uint32_t ld_cg(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t ld_ca(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint4 ld_cg_v4(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// A record of a span timed on this SM.
__device__ __forceinline__ WarpRecord span_record(std::uint64_t c0, std::uint64_t c1, std::uint64_t g0,
                                                  std::uint64_t g1, std::uint64_t work) {
  WarpRecord r;
  r.smid = sm_id();
  r.clk0 = c0;
  r.clk1 = c1;
  r.gt0 = g0;
  r.gt1 = g1;
  r.work = work;
  return r;
}

// The CTA's warps start together, then run `body` in blocks of kUnroll until
// `still_timing(elapsed_ns)` says stop, each warp writing its WarpRecord at
// records[global warp] (lane 0), work = iterations x work_per_iteration.
template <int kUnroll, class Body, class StillTiming>
__device__ __forceinline__ void timed_loop_until(WarpRecord* records, std::uint64_t work_per_iteration, Body&& body,
                                                 StillTiming&& still_timing) {
  __syncthreads();
  const std::uint64_t g0 = global_ns();
  const std::uint64_t c0 = clock_cycles();
  std::uint64_t iterations = 0;
  bool more = true;
  while (more) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) body();
    iterations += kUnroll;
    more = still_timing(global_ns() - g0);
  }
  const std::uint64_t c1 = clock_cycles();
  const std::uint64_t g1 = global_ns();
  if ((threadIdx.x & 31) == 0)
    records[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = span_record(c0, c1, g0, g1, iterations * work_per_iteration);
}

// Each warp runs until `duration_ns` of %globaltimer have passed since it
// started; lane 0 decides for the whole warp, so warp-synchronous bodies
// (mma.sync, ldmatrix) stay converged.
template <int kUnroll, class Body>
__device__ __forceinline__ void timed_loop(WarpRecord* records, std::uint64_t duration_ns,
                                           std::uint64_t work_per_iteration, Body&& body) {
  timed_loop_until<kUnroll>(records, work_per_iteration, body, [duration_ns](std::uint64_t elapsed) {
    return __shfl_sync(0xffffffffu, elapsed < duration_ns, 0);
  });
}

// timed_loop for bodies the CTA's warps must run the same number of times
// (wgmma is warpgroup-collective: every warp of the warpgroup issues each
// one): thread 0 decides for the whole CTA, through a barrier per check.
template <int kUnroll, class Body>
__device__ __forceinline__ void timed_loop_cta(WarpRecord* records, std::uint64_t duration_ns,
                                               std::uint64_t work_per_iteration, Body&& body) {
  timed_loop_until<kUnroll>(records, work_per_iteration, body, [duration_ns](std::uint64_t elapsed) {
    return __syncthreads_or(threadIdx.x == 0 && elapsed < duration_ns) != 0;
  });
}

// Host: a grid of as many CTAs of `threads` as fit on every SM at once (at
// most max_per_sm each): one wave, so every CTA runs for the whole kernel.
template <class Kernel>
int one_wave_grid(Kernel kernel, int threads, int sm_count, int max_per_sm = INT_MAX, std::size_t smem = 0) {
  int per_sm = 0;
  IOSIM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  if (per_sm < 1) throw kernels::CudaError("calibrate: a benchmark kernel cannot be resident with " +
                                           std::to_string(threads) + " threads");
  return sm_count * std::min(per_sm, max_per_sm);
}

// Nanoseconds of the host's monotonic clock from just before `launch()` on an
// idle device to the end of its work: the time base of the SM clock. It shares
// nothing with the GPU's timer (%globaltimer and CUDA events), against which
// clock64 read up to 2069 MHz on an H100 whose peak is 1980 MHz. It contains
// the kernel, so SM cycles over it underestimate the clock by the launch and
// wake-up time (~10 us).
template <class Launch>
double wall_ns(Launch&& launch) {
  IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  launch();
  IOSIM_CUDA_CHECK_LAUNCH();
  IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

// Milliseconds `launch()` takes on the default stream (CUDA events).
template <class Launch>
float time_ms(Launch&& launch) {
  kernels::CudaEvent start, stop;
  start.record(nullptr);
  launch();
  IOSIM_CUDA_CHECK_LAUNCH();
  stop.record(nullptr);
  IOSIM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  return stop.ms_since(start);
}

}  // namespace iosim::calibrate
