#include "kernels/common/device_info.h"

#include <cuda_runtime.h>

#include "kernels/common/cuda_check.h"
#include "sim/common/error.h"

namespace iosim::kernels {

DeviceInfo current_device() {
  DeviceInfo d;
  IOSIM_CUDA_CHECK(cudaGetDevice(&d.ordinal));
  cudaDeviceProp prop{};
  IOSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, d.ordinal));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  d.smem_per_block_optin = static_cast<i64>(prop.sharedMemPerBlockOptin);
  d.global_mem_bytes = static_cast<i64>(prop.totalGlobalMem);
  return d;
}

std::string no_device_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls are not confused
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " +
           cudaGetErrorString(e) + ")";
  }
  if (count == 0) return "no CUDA device (cudaGetDeviceCount: 0 devices)";
  return "";
}

LaunchLimits launch_limits() {
  int ordinal = 0, major = 0, minor = 0, smem = 0;
  IOSIM_CUDA_CHECK(cudaGetDevice(&ordinal));
  IOSIM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal));
  IOSIM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal));
  IOSIM_CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  return {major * 10 + minor, smem};
}

void require_smem_fits(const LaunchLimits& dev, i64 bytes, const std::string& kernel) {
  if (bytes > dev.smem_per_block_optin) {
    throw InputError(kernel + " needs " + std::to_string(bytes) + " B of shared memory per block; this device (sm_" +
                     std::to_string(dev.compute_capability) + ") allows at most " +
                     std::to_string(dev.smem_per_block_optin) + " B (choose smaller --block-m/--block-n)");
  }
}

void require_dtype_supported(const LaunchLimits& dev, workload::DType t, const std::string& kernel) {
  if (t == workload::DType::bf16 && dev.compute_capability < 80) {
    throw InputError(kernel + ": bf16 tensor cores need compute capability 8.0+; this device is sm_" +
                     std::to_string(dev.compute_capability) + " (use --dtype fp16)");
  }
}

void require_grid_fits(i64 x, i64 y, i64 z, const std::string& kernel) {
  if (x < 1 || x >= (i64{1} << 31) || y < 1 || y > 65535 || z < 1 || z > 65535) {
    throw InputError(kernel + ": grid (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                     std::to_string(z) + ") is outside CUDA's limits (x < 2^31, y and z <= 65535)");
  }
}

}  // namespace iosim::kernels
