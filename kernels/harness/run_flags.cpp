#include "kernels/harness/run_flags.h"

#include "sim/cli/problem_flags.h"
#include "sim/common/error.h"
#include "sim/schedule/plan.h"

namespace iosim::harness {

cli::ArgParser make_run_parser(const std::string& command) {
  using Kind = cli::ArgParser::Kind;
  const bool bench = command == "bench";
  cli::ArgParser p(command,
                   bench ? "Times a pass with CUDA events: warm-up runs, then the median of --iters runs, each on\n"
                           "the next of enough input/output sets to exceed --l2-multiple L2s (fwdbwd: forward and\n"
                           "backward timed together)."
                         : "Runs one configuration on random inputs and prints each output's max-norm relative error\n"
                           "against the double-precision reference.",
                   "iosim-kernels");
  cli::ProblemFlagsHelp help;
  help.algorithms = "standard | standard-eager (GPT-2's eager attention: + scale, mask, dropout kernels) | fa1 | fa2 | splitkv (forward) | fa3 (forward, Hopper)";
  help.passes = "fwd | bwd | fwdbwd";
  help.dtypes = "fp16 | bf16";
  help.default_tiling = "FlashAttention-2's tiles for fa2, 64x64 for fa1, 16x64 for splitkv, 128x128 for fa3, the GEMM tile for standard";
  cli::add_problem_flags(p, help);
  p.add("seed", Kind::integer, "SEED", "seed of the random inputs [1]")
      .add("q-scale", Kind::real, "X", "multiply Q (uniform in [-1, 1]) by this, for large logits [1]")
      .add("dropout", Kind::real, "P", "standard-eager: attention dropout probability, 0 <= P < 1 [0.1, GPT-2's]; "
                                       "its Philox seed is --seed")
      .add("json", Kind::flag, "", "print one JSON object instead of text");
  if (bench) {
    add_timing_flags(p);
    p.add("per-kernel", Kind::flag, "",
             "standard, standard-eager: also time each kernel of the pass, beside its trace's bytes and FLOPs");
  } else {
    p.add("tol", Kind::real, "X", "exit 1 when any relative error exceeds this");
  }
  return p;
}

void add_timing_flags(cli::ArgParser& p) {
  using Kind = cli::ArgParser::Kind;
  p.add("warmup", Kind::integer, "N", "untimed runs first [5]")
      .add("iters", Kind::integer, "N", "timed runs; the median is reported [30]")
      .add("l2-multiple", Kind::real, "X", "rotate buffer sets until they hold this many L2s [4]");
}

RunRequest run_from_flags(const cli::ArgParser& f) {
  RunRequest r;
  RunSpec& s = r.spec;
  s.problem = cli::problem_from_flags(f);
  const trace::TraceOptions tiling = cli::tiling_from_flags(f);
  if (tiling.algorithm == workload::Algorithm::fa1_swapped)
    throw InputError("--algo " + std::string(workload::to_string(tiling.algorithm)) +
                     " is simulation-only, with no CUDA kernel (valid: standard, standard-eager, fa1, fa2, splitkv, fa3)");
  r.pass = tiling.pass;
  s.algorithm = std::string(workload::to_string(tiling.algorithm));
  s.block_m = tiling.block_m.value_or(0);  // 0: the kernel's default (default_blocks)
  s.block_n = tiling.block_n.value_or(0);
  s.gemm = tiling.gemm;
  s.splits = tiling.splits.value_or(0);  // 0: the default rule for the device's SMs
  if (tiling.splits && tiling.algorithm != workload::Algorithm::splitkv)
    throw InputError("--splits applies to --algo splitkv only (got --algo " + s.algorithm + ")");
  if (tiling.algorithm == workload::Algorithm::splitkv && r.pass != workload::Pass::fwd)
    throw InputError("splitkv is forward-only (decoding): use --pass fwd");
  if (tiling.algorithm == workload::Algorithm::fa3)  // the simulator's rule and message
    schedule::check_fa3(s.problem, r.pass, tiling.block_m.value_or(schedule::Fa3ForwardSchedule::kBlockM),
                        tiling.block_n.value_or(schedule::Fa3ForwardSchedule::kBlockN));
  if (tiling.gemm.impl == kernels::GemmImpl::wgmma)  // the simulator's rule and message
    schedule::check_wgmma_gemm(s.problem, tiling.algorithm, tiling.gemm);
  s.gemm_impl = tiling.gemm.impl;
  s.data_seed = static_cast<std::uint64_t>(f.integer("seed").value_or(1));
  s.q_scale = f.real("q-scale").value_or(1.0);
  if (const auto p = f.real("dropout")) {
    if (tiling.algorithm != workload::Algorithm::standard_eager)
      throw InputError("--dropout applies to --algo standard-eager only");
    if (!(*p >= 0.0 && *p < 1.0)) throw InputError("--dropout " + std::to_string(*p) + " is outside [0, 1)");
    s.dropout = *p;
  }
  return r;
}

}  // namespace iosim::harness
