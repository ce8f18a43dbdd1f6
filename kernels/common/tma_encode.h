// cuTensorMapEncodeTiled through the runtime's driver entry point, so that no
// library links libcuda (the TMA users: kernels/fa3, kernels/standard/sm90a).
// Host code.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <stdexcept>

#include "kernels/common/cuda_check.h"

namespace iosim::kernels {

inline PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  IOSIM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw std::runtime_error("the driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)");
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

}  // namespace iosim::kernels
