// cuBLAS opened at run time (dlopen), so that iosim-peer runs wherever a
// cuBLAS of any recent major version exists: the CUDA Toolkit's, or the one
// PyTorch's wheels ship. Linking libcublas statically would make the binary
// several hundred MB (more than a device call carries), and a dynamic link
// would tie it to libcublas.so.13, which the GPU machine may not have.
// Only the calls the peer makes are resolved; their signatures are the same
// in cuBLAS 12 and 13.
#pragma once
#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/error.h"

namespace iosim::peer {

class Cublas {
 public:
  using CreateFn = cublasStatus_t (*)(cublasHandle_t*);
  using DestroyFn = cublasStatus_t (*)(cublasHandle_t);
  using VersionFn = cublasStatus_t (*)(cublasHandle_t, int*);
  using StridedFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                       const void*, cudaDataType, int, long long, const void*, cudaDataType, int,
                                       long long, const void*, void*, cudaDataType, int, long long, int,
                                       cublasComputeType_t, cublasGemmAlgo_t);
  using BatchedFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                       const void* const[], cudaDataType, int, const void* const[], cudaDataType, int,
                                       const void*, void* const[], cudaDataType, int, int, cublasComputeType_t,
                                       cublasGemmAlgo_t);

  // Tries $IOSIM_CUBLAS, then the sonames of cuBLAS 13 and 12 on the loader's
  // path, then the toolkit's directory; throws InputError listing them.
  Cublas() {
    std::vector<std::string> tried;
    if (const char* env = std::getenv("IOSIM_CUBLAS"); env != nullptr && *env != '\0') tried.push_back(env);
    for (const char* name :
         {"libcublas.so.13", "libcublas.so.12", "libcublas.so", "/usr/local/cuda/lib64/libcublas.so"})
      tried.push_back(name);
    std::string errors;
    for (const auto& name : tried) {
      lib_.reset(dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL));
      if (lib_ != nullptr) {
        path_ = name;
        break;
      }
      errors += "\n  " + name + ": " + dlerror();
    }
    if (lib_ == nullptr) throw InputError("cuBLAS not found (set IOSIM_CUBLAS=/path/to/libcublas.so); tried:" + errors);
    create_ = symbol<CreateFn>("cublasCreate_v2");
    destroy_ = symbol<DestroyFn>("cublasDestroy_v2");
    version_ = symbol<VersionFn>("cublasGetVersion_v2");
    strided = symbol<StridedFn>("cublasGemmStridedBatchedEx");
    batched = symbol<BatchedFn>("cublasGemmBatchedEx");
    check(create_(&handle_), "cublasCreate");
  }
  ~Cublas() {
    if (handle_ != nullptr) destroy_(handle_);
  }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  cublasHandle_t handle() const { return handle_; }
  const std::string& path() const { return path_; }
  int version() const {
    int v = 0;
    check(version_(handle_, &v), "cublasGetVersion");
    return v;
  }
  static void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error(std::string(what) + " failed: cuBLAS status " + std::to_string(s));
  }

  StridedFn strided = nullptr;
  BatchedFn batched = nullptr;

 private:
  template <class F>
  F symbol(const char* name) {
    void* p = dlsym(lib_.get(), name);
    if (p == nullptr) throw InputError(path_ + " has no symbol " + name);
    return reinterpret_cast<F>(p);
  }
  struct Close {
    void operator()(void* lib) const { dlclose(lib); }
  };
  std::unique_ptr<void, Close> lib_;  // closed after ~Cublas destroys the handle
  std::string path_;
  cublasHandle_t handle_ = nullptr;
  CreateFn create_ = nullptr;
  DestroyFn destroy_ = nullptr;
  VersionFn version_ = nullptr;
};

}  // namespace iosim::peer
