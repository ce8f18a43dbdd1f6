#include "sim/cli/scenario.h"

#include "sim/cli/problem_flags.h"
#include "sim/common/error.h"

namespace iosim::cli {

using Kind = ArgParser::Kind;

void add_scenario_flags(ArgParser& p) {
  p.add("profile", Kind::text, "NAME|FILE", "hardware profile name (see 'iosim profiles') or a YAML path [a100-sxm4-40gb]");
  add_problem_flags(p);
}

workload::Problem gpt2_medium_problem() {
  workload::Problem p;
  p.batch = 64;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = p.seq_k = 1024;
  p.head_dim = 64;
  p.dtype = workload::DType::fp16;
  return p;
}

Scenario scenario_from_flags(const ArgParser& a) {
  Scenario s;
  s.profile = profile::find_profile(a.text("profile").value_or("a100-sxm4-40gb"), profile::default_profile_dir());
  s.problem = problem_from_flags(a);
  if (s.problem.dtype == workload::DType::bf16 && s.profile.tensor_bf16_flops_per_s <= 0)
    throw InputError("profile '" + s.profile.name + "' has no bf16 tensor cores (use --dtype fp16 or fp32)");
  s.options = tiling_from_flags(a);
  s.options.sram_limit_bytes = s.profile.smem_per_block_bytes;
  return s;
}

}  // namespace iosim::cli
