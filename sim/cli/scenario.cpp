#include "sim/cli/scenario.h"

#include "sim/common/error.h"
#include "sim/profile/profile_names.h"
#include "sim/trace/kernel_tiles.h"

namespace iosim::cli {

using Kind = ArgParser::Kind;

void add_profile_flag(ArgParser& p) {
  p.add("profile", Kind::text, "NAME|FILE",
        "hardware profile: a name from 'iosim profiles' (any case), an alias (a100, h100, h200), a unique prefix,\n"
        "      or a path to a .yaml file [a100-sxm4-40gb]");
}

profile::HardwareProfile profile_from_flag(const ArgParser& a) {
  return profile::find_profile_by_any_name(a.text("profile").value_or("a100-sxm4-40gb"), profile::default_profile_dir());
}

void add_scenario_flags(ArgParser& p) {
  add_profile_flag(p);
  p.add("algo", Kind::text, "ALGO", "standard | fa1 | fa2 | fa1-swapped (forward-only teaching variant) [fa2]")
      .add("pass", Kind::text, "PASS", "fwd | bwd | fwdbwd [fwd]")
      .add("batch", Kind::integer, "B", "batch size [1]")
      .add("heads", Kind::integer, "H", "query heads [1]")
      .add("kv-heads", Kind::integer, "HKV", "key/value heads (GQA/MQA; H divisible by HKV) [H]")
      .add("seq", Kind::integer, "N", "sequence length of queries and keys")
      .add("seq-q", Kind::integer, "NQ", "query length (with --seq-k, instead of --seq)")
      .add("seq-k", Kind::integer, "NK", "key length (with --seq-q, instead of --seq)")
      .add("head-dim", Kind::integer, "D", "head dimension")
      .add("dtype", Kind::text, "T", "fp16 | bf16 | fp32 [fp16]")
      .add("causal", Kind::flag, "", "causal mask, bottom-right aligned (row r sees keys <= r + Nk - Nq)")
      .add("block-density", Kind::real, "S", "block-sparse: fraction of (block-m x block-n) tiles kept, in (0, 1]")
      .add("mask-seed", Kind::integer, "SEED", "seed of the random block mask [0]")
      .add("block-mask", Kind::text, "FILE",
           "block-sparse mask file: rows of 0/1, one per block row, on the tile grid or at a granularity\n"
           "      that divides evenly (README: Conventions)")
      .add("block-m", Kind::integer, "BR", "query rows per tile (with --block-n) [paper's rule]")
      .add("block-n", Kind::integer, "BC", "key columns per tile (with --block-m) [paper's rule]")
      .add("gemm-m", Kind::integer, "TM", "standard attention GEMM tile rows [128]")
      .add("gemm-n", Kind::integer, "TN", "standard attention GEMM tile columns [128]")
      .add("gemm-k", Kind::integer, "TK", "standard attention GEMM reduction chunk [32]")
      .add("layout", Kind::text, "L", "bshd (FlashAttention's default) | bhsd [bshd]");
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

// An integer flag that must be positive, checked under the flag's own name
// (so `--seq -5` is not reported as seq-q).
std::optional<i64> positive(const ArgParser& a, const std::string& name) {
  const auto v = a.integer(name);
  if (v && *v <= 0) throw InputError("--" + name + " must be positive (got " + std::to_string(*v) + ")");
  return v;
}

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
  o.block_rule = o.algorithm == workload::Algorithm::standard
                     ? "kernel: the compiled GEMM tile nearest to " + std::to_string(g.m) + "x" + std::to_string(g.n) +
                           "x" + std::to_string(g.k)
                     : "kernel: the compiled tile nearest to the paper's rule (" + std::to_string(rule.block_m) +
                           " x " + std::to_string(rule.block_n) + ")";
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

Scenario scenario_from_flags(const ArgParser& a) {
  Scenario s;
  s.profile = profile_from_flag(a);
  auto& p = s.problem;
  p.batch = positive(a, "batch").value_or(1);
  p.heads = positive(a, "heads").value_or(1);
  p.kv_heads = positive(a, "kv-heads").value_or(p.heads);
  if (a.has("seq") && (a.has("seq-q") || a.has("seq-k")))
    throw InputError("give either --seq N or both --seq-q and --seq-k, not both");
  if (a.has("seq")) {
    p.seq_q = p.seq_k = *positive(a, "seq");
  } else if (a.has("seq-q") && a.has("seq-k")) {
    p.seq_q = *positive(a, "seq-q");
    p.seq_k = *positive(a, "seq-k");
  } else {
    throw InputError("the sequence length is required: --seq N, or --seq-q NQ --seq-k NK");
  }
  if (!a.has("head-dim")) throw InputError("--head-dim D is required");
  p.head_dim = *positive(a, "head-dim");
  p.dtype = workload::parse_dtype(a.text("dtype").value_or("fp16"));
  p.causal = a.flag("causal");
  p.layout = workload::parse_layout(a.text("layout").value_or("bshd"));
  if (a.has("block-density") && a.has("block-mask"))
    throw InputError("give either --block-density or --block-mask, not both");
  if (a.has("mask-seed") && !a.has("block-density"))
    throw InputError("--mask-seed only applies with --block-density");
  if (a.has("block-density")) {
    p.sparsity.kind = workload::SparsitySpec::Kind::random_density;
    p.sparsity.density = *a.real("block-density");
    const i64 seed = a.integer("mask-seed").value_or(0);
    if (seed < 0) throw InputError("--mask-seed must be >= 0 (got " + std::to_string(seed) + ")");
    p.sparsity.seed = static_cast<std::uint64_t>(seed);
  } else if (a.has("block-mask")) {
    p.sparsity.kind = workload::SparsitySpec::Kind::file;
    p.sparsity.file = *a.text("block-mask");
  }
  p.validate();
  if (p.dtype == workload::DType::bf16 && s.profile.tensor_bf16_flops_per_s <= 0)
    throw InputError("profile '" + s.profile.name + "' has no bf16 tensor cores (use --dtype fp16 or fp32)");

  auto& o = s.options;
  o.algorithm = workload::parse_algorithm(a.text("algo").value_or("fa2"));
  o.pass = workload::parse_pass(a.text("pass").value_or("fwd"));
  o.block_m = positive(a, "block-m");
  o.block_n = positive(a, "block-n");
  o.gemm.m = positive(a, "gemm-m").value_or(o.gemm.m);
  o.gemm.n = positive(a, "gemm-n").value_or(o.gemm.n);
  o.gemm.k = positive(a, "gemm-k").value_or(o.gemm.k);
  o.sram_limit_bytes = s.profile.smem_per_block_bytes;
  apply_tiles_flag(a, s.problem, o);
  return s;
}

}  // namespace iosim::cli
