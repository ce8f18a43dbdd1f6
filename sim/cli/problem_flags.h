// The flags that describe one attention problem and its tiling (--algo --pass
// --batch --heads --kv-heads --seq/--seq-q/--seq-k --head-dim --dtype --causal
// --block-density --mask-seed --block-mask --block-m --block-n --gemm-* --layout).
// `iosim simulate|trace|numerics` (sim/cli/scenario.h adds --profile) and
// `iosim-kernels check|bench` (kernels/harness/run_flags.h) both parse them
// here, so a flag list means the same problem to both and a bad one gets the
// same error.
#pragma once
#include <string>

#include "sim/cli/args.h"
#include "sim/trace/algorithms.h"
#include "sim/workload/problem.h"

namespace iosim::cli {

// What a program accepts and defaults to, for the help text only: iosim-kernels
// has no fa1-swapped or fp32 kernels and its own default tiles.
struct ProblemFlagsHelp {
  std::string algorithms =
      "standard | standard-eager (GPT-2's eager PyTorch attention: + scale, mask, dropout kernels) | "
      "fa1 | fa2 | fa1-swapped (forward-only teaching variant) | splitkv (split-KV forward, flash-decoding) | "
      "fa3 (FlashAttention-3 Hopper forward: d 64/128, fp16/bf16, its 128x128 tile)";
  std::string default_algorithm = "fa2";  // what --algo's help names as the default
  std::string passes = "fwd | bwd | fwdbwd";
  std::string dtypes = "fp16 | bf16 | fp32";
  std::string default_tiling = "paper's rule";
};

void add_problem_flags(ArgParser& parser, const ProblemFlagsHelp& help = {});
// Throws InputError for missing or inconsistent flags and for the rules of
// Problem::validate.
workload::Problem problem_from_flags(const ArgParser& parser);
// --algo, --pass, --block-m/--block-n, --splits and --gemm-*. sram_limit_bytes keeps its
// default: the hardware is the caller's to state.
trace::TraceOptions tiling_from_flags(const ArgParser& parser);

}  // namespace iosim::cli
