// Host-side checks shared by the standard-attention and FlashAttention-1
// launchers: null buffers, 16-byte row alignment, and the device limits
// (through kernels/common/device_info.h) checked before every launch.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "sim/common/error.h"

namespace iosim::kernels::detail {

inline std::string dtype_name(workload::DType t) { return std::string(workload::to_string(t)); }

inline void require_pointer(const void* ptr, const std::string& algo, const std::string& name) {
  if (ptr == nullptr) throw InputError(algo + ": buffer '" + name + "' is null");
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// True when every row of the tensor starts on a 16-byte boundary (2-byte elements).
inline bool rows_aligned16(const void* p, const Strides& s) {
  return aligned16(p) && s.batch % 8 == 0 && s.head % 8 == 0 && s.row % 8 == 0;
}

// FlashAttention-1 tiles are copied in 16-byte chunks.
inline void require_rows_aligned16(const void* p, const Strides& s, const std::string& algo, const std::string& name) {
  if (!rows_aligned16(p, s))
    throw InputError(algo + ": tensor '" + name +
                     "' must start on a 16-byte boundary with batch/head/row strides that are multiples of 8 "
                     "elements (strides " + std::to_string(s.batch) + "/" + std::to_string(s.head) + "/" +
                     std::to_string(s.row) + ")");
}

// Checks the device can run `kernel` (bf16 needs sm_80, dynamic shared memory
// within the opt-in limit, grid within CUDA's limits), then raises its dynamic
// shared-memory limit to `smem_bytes`. Throws InputError naming `what`.
template <class Kernel>
void prepare_launch(Kernel kernel, long long smem_bytes, const schedule::Dim3& grid, workload::DType dtype,
                    const std::string& what) {
  const LaunchLimits limits = launch_limits();
  require_dtype_supported(limits, dtype, what);
  require_smem_fits(limits, smem_bytes, what);
  require_grid_fits(grid.x, grid.y, grid.z, what);
  IOSIM_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes)));
}

inline std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

inline dim3 to_dim3(const schedule::Dim3& g) {
  return dim3(static_cast<unsigned>(g.x), static_cast<unsigned>(g.y), static_cast<unsigned>(g.z));
}

}  // namespace iosim::kernels::detail
