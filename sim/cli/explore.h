// `iosim explore`: the candidate tilings of one problem on one profile, the
// engine's prediction for each, their ranking by predicted time, and a
// recommendation whose reason is read off the numbers of its neighbours.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "sim/profile/hardware_profile.h"
#include "sim/trace/algorithms.h"
#include "sim/workload/problem.h"

namespace iosim::cli {

// One candidate tiling: B_r x B_c for FlashAttention (its warps and Q/dO
// buffers follow from them and d, as the schedule and the kernels derive
// them), the GEMM tile for standard attention.
struct Candidate {
  i64 block_m = 0, block_n = 0;  // standard attention: 0 (the mask blocks follow the GEMM tile)
  trace::GemmTiles gemm;
  // What the schedule derives, per pass's main kernel (the one with the most
  // shared memory): warps, "4" or "4/8" (fwd/bwd); FA2 backward's Q/dO
  // buffers (0 where the schedule has none).
  std::string warps;
  i64 q_stages = 0;
  i64 sram_bytes = 0;        // the pass's footprint under the schedule's rule (trace::sram_footprint)
  bool fits = false;         // footprint and every kernel's CTA (launch shared memory, registers, threads) fit
  std::string why_not;       // when !fits
  bool compiled = false;     // every kernel of the pass is in iosim-kernels' full menu
  bool compiled_ci = false;  // ... and in the CI menu
  std::string label() const;  // "128x64", or the GEMM tile "128x128x32" ("128x128x64 wgmma": the Hopper kernel)
};

// Every candidate of the algorithm, in a fixed order (B_r, then B_c, from
// kMenuBlockSizes; GEMM tiles m, n, k from kMenuGemmSizes, then on sm_90
// profiles the wgmma GEMM's one tile), each with whether it fits the profile
// and why not.
std::vector<Candidate> enumerate_candidates(const workload::Problem& problem, workload::Algorithm algorithm,
                                            workload::Pass pass, const profile::HardwareProfile& profile);
// The sizes enumerated, for messages: "B_r, B_c in {16, 32, 64, 128, 256}".
std::string candidate_space(workload::Algorithm algorithm);
// The one error when no candidate fits: what each needs against what the
// profile allows, the smallest need first.
std::string no_fit_message(const std::vector<Candidate>& all, workload::Algorithm algorithm, workload::Pass pass,
                           const profile::HardwareProfile& profile);

// The engine's prediction for a candidate.
struct Prediction {
  double seconds = 0;
  i64 dram_read_bytes = 0, dram_write_bytes = 0;
  i64 l2_bytes = 0;  // SM<->L2 bytes, read + write: the trace's requests and the register spills' traffic
  double l2_hit_rate = 0;
  i64 ctas_per_sm = 0, waves = 0;   // of the longest kernel
  std::string occupancy_limiter;   // of the longest kernel
  std::string bound, bound_kernel;  // the longest kernel's bound and name
  i64 dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
};

struct Ranked {
  Candidate candidate;
  Prediction prediction;
  i64 rank = 0;  // 1 = fastest
};

// Stable by predicted time: ties keep the enumeration order.
std::vector<Ranked> rank_by_time(std::vector<Ranked> results);

// The model's measured error for an algorithm: the mean |predicted/measured -
// 1| of kernel time over the held-out kernels of a validation CSV
// (experiments/validation/<gpu>/grid.csv, as accuracy_table.py computes it).
struct ModelError {
  double mean_abs = 0;
  i64 kernels = 0;
  std::string csv;  // the file it came from
  std::string gpu;  // its `gpu` column
};
// The validation CSV measured with `profile_name` (its `profile` column's
// file stem) among `csv_paths`, read at run time; nullopt with `why` when
// there is none or it has no held-out kernel of the algorithm.
std::optional<ModelError> model_error(const std::vector<std::string>& csv_paths, const std::string& profile_name,
                                      workload::Algorithm algorithm, std::string& why);
// experiments/validation/<gpu>/grid.csv beside the profile directory (legacy-* excluded).
std::vector<std::string> validation_csvs(const std::string& profile_dir);

// Why the top candidate wins, from its numbers against its neighbours (each
// size halved and doubled, among `ranked`).
std::string recommendation_reason(const std::vector<Ranked>& ranked, workload::Algorithm algorithm);
// Whether the runner-up is closer than the model's error: (t2 - t1) / t1 < error.
bool closer_than_error(const std::vector<Ranked>& ranked, double error);

}  // namespace iosim::cli
