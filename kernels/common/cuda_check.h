// Every CUDA runtime call goes through IOSIM_CUDA_CHECK, which throws
// CudaError naming the call, the error and file:line (llm.c dev/cuda/common.h
// style, but as an exception so the CLI decides the exit code).
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace iosim::kernels {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                  cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess) throw_cuda_error(e, expr, file, line);
}

}  // namespace iosim::kernels

#define IOSIM_CUDA_CHECK(expr) ::iosim::kernels::check_cuda((expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: reports bad launch configurations at the launch site.
#define IOSIM_CUDA_CHECK_LAUNCH() ::iosim::kernels::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
