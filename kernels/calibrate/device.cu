// What the CUDA runtime says about the current device.
#include <stdexcept>
#include <string>

#include "kernels/calibrate/benchmarks.h"
#include "kernels/common/cuda_check.h"

namespace iosim::calibrate::bench {
namespace {

constexpr int kLiveValues = 320;  // more than any thread may hold in registers

// Never launched: its numRegs is the compiler's per-thread register cap,
// since it wants more registers than that (the rest spills).
__global__ void __launch_bounds__(32) register_hungry(const float* in, float* out, int n) {
  float v[kLiveValues];
#pragma unroll
  for (int i = 0; i < kLiveValues; ++i) v[i] = in[i * 32 + threadIdx.x];
  for (int it = 0; it < n; ++it) {
#pragma unroll
    for (int i = 0; i < kLiveValues; ++i) v[i] = fmaf(v[i], v[(i + 7) % kLiveValues], 1.0f);
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < kLiveValues; ++i) s += v[i] * static_cast<float>(i + 1);
  out[threadIdx.x] = s;
}

int attribute(cudaDeviceAttr a, int device, const char* name) {
  int v = 0;
  IOSIM_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
  if (v <= 0)
    throw std::runtime_error(std::string("calibrate: cudaDeviceGetAttribute(") + name + ") reads " +
                             std::to_string(v) + " on this driver; calibrate needs it");
  return v;
}

}  // namespace

profile::DeviceFacts read_device_facts() {
  int device = 0;
  IOSIM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  IOSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  profile::DeviceFacts f;
  f.name = prop.name;
  f.cc_major = prop.major;
  f.cc_minor = prop.minor;
  f.sm_count = prop.multiProcessorCount;
  f.global_memory_bytes = static_cast<i64>(prop.totalGlobalMem);
  f.warp_size = prop.warpSize;
  // cudaDeviceProp lost clockRate and memoryClockRate in CUDA 13; the attributes remain.
  f.max_clock_hz = 1e3 * attribute(cudaDevAttrClockRate, device, "cudaDevAttrClockRate");
  f.memory_clock_hz = 1e3 * attribute(cudaDevAttrMemoryClockRate, device, "cudaDevAttrMemoryClockRate");
  f.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device, "cudaDevAttrGlobalMemoryBusWidth");
  f.l2_bytes = attribute(cudaDevAttrL2CacheSize, device, "cudaDevAttrL2CacheSize");
  f.smem_per_sm_bytes = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device,
                                  "cudaDevAttrMaxSharedMemoryPerMultiprocessor");
  f.smem_per_block_optin_bytes =
      attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device, "cudaDevAttrMaxSharedMemoryPerBlockOptin");
  f.registers_per_sm =
      attribute(cudaDevAttrMaxRegistersPerMultiprocessor, device, "cudaDevAttrMaxRegistersPerMultiprocessor");
  f.max_threads_per_sm =
      attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device, "cudaDevAttrMaxThreadsPerMultiProcessor");
  f.max_ctas_per_sm =
      attribute(cudaDevAttrMaxBlocksPerMultiprocessor, device, "cudaDevAttrMaxBlocksPerMultiprocessor");
  cudaFuncAttributes regs{};
  IOSIM_CUDA_CHECK(cudaFuncGetAttributes(&regs, register_hungry));
  f.max_registers_per_thread = regs.numRegs;
  return f;
}

}  // namespace iosim::calibrate::bench
