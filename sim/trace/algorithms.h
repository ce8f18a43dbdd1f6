// Builds the kernel traces of an attention algorithm for one problem: chooses
// the tiling (flags or the paper's rule), checks that it fits in shared memory,
// and instantiates the schedule of every kernel the algorithm launches.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/schedule/plan.h"
#include "sim/trace/trace.h"
#include "sim/workload/problem.h"

namespace iosim::trace {

using workload::Algorithm;  // lives in sim/workload beside Pass and DType

using schedule::GemmTiles;  // standard attention's GEMM tiles (sim/schedule/plan.h)

struct TraceOptions {
  Algorithm algorithm = Algorithm::fa2;
  workload::Pass pass = workload::Pass::fwd;
  std::optional<i64> block_m;  // B_r; default: the paper's rule
  std::optional<i64> block_n;  // B_c
  std::string block_rule = "flags";  // Tiling::rule when block_m/block_n are given (who chose them)
  GemmTiles gemm;
  // Shared memory one CTA may use (the profile's max per block), bytes.
  i64 sram_limit_bytes = 48 * 1024;
  // splitkv: key-range splits per query block; default schedule::default_splits
  // for the profile's `sm_count` SMs. Other algorithms reject it.
  std::optional<i64> splits;
  i64 sm_count = 0;
};

// The tiling of one pass, and why it was chosen.
struct Tiling {
  i64 block_m = 0;
  i64 block_n = 0;
  i64 sram_bytes = 0;  // footprint of the pass's largest kernel
  std::string rule;    // "flags", "paper: Bc=ceil(M/4d), Br=min(Bc,d), M=..."
  i64 sram_elements_m = 0;  // M used by the rule (elements), 0 for flags
  i64 splits = 1;           // splitkv's key-range splits (1 for the others)
  std::string splits_rule;  // who chose them ("flags", "fill N SMs: ..."); empty but for splitkv
};

struct KernelEntry {
  workload::Pass pass = workload::Pass::fwd;  // fwd or bwd
  std::unique_ptr<KernelTrace> kernel;
};

// All kernels of a pass (fwd, bwd, or both in launch order).
struct AlgorithmTrace {
  workload::Problem problem;
  Algorithm algorithm = Algorithm::fa2;
  workload::Pass pass = workload::Pass::fwd;
  Tiling tiling;  // one tiling for every kernel of the run (fwd and bwd alike)
  GemmTiles gemm;
  i64 sram_limit_bytes = 0;  // the profile's shared memory per block
  std::unique_ptr<TensorTable> tensors;
  std::unique_ptr<workload::BlockMask> mask;  // owned storage behind the schedules' views
  std::vector<KernelEntry> kernels;
};

// Throws InputError for tilings that do not fit, bad block sizes, or a block
// mask file whose shape differs from the tile grid.
AlgorithmTrace build_trace(const workload::Problem& problem, const TraceOptions& options);

// The shared-memory footprint of the pass's largest kernel under a tiling.
i64 sram_footprint(const workload::Problem& p, Algorithm a, workload::Pass pass, i64 block_m,
                   i64 block_n, const GemmTiles& gemm, i64 sram_limit_bytes);

// The paper's block rule, Bc = ceil(M/4d), Br = min(Bc, d), with M the shared
// memory per block in elements; when the pass's footprint under that rule
// exceeds the limit (the backward pass keeps more tiles on chip than the
// rule assumes), M is halved until it fits, and `rule` says so.
Tiling default_tiling(const workload::Problem& p, Algorithm a, workload::Pass pass,
                      const GemmTiles& gemm, i64 sram_limit_bytes);

}  // namespace iosim::trace
