// What the launchers need to know about the current device, read once per
// call from cudaGetDeviceProperties (no global cache: it is cheap next to a
// kernel launch and keeps the library free of global state).
#pragma once
#include <cstdint>
#include <string>

#include "sim/common/hd.h"
#include "sim/workload/problem.h"

namespace iosim::kernels {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  i64 l2_bytes = 0;
  i64 smem_per_block_optin = 0;
  i64 global_mem_bytes = 0;
  int compute_capability() const { return cc_major * 10 + cc_minor; }
};

// The current device; throws CudaError when there is none.
DeviceInfo current_device();

// "" when at least one CUDA device is usable, else why not (for test skips):
// "no CUDA device (cudaGetDeviceCount: <error>)".
std::string no_device_reason();

// The two device limits every launch checks, read with cudaDeviceGetAttribute
// (cheap enough per launch, unlike cudaGetDeviceProperties).
struct LaunchLimits {
  int compute_capability = 0;  // e.g. 90
  i64 smem_per_block_optin = 0;
};
LaunchLimits launch_limits();

// Launcher checks, each throwing InputError naming the kernel and the limit:
// dynamic shared memory within the device's opt-in limit; bf16 needs sm_80.
void require_smem_fits(const LaunchLimits& dev, i64 bytes, const std::string& kernel);
void require_dtype_supported(const LaunchLimits& dev, workload::DType t, const std::string& kernel);
// Grid dimensions within CUDA's limits (x < 2^31, y and z < 65536).
void require_grid_fits(i64 x, i64 y, i64 z, const std::string& kernel);

}  // namespace iosim::kernels
