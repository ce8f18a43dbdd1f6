#include "kernels/harness/run_flags.h"

#include "sim/cli/problem_flags.h"
#include "sim/common/error.h"

namespace iosim::harness {

cli::ArgParser make_run_parser(const std::string& command) {
  using Kind = cli::ArgParser::Kind;
  const bool bench = command == "bench";
  cli::ArgParser p(command,
                   bench ? "Times one pass with CUDA events: warm-up runs, then the median of --iters runs, each on\n"
                           "the next of enough input/output sets to exceed --l2-multiple L2s."
                         : "Runs one configuration on random inputs and prints each output's max-norm relative error\n"
                           "against the double-precision reference.",
                   "iosim-kernels");
  cli::ProblemFlagsHelp help;
  help.algorithms = "standard | fa1 | fa2 | splitkv (forward)";
  help.passes = bench ? "fwd | bwd" : "fwd | bwd | fwdbwd";
  help.dtypes = "fp16 | bf16";
  help.default_tiling = "FlashAttention-2's tiles for fa2, 64x64 for fa1, 16x64 for splitkv, the GEMM tile for standard";
  cli::add_problem_flags(p, help);
  p.add("seed", Kind::integer, "SEED", "seed of the random inputs [1]")
      .add("q-scale", Kind::real, "X", "multiply Q (uniform in [-1, 1]) by this, for large logits [1]")
      .add("json", Kind::flag, "", "print one JSON object instead of text");
  if (bench) {
    p.add("warmup", Kind::integer, "N", "untimed runs first [5]")
        .add("iters", Kind::integer, "N", "timed runs; the median is reported [30]")
        .add("l2-multiple", Kind::real, "X", "rotate buffer sets until they hold this many L2s [4]");
  } else {
    p.add("tol", Kind::real, "X", "exit 1 when any relative error exceeds this");
  }
  return p;
}

RunRequest run_from_flags(const cli::ArgParser& f) {
  RunRequest r;
  RunSpec& s = r.spec;
  s.problem = cli::problem_from_flags(f);
  const trace::TraceOptions tiling = cli::tiling_from_flags(f);
  if (tiling.algorithm == workload::Algorithm::fa1_swapped || tiling.algorithm == workload::Algorithm::standard_eager)
    throw InputError("--algo " + std::string(workload::to_string(tiling.algorithm)) +
                     " is simulation-only, with no CUDA kernel (valid: standard, fa1, fa2, splitkv)");
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
  s.data_seed = static_cast<std::uint64_t>(f.integer("seed").value_or(1));
  s.q_scale = f.real("q-scale").value_or(1.0);
  return r;
}

}  // namespace iosim::harness
