#include "sim/cli/scenario.h"

#include <algorithm>

#include "sim/cli/problem_flags.h"
#include "sim/common/error.h"
#include "sim/profile/profile_names.h"
#include "sim/trace/kernel_tiles.h"

namespace iosim::cli {

using Kind = ArgParser::Kind;

void add_profile_flag(ArgParser& p) {
  p.add("profile", Kind::text, "NAME|FILE",
        "hardware profile: a name from 'iosim profiles' (any case), an alias (a100, h100, h200), a unique prefix,\n"
        "      or a path to a .yaml file [a100-sxm4-40gb]")
      .add("set", Kind::repeated, "KEY=VALUE",
           "use VALUE for the profile's KEY, written as in a profile file, e.g. sm.smem_per_block=48KiB\n"
           "      (keys: hw_profiles/README.md; checked like the file's own values)");
}

std::vector<profile::ProfileOverride> profile_overrides_from_flag(const ArgParser& a) {
  std::vector<profile::ProfileOverride> out;
  for (const std::string& text : a.texts("set")) {
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
      throw InputError("--set '" + text + "': expected KEY=VALUE, e.g. --set sm.smem_per_block=48KiB");
    out.push_back({text.substr(0, eq), text.substr(eq + 1)});
  }
  return out;
}

profile::HardwareProfile profile_from_flag(const ArgParser& a) {
  const auto overrides = profile_overrides_from_flag(a);
  try {
    return profile::find_profile_by_any_name(a.text("profile").value_or("a100-sxm4-40gb"),
                                             profile::default_profile_dir(), overrides);
  } catch (const InputError& e) {
    const bool list = std::any_of(overrides.begin(), overrides.end(),
                                  [](const auto& o) { return o.value.find(',') != std::string::npos; });
    if (list) throw InputError(std::string(e.what()) + "; a list of values is for 'iosim sweep'");
    throw;
  }
}

void add_scenario_flags(ArgParser& p) {
  add_profile_flag(p);
  add_problem_flags(p);
  add_tiles_flag(p);
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

namespace {


// --tiles kernel: the compiled tile nearest to the paper's rule (standard
// attention: to the GEMM tile asked for).
void choose_kernel_tiles(const workload::Problem& problem, trace::TraceOptions& o) {
  if (o.block_m || o.block_n) throw InputError("--tiles kernel chooses Br and Bc: give it or --block-m/--block-n, not both");
  const auto rule = trace::default_tiling(problem, o.algorithm, o.pass, o.gemm, o.sram_limit_bytes);
  std::string why;
  const auto tile = trace::nearest_kernel_tiling(problem, o.algorithm, o.pass, rule.block_m, rule.block_n, o.gemm,
                                                 o.sram_limit_bytes, why);
  if (!tile) throw InputError("--tiles kernel: no compiled kernel for this problem: " + why);
  const auto& g = o.gemm;
  o.block_rule = workload::is_standard(o.algorithm)
                     ? "kernel: the compiled GEMM tile nearest to " + std::to_string(g.m) + "x" + std::to_string(g.n) +
                           "x" + std::to_string(g.k)
                     : "kernel: the compiled tile nearest to " +
                           std::string(o.algorithm == workload::Algorithm::splitkv ? "splitkv's default"
                                                                                   : "the paper's rule") +
                           " (" + std::to_string(rule.block_m) + " x " + std::to_string(rule.block_n) + ")";
  o.block_m = tile->block_m;
  o.block_n = tile->block_n;
  o.gemm = tile->gemm;
}

}  // namespace

void add_tiles_flag(ArgParser& p) {
  p.add("tiles", Kind::text, "rule|kernel",
        "rule: the paper's block rule; kernel: the compiled CUDA kernel tile nearest to it (standard: the\n"
        "      nearest compiled GEMM tile), so every kernel has a real counterpart [rule]");
}

void apply_tiles_flag(const ArgParser& a, const workload::Problem& problem, trace::TraceOptions& o) {
  const std::string tiles = a.text("tiles").value_or("rule");
  if (tiles == "kernel") choose_kernel_tiles(problem, o);
  else if (tiles != "rule") throw InputError("--tiles '" + tiles + "': expected rule or kernel");
}

Scenario scenario_from_flags(const ArgParser& a) { return scenario_from_flags(a, profile_from_flag(a)); }

Scenario scenario_from_flags(const ArgParser& a, profile::HardwareProfile profile) {
  Scenario s;
  s.profile = std::move(profile);
  s.problem = problem_from_flags(a);
  if (s.problem.dtype == workload::DType::bf16 && s.profile.tensor_bf16_flops_per_s <= 0)
    throw InputError("profile '" + s.profile.name + "' has no bf16 tensor cores (use --dtype fp16 or fp32)");
  s.options = tiling_from_flags(a);
  s.options.sram_limit_bytes = s.profile.smem_per_block_bytes;
  s.options.sm_count = s.profile.sm_count;
  apply_tiles_flag(a, s.problem, s.options);
  return s;
}

}  // namespace iosim::cli
