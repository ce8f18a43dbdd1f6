// Exact byte counts between shared memory and global memory (the level the
// FlashAttention IO analysis counts), per tensor, per kernel and per run,
// obtained by walking the trace.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "sim/common/progress.h"
#include "sim/trace/algorithms.h"

namespace iosim::count {

struct TensorBytes {
  i64 read_bytes = 0;
  i64 write_bytes = 0;  // includes fp32 reductions (atomic adds) sent to L2
};

struct IoTotals {
  std::array<TensorBytes, trace::kTensorCount> by_tensor{};
  i64 read_bytes = 0;
  i64 write_bytes = 0;
  i64 reduce_bytes = 0;  // the part of write_bytes that is atomic adds
  i64 tensor_flops = 0;
  i64 fp32_ops = 0;
  i64 sfu_ops = 0;
  i64 steps = 0;
  i64 total_bytes() const { return read_bytes + write_bytes; }
  void add(const IoTotals& o);
};

struct KernelCount {
  std::string name;
  workload::Pass pass = workload::Pass::fwd;
  schedule::Dim3 grid;
  trace::CtaResources cta;
  IoTotals io;
};

struct RunCount {
  std::vector<KernelCount> kernels;
  IoTotals io;
};

// Walks every CTA of the kernel (one index along each replica dimension,
// scaled by its extent) and sums the tile bytes of every step. `progress`
// (optional) is told the steps walked (walked_steps() of them in all).
KernelCount count_kernel(const trace::KernelTrace& kernel, const trace::TensorTable& tensors,
                         ProgressSink* progress = nullptr);
RunCount count_run(const trace::AlgorithmTrace& run, ProgressSink* progress = nullptr);
// The steps count_kernel walks, given the kernel's steps over all its CTAs
// (count::kernel_steps): replica CTAs are walked once.
i64 walked_steps(const trace::KernelTrace& kernel, i64 kernel_steps);
// The threads count_kernel walks the kernel with.
i64 walk_threads(const trace::KernelTrace& kernel);
// Adds one step's bytes and work, multiplied by `weight` CTAs.
void add_step(IoTotals& io, const trace::Step& step, const trace::TensorTable& tensors, i64 weight);

}  // namespace iosim::count
