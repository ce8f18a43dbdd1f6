// One numerics check: random inputs, an algorithm's tiled CPU execution
// (tiled.h) against the double-precision reference (reference.h), reported as
// the max-norm relative error of every output:
//   err(X) = max_{b,h,r,c} |X - X_ref| / max_{b,h,r,c} |X_ref|
// (over finite reference entries; L's -inf entries must match exactly).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/numerics/tiled.h"
#include "sim/trace/algorithms.h"
#include "sim/workload/problem.h"

namespace iosim::numerics {

struct CheckOptions {
  // Q is drawn as logit_scale * N(0, 1), so scale * Q K^T has standard
  // deviation about logit_scale (K ~ N(0, 1)); 30 gives logits of +-30 and more.
  double logit_scale = 1.0;
  InjectedFault fault = InjectedFault::none;  // test-only, see tiled.h
  i64 splits = 1;                             // splitkv's key-range splits
};

struct OutputError {
  std::string name;  // "O", "L", "dQ", "dK", "dV"
  double max_abs_ref = 0.0;
  double max_abs_error = 0.0;
  double relative = 0.0;  // max_abs_error / max_abs_ref
};

struct NumericsReport {
  workload::Problem problem;
  workload::Algorithm algorithm = workload::Algorithm::fa2;
  workload::Pass pass = workload::Pass::fwd;
  i64 block_m = 0;
  i64 block_n = 0;
  std::uint64_t seed = 0;
  double logit_scale = 1.0;
  i64 active_blocks = 0;  // active (i, j) tiles per head under causal + block mask
  i64 total_blocks = 0;   // m_blocks * n_blocks
  // fwd: O, L; bwd: dQ, dK, dV; fwdbwd: all five. The backward pass always
  // consumes the state saved by the same algorithm's tiled forward pass.
  std::vector<OutputError> errors;

  double max_relative() const;  // over all reported outputs (+inf if any is)
  const OutputError& error(const std::string& name) const;  // throws InputError if not reported
  std::string to_string() const;
};

// Throws InputError for what tiled_forward/tiled_backward reject (bad blocks,
// fa1-swapped backward, a mask file that does not fit the grid, ...).
NumericsReport check_numerics(const workload::Problem& problem, workload::Algorithm algorithm, workload::Pass pass,
                              i64 block_m, i64 block_n, std::uint64_t seed, const CheckOptions& options = {});

// Random inputs for a problem: every tensor N(0, 1) with Q scaled by
// logit_scale; exact zeros are redrawn.
AttentionInputs random_inputs(const workload::Problem& problem, std::uint64_t seed, double logit_scale = 1.0);

}  // namespace iosim::numerics
