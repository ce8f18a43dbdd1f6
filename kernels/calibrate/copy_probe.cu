// What Nsight Compute profiles for `iosim calibrate`:
// - the streaming copy behind the L2 dirty limit (and the L2 line and sector
//   sizes): CTA c copies bytes [c x 32 KiB, (c + 1) x 32 KiB) of src to dst,
//   256 threads x 8 float4 each, the schedule experiments/copy_trace.py writes
//   as an iosim trace;
// - empty kernels, whose duration is the fixed time every kernel pays
//   (launch to its first CTA, its last CTA to completion).
#include <algorithm>
#include <iostream>
#include <string>

#include "kernels/calibrate/calibrate.h"
#include "kernels/calibrate/copy_chunks_kernel.cuh"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"

namespace iosim::calibrate {
namespace {

using copy_chunks::kPerThread;
using copy_chunks::kThreads;
static_assert(copy_chunks::kChunkBytes == kCopyChunkBytes, "the probe's chunk is the kernel's");

__global__ void launch_probe() {}

void copy(const kernels::DeviceBuffer<float4>& src, const kernels::DeviceBuffer<float4>& dst, i64 bytes) {
  copy_chunks::copy_chunks<<<static_cast<unsigned>(bytes / kCopyChunkBytes), kThreads>>>(src.get(), dst.get());
  IOSIM_CUDA_CHECK_LAUNCH();
}

void copy_all(const std::vector<i64>& sizes) {
  const i64 largest = *std::max_element(sizes.begin(), sizes.end());
  const kernels::DeviceBuffer<float4> src(static_cast<std::size_t>(largest / 16));
  const kernels::DeviceBuffer<float4> dst(static_cast<std::size_t>(largest / 16));
  IOSIM_CUDA_CHECK(cudaMemset(src.get(), 1, static_cast<std::size_t>(largest)));
  IOSIM_CUDA_CHECK(cudaMemset(dst.get(), 0, static_cast<std::size_t>(largest)));
  copy(src, dst, sizes.front());  // warm-up (module load); ncu skips it
  for (const i64 bytes : sizes) copy(src, dst, bytes);
  IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

std::string copy_setup() {
  return "CTA c copies bytes [32 KiB c, 32 KiB (c + 1)), " + std::to_string(kThreads) + " threads x " +
         std::to_string(kPerThread) + " float4 each";
}

void run_copy_probe(const std::vector<i64>& sizes) {
  require_gpu();
  copy_all(sizes);  // its buffers are freed before the context goes
  release_device();
  std::cerr << "calibrate --probe-copy: copied " << sizes.size() << " sizes after one warm-up copy\n";
}

std::string launch_setup() {
  return "an empty kernel of 32-thread CTAs, " + std::to_string(kLaunchProbes) +
         " launches per grid size after one warm-up launch";
}

void run_launch_probe(const std::vector<i64>& grid_sizes) {
  require_gpu();
  launch_probe<<<1, 32>>>();  // warm-up (module load); ncu skips it
  IOSIM_CUDA_CHECK_LAUNCH();
  for (const i64 ctas : grid_sizes)
    for (int i = 0; i < kLaunchProbes; ++i) {
      launch_probe<<<static_cast<unsigned>(ctas), 32>>>();
      IOSIM_CUDA_CHECK_LAUNCH();
    }
  IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
  release_device();
  std::cerr << "calibrate --probe-launch: launched " << grid_sizes.size() << " grid sizes x " << kLaunchProbes
            << " after one warm-up launch\n";
}

}  // namespace iosim::calibrate
