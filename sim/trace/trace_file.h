// Address-level traces (range_trace.h) from an algorithm's trace, and their
// file format.
//
// File format (text, one record per line, read kernel by kernel so memory
// holds one kernel at a time; docs/engine.md has the full description):
//
//   iosim-trace 3
//   dtype fp16                                  tensor-core rate to use: fp16 | bf16 | fp32
//   tensor <id> <name> <base_hex> <bytes>       every tensor an access names: its address range
//   kernel <name> pass=<fwd|bwd> grid=<x>,<y>,<z> threads=<n> smem=<bytes> regs=<n> stages=<n>
//   programs warps=<n> tensor=<0|1> sync_loads=<0|1> [store_rounds=<0|1>]   optional: the kernel's warp
//                                               programs follow (store_rounds: a step's stores go out
//                                               round by round, with its load rounds)
//   program <id> <name> [rounds=<n>]            one warp's instructions for a kind of step (rounds:
//                                               of a step's loads, when the program loads them itself)
//   i <pipe> <bytes> [op=<op>] [flop=<n>] [<source> ...]   an instruction: tensor|fma|alu|mufu|shfl|smem|
//                                               global|barrier, the bytes it moves, how it uses the pipe
//                                               (schedule::Op; wgmma with its FLOP), the earlier
//                                               instructions it waits for
//   cta <x> <y> <z>                             CTAs in launch order, x fastest, each once
//   s <tensor_flops> <fp32_ops> <sfu_ops> [<program>]   starts a step: its compute work and the program it runs
//   r <tensor> <addr_hex> <row_bytes> [<rows> <stride>]   tile load
//   w <tensor> <addr_hex> <row_bytes> [<rows> <stride>]   tile store
//   a <tensor> <addr_hex> <row_bytes> [<rows> <stride>]   fp32 reduction (atomic add) at L2
//   end                                         ends the kernel
//
// Lines starting with '#' and blank lines are ignored. Every access must lie
// inside its declared tensor, and all tensors inside one 512 GiB window (the
// L2 model's address range), so no file can make the replay hold more than a
// bounded amount per access: accesses larger than kMaxPieceBytes or
// kMaxPieceRows are handed to the memory model in pieces of at most that size
// (split at multiples of kMaxPieceBytes, so no line or sector is shared).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/progress.h"
#include "sim/trace/algorithms.h"
#include "sim/trace/range_trace.h"
#include "sim/trace/trace.h"

namespace iosim::trace {

// Trace file format version this reader reads and the writer writes.
inline constexpr int kTraceFileVersion = 3;
// Format 2 (no warp programs) is read too.
inline constexpr int kOldestTraceFileVersion = 2;
// All tensors of a file lie in one window of this size, aligned to it.
inline constexpr u64 kAddressWindowBytes = u64{1} << 39;
// The largest access handed to the memory model at once (it gathers a
// request's lines in memory).
inline constexpr i64 kMaxPieceBytes = i64{1} << 27;
inline constexpr i64 kMaxPieceRows = i64{1} << 20;

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

// Writes every CTA of every kernel of `run` (no replica shortcuts);
// `progress` (optional) is told the steps written.
void write_trace_file(std::ostream& out, const AlgorithmTrace& run, ProgressSink* progress = nullptr);
void write_trace_file(const std::string& path, const AlgorithmTrace& run, ProgressSink* progress = nullptr);

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
  // For progress: the file's size and the bytes read so far (-1 when the
  // stream cannot tell), and the steps of the kernel last returned.
  i64 size_bytes() const { return size_; }
  i64 bytes_read() const;
  i64 kernel_steps() const;

 private:
  class FileKernel;
  // A declared tensor: bytes [base, end).
  struct Extent {
    u64 base = 0, end = 0;
    std::string name;
    i64 line = 0;
  };
  bool read_line(std::string& line);
  [[noreturn]] void fail(const std::string& what) const;
  void read_header();
  void read_tensor(const std::vector<std::string_view>& tok);
  void read_program_record(const std::vector<std::string_view>& tok, FileKernel& k);
  // Checks an access line's tensor and range; returns its bytes.
  i64 check_access(const RangeAccess& a, std::string_view op) const;
  std::string declared_list() const;

  std::unique_ptr<std::istream> in_;
  std::string name_;
  i64 size_ = -1;
  i64 line_no_ = 0;
  workload::DType dtype_ = workload::DType::fp16;
  std::vector<std::string> tensor_names_;
  std::vector<std::optional<Extent>> extents_;  // by tensor id
  std::optional<u64> window_;                  // index of the address window
  std::string pending_;  // a line read ahead (the first kernel line)
  bool has_pending_ = false;
  std::unique_ptr<FileKernel> current_;
  i64 open_program_ = -1;         // the program 'i' lines add to
  i64 program_instructions_ = 0;  // in the current kernel
};

}  // namespace iosim::trace
