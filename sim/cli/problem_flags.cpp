#include "sim/cli/problem_flags.h"

#include <optional>
#include <string>

#include "sim/common/error.h"

namespace iosim::cli {

using Kind = ArgParser::Kind;

namespace {

// An integer flag that must be positive, checked under the flag's own name
// (so `--seq -5` is not reported as seq-q).
std::optional<i64> positive(const ArgParser& a, const std::string& name) {
  const auto v = a.integer(name);
  if (v && *v <= 0) throw InputError("--" + name + " must be positive (got " + std::to_string(*v) + ")");
  return v;
}

}  // namespace

void add_problem_flags(ArgParser& p, const ProblemFlagsHelp& help) {
  p.add("algo", Kind::text, "ALGO", help.algorithms + " [" + help.default_algorithm + "]")
      .add("pass", Kind::text, "PASS", help.passes + " [fwd]")
      .add("batch", Kind::integer, "B", "batch size [1]")
      .add("heads", Kind::integer, "H", "query heads [1]")
      .add("kv-heads", Kind::integer, "HKV", "key/value heads (GQA/MQA; H divisible by HKV) [H]")
      .add("seq", Kind::integer, "N", "sequence length of queries and keys")
      .add("seq-q", Kind::integer, "NQ", "query length (with --seq-k, instead of --seq)")
      .add("seq-k", Kind::integer, "NK", "key length (with --seq-q, instead of --seq)")
      .add("head-dim", Kind::integer, "D", "head dimension")
      .add("dtype", Kind::text, "T", help.dtypes + " [fp16]")
      .add("causal", Kind::flag, "", "causal mask, bottom-right aligned (row r sees keys <= r + Nk - Nq)")
      .add("block-density", Kind::real, "S", "block-sparse: fraction of (block-m x block-n) tiles kept, in (0, 1]")
      .add("mask-seed", Kind::integer, "SEED", "seed of the random block mask [0]")
      .add("block-mask", Kind::text, "FILE",
           "block-sparse mask file: rows of 0/1, one per block row, on the tile grid or at a granularity\n"
           "      that divides evenly (README: Conventions)")
      .add("block-m", Kind::integer, "BR", "query rows per tile (with --block-n) [" + help.default_tiling + "]")
      .add("block-n", Kind::integer, "BC", "key columns per tile (with --block-m) [" + help.default_tiling + "]")
      .add("splits", Kind::integer, "S",
           "splitkv: key-range splits per query block, 1..ceil(NK/BC) [enough CTAs to fill the SMs once:\n"
           "      ceil(SMs / (B*H*ceil(NQ/BR))), at most the key blocks]")
      .add("gemm-m", Kind::integer, "TM", "standard attention GEMM tile rows [128]")
      .add("gemm-n", Kind::integer, "TN", "standard attention GEMM tile columns [128]")
      .add("gemm-k", Kind::integer, "TK", "standard attention GEMM reduction chunk [32; 64 with --gemm-impl wgmma]")
      .add("gemm-impl", Kind::text, "IMPL",
           "standard attention's GEMM kernel: mma (mma.sync + cp.async, any GPU) | wgmma (Hopper's TMA +\n"
           "      wgmma, tile 128x128x64 only; N_k not a multiple of 8 falls back to mma, as the kernel does) [mma]")
      .add("layout", Kind::text, "L", "bshd (FlashAttention's default) | bhsd [bshd]");
}

workload::Problem problem_from_flags(const ArgParser& a) {
  workload::Problem p;
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
  return p;
}

trace::TraceOptions tiling_from_flags(const ArgParser& a) {
  trace::TraceOptions o;
  o.algorithm = workload::parse_algorithm(a.text("algo").value_or("fa2"));
  o.pass = workload::parse_pass(a.text("pass").value_or("fwd"));
  o.block_m = positive(a, "block-m");
  o.block_n = positive(a, "block-n");
  o.splits = positive(a, "splits");
  if (const auto impl = a.text("gemm-impl")) {
    if (*impl == "wgmma") {
      o.gemm.impl = schedule::GemmImpl::wgmma;
      o.gemm.k = schedule::WgmmaGemmShape::kTileK;  // its one tile's depth unless --gemm-k says otherwise (then an error)
    } else if (*impl != "mma") {
      throw InputError("--gemm-impl '" + *impl + "' is not a GEMM kernel (valid: mma, wgmma)");
    }
  }
  o.gemm.m = positive(a, "gemm-m").value_or(o.gemm.m);
  o.gemm.n = positive(a, "gemm-n").value_or(o.gemm.n);
  o.gemm.k = positive(a, "gemm-k").value_or(o.gemm.k);
  return o;
}

}  // namespace iosim::cli
