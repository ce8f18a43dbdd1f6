// What Nsight Compute profiles for l2.merge_window: how close in time two
// SMs' reads of one L2-resident line must be for the L2 to look it up once
// (experiments/probes/merge_probe.cu, which set the shipped profiles' values,
// with its kernel, merge_pairs_kernel.cuh). Pairs of CTAs, one CTA per SM,
// read the same 128 B line in each of kMergeRounds rounds, the second `delta`
// SM cycles after the first; the pair's first CTA read every line well
// before, so the timed reads hit.
// Per delta the L2's read lookups (lts__t_sectors_srcunit_tex_op_read) give the
// share of second reads that cost none; analysis.cpp's merge_window integrates
// that share over delta.
#include <iostream>
#include <string>

#include "kernels/calibrate/calibrate.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/calibrate/merge_pairs_kernel.cuh"

namespace iosim::calibrate {
static_assert(kMergeRounds == merge_pairs::kRounds, "calibrate's lines per pair are the kernel's rounds");

int merge_probe_pairs(int sm_count) { return sm_count / 2; }

std::string merge_setup(int sm_count) {
  return std::to_string(merge_probe_pairs(sm_count)) + " pairs of one-warp CTAs (one CTA per SM); in each of " +
         std::to_string(kMergeRounds) + " rounds " + std::to_string(merge_pairs::kRoundNs / 1000) +
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
      merge_pairs::pair_reads<<<2 * pairs, 32>>>(lines.get(), pairs, delta, 1, start.get(), sink.get());
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
