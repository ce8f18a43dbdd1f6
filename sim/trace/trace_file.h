// Address-level traces: what the timing engine replays, and their file format.
//
// A tile access of the logical trace (sim/trace/trace.h: tensor, head, rows,
// columns) becomes one strided byte range here: `rows` rows of `row_bytes`
// bytes, `stride` bytes apart. Every tile of every layout is such a range, so
// the engine and the file need nothing else, and a user can describe an
// algorithm of their own in a file without naming attention tensors.
//
// File format (text, one record per line, read kernel by kernel so memory
// holds one kernel at a time; docs/engine.md has the full description):
//
//   iosim-trace 1
//   dtype fp16                                  tensor-core rate to use: fp16 | bf16 | fp32
//   tensor <id> <name>                          optional: names for per-tensor statistics
//   kernel <name> pass=<fwd|bwd> grid=<x>,<y>,<z> threads=<n> smem=<bytes> regs=<n> stages=<n>
//   cta <x> <y> <z>                             CTAs in launch order, x fastest, each once
//   s <tensor_flops> <fp32_ops> <sfu_ops>       starts a step: its compute work
//   r <tensor> <addr_hex> <row_bytes> [<rows> <stride>]   tile load
//   w <tensor> <addr_hex> <row_bytes> [<rows> <stride>]   tile store
//   a <tensor> <addr_hex> <row_bytes> [<rows> <stride>]   fp32 reduction (atomic add) at L2
//   end                                         ends the kernel
//
// Lines starting with '#' and blank lines are ignored.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "sim/trace/algorithms.h"
#include "sim/trace/trace.h"

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

// Converts a logical tile to its byte range.
RangeAccess to_range(const TileAccess& a, const TensorTable& tensors);

// Adapts an AlgorithmTrace (kernels in launch order) to a KernelSource.
class AlgorithmKernelSource final : public KernelSource {
 public:
  explicit AlgorithmKernelSource(const AlgorithmTrace& run);
  ~AlgorithmKernelSource() override;
  workload::DType dtype() const override { return run_.problem.dtype; }
  std::vector<std::string> tensor_names() const override;
  const RangeKernel* next_kernel() override;

 private:
  const AlgorithmTrace& run_;
  size_t next_ = 0;
  std::unique_ptr<RangeKernel> current_;
};

// Writes every CTA of every kernel of `run` (no replica shortcuts).
void write_trace_file(std::ostream& out, const AlgorithmTrace& run);
void write_trace_file(const std::string& path, const AlgorithmTrace& run);

// Reads a trace file kernel by kernel. Throws iosim::InputError
// "<file>:<line>: <problem> (<what is valid>)" on malformed input.
class TraceFileReader final : public KernelSource {
 public:
  explicit TraceFileReader(const std::string& path);
  // Reads from a stream; `name` is used in error messages.
  TraceFileReader(std::unique_ptr<std::istream> in, std::string name);
  ~TraceFileReader() override;
  workload::DType dtype() const override { return dtype_; }
  std::vector<std::string> tensor_names() const override { return tensor_names_; }
  const RangeKernel* next_kernel() override;

 private:
  class FileKernel;
  bool read_line(std::string& line);
  [[noreturn]] void fail(const std::string& what) const;
  void read_header();

  std::unique_ptr<std::istream> in_;
  std::string name_;
  i64 line_no_ = 0;
  workload::DType dtype_ = workload::DType::fp16;
  std::vector<std::string> tensor_names_;
  std::string pending_;  // a line read ahead (the first kernel line)
  bool has_pending_ = false;
  std::unique_ptr<FileKernel> current_;
};

}  // namespace iosim::trace
