// What Nsight Compute profiles for l2.merge_window: how close in time two
// SMs' reads of one L2-resident line must be for the L2 to look it up once
// (experiments/probes/merge_probe.cu, which set the shipped profiles' values,
// run by calibrate). Pairs of CTAs, one CTA per SM, read the same 128 B line in
// each of kMergeRounds rounds, the second `delta` SM cycles after the first;
// the pair's first CTA read every line well before, so the timed reads hit.
// Per delta the L2's read lookups (lts__t_sectors_srcunit_tex_op_read) give the
// share of second reads that cost none; analysis.cpp's merge_window integrates
// that share over delta.
#include <iostream>
#include <string>

#include "kernels/calibrate/calibrate.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"

namespace iosim::calibrate {
namespace {

constexpr unsigned long long kLeadNs = 20000;   // every CTA waits for one instant this far ahead
constexpr unsigned long long kRoundNs = 10000;  // and starts round r r x this later

__device__ __forceinline__ unsigned long long timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void spin_cycles(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// lines: kMergeRounds x pairs lines of 32 floats; line (r, p) at (r * pairs + p) * 32.
__global__ void __launch_bounds__(32) pair_reads(const float* __restrict__ lines, int pairs, long long delta,
                                                 unsigned long long* start, float* __restrict__ sink) {
  const int pair = static_cast<int>(blockIdx.x) / 2;
  const bool second = blockIdx.x % 2 == 1;
  if (pair >= pairs) return;
  float acc = 0.f;
  if (!second)  // warm: the timed reads hit
    for (int r = 0; r < kMergeRounds; ++r)
      acc += __ldcg(lines + (static_cast<long long>(r) * pairs + pair) * 32 + threadIdx.x);
  if (threadIdx.x == 0) atomicCAS(start, 0ull, timer_ns() + kLeadNs);
  __syncwarp();
  unsigned long long t0;
  do {
    t0 = *reinterpret_cast<volatile unsigned long long*>(start);
  } while (t0 == 0);
  for (int r = 0; r < kMergeRounds; ++r) {
    while (timer_ns() < t0 + r * kRoundNs) {
    }
    if (second) spin_cycles(delta);
    acc += __ldcg(lines + (static_cast<long long>(r) * pairs + pair) * 32 + threadIdx.x);
  }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;  // never true: keeps the loads
}

}  // namespace

int merge_probe_pairs(int sm_count) { return sm_count / 2; }

std::string merge_setup(int sm_count) {
  return std::to_string(merge_probe_pairs(sm_count)) + " pairs of one-warp CTAs (one CTA per SM); in each of " +
         std::to_string(kMergeRounds) + " rounds " + std::to_string(kRoundNs / 1000) +
         " us apart (from one %globaltimer instant) the pair's first CTA reads a 128 B line with ld.global.cg (one "
         "request of 4 sectors) and the second reads it after spinning delta clock64 cycles; the first CTA read "
         "every line well before, so the timed reads hit; Nsight Compute (--cache-control all) counts "
         "lts__t_sectors_srcunit_tex_op_read, each delta " + std::to_string(kMergeRepeats) + " times";
}

void run_merge_probe() {
  require_gpu();
  int sm_count = 0;
  IOSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  const int pairs = merge_probe_pairs(sm_count);
  {
    const kernels::DeviceBuffer<float> lines(static_cast<std::size_t>(kMergeRounds) * pairs * 32);
    const kernels::DeviceBuffer<float> sink(32);
    const kernels::DeviceBuffer<unsigned long long> start(1);
    IOSIM_CUDA_CHECK(cudaMemset(lines.get(), 0, lines.bytes()));
    const auto launch = [&](long long delta) {
      IOSIM_CUDA_CHECK(cudaMemset(start.get(), 0, start.bytes()));
      pair_reads<<<2 * pairs, 32>>>(lines.get(), pairs, delta, start.get(), sink.get());
      IOSIM_CUDA_CHECK_LAUNCH();
      IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
    };
    launch(0);  // module load; ncu skips it
    for (int rep = 0; rep < kMergeRepeats; ++rep)
      for (const int delta : kMergeDeltas) launch(delta);
  }
  release_device();
  std::cerr << "calibrate --probe-merge: " << kMergeRepeats << " x " << std::size(kMergeDeltas)
            << " pair launches after one warm-up launch\n";
}

}  // namespace iosim::calibrate
