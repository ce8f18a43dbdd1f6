// The address-level trace model: what the L2 model and the timing engine
// replay. A logical tile access (sim/trace/trace.h: tensor, head, rows,
// columns) becomes one strided byte range here: `rows` rows of `row_bytes`
// bytes, `stride` bytes apart. Every tile of every layout is such a range, so
// the engine needs nothing else, and a trace file (trace_file.h) can describe
// an algorithm of the user's own without naming attention tensors.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/schedule/kernel_schedules.h"
#include "sim/trace/trace.h"
#include "sim/workload/problem.h"

namespace iosim::trace {

// Tensor index of an access, for per-tensor statistics (TensorId values for
// traces built from an AlgorithmTrace; file-defined ids otherwise).
using TensorIndex = std::uint16_t;
inline constexpr int kMaxFileTensors = 256;

// One tile access as a strided byte range: rows x row_bytes, stride apart.
// Normalised so that a contiguous tile has rows == 1.
struct RangeAccess {
  AccessKind kind = AccessKind::Read;
  TensorIndex tensor = 0;
  u64 addr = 0;
  i64 row_bytes = 0;
  i64 rows = 1;
  i64 stride = 0;
  i64 bytes() const { return row_bytes * rows; }
  bool operator==(const RangeAccess&) const = default;
};

// One step of a CTA: issue the loads, compute, issue the stores (and reductions).
struct RangeStep {
  std::vector<RangeAccess> loads;
  std::vector<RangeAccess> stores;  // Write and ReduceAdd
  ComputeWork compute{};
  void clear() {
    loads.clear();
    stores.clear();
    compute = {};
  }
};

// Pulls a CTA's steps in order; next() returns false after the last one.
class StepCursor {
 public:
  virtual ~StepCursor() = default;
  virtual bool next(RangeStep& out) = 0;
};

// One kernel of a pass, at address level.
class RangeKernel {
 public:
  virtual ~RangeKernel() = default;
  virtual std::string name() const = 0;
  virtual workload::Pass pass() const = 0;
  virtual schedule::Dim3 grid() const = 0;
  virtual CtaResources resources() const = 0;
  virtual int pipeline_stages() const = 0;
  virtual std::unique_ptr<StepCursor> open_cta(i64 x, i64 y, i64 z) const = 0;
  // The kernel's warp programs (sim/schedule/warp_programs.h); null when unknown.
  virtual std::shared_ptr<const schedule::KernelPrograms> programs() const { return nullptr; }
  // KernelTrace::zero_fill_read_bytes (0 for a trace file's kernels).
  virtual i64 zero_fill_read_bytes() const { return 0; }
  // KernelTrace::replica_dims: grid dimensions along which every CTA has the
  // same steps up to addresses (none for a trace file's kernels).
  virtual std::array<bool, 3> replica_dims() const { return {false, false, false}; }
};

// The kernels of a run, one at a time in launch order (so a file is streamed).
class KernelSource {
 public:
  virtual ~KernelSource() = default;
  virtual workload::DType dtype() const = 0;
  // Names of the tensor indices (empty string where unnamed).
  virtual std::vector<std::string> tensor_names() const = 0;
  // The next kernel, or nullptr after the last. The returned kernel stays
  // valid until the next call.
  virtual const RangeKernel* next_kernel() = 0;
};

}  // namespace iosim::trace
