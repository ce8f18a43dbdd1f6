// RAII owners of CUDA resources: device buffers, events and streams. Move-only;
// destructors never throw (a failing free is reported to stderr only, since a
// destructor may run while another error unwinds).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <utility>
#include <vector>

#include "kernels/common/cuda_check.h"

namespace iosim::kernels {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) IOSIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw CudaError("DeviceBuffer::upload: size mismatch");
    IOSIM_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) IOSIM_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // Fills every byte with `byte` (0xFF makes fp16/bf16/fp32 NaNs: the poison
  // pattern that exposes unwritten outputs).
  void fill_bytes(int byte) {
    if (count_ > 0) IOSIM_CUDA_CHECK(cudaMemset(ptr_, byte, bytes()));
  }

 private:
  void release() noexcept {
    if (ptr_ != nullptr) {
      const cudaError_t e = cudaFree(ptr_);
      if (e != cudaSuccess) std::fprintf(stderr, "cudaFree failed: %s\n", cudaGetErrorString(e));
      ptr_ = nullptr;
    }
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

class CudaEvent {
 public:
  CudaEvent() { IOSIM_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~CudaEvent() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t s) { IOSIM_CUDA_CHECK(cudaEventRecord(event_, s)); }
  // Milliseconds from `start` to this event (both must have completed).
  float ms_since(const CudaEvent& start) const {
    float ms = 0;
    IOSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaStream {
 public:
  CudaStream() { IOSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { IOSIM_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace iosim::kernels
