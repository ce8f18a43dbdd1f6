#include "sim/numerics/check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

#include "sim/common/error.h"
#include "sim/schedule/attention_tiles.h"

namespace iosim::numerics {

namespace {

HeadTensor random_tensor(std::mt19937_64& rng, i64 slices, i64 rows, i64 cols, double scale) {
  std::normal_distribution<double> normal(0.0, 1.0);
  HeadTensor t(static_cast<size_t>(slices), HeadMatrix(rows, cols));
  for (HeadMatrix& m : t)
    for (double& x : m.values) {
      double draw = normal(rng);
      while (draw == 0.0) draw = normal(rng);  // never an exact zero
      x = scale * draw;
    }
  return t;
}

bool has_forward(workload::Pass p) { return p != workload::Pass::bwd; }
bool has_backward(workload::Pass p) { return p != workload::Pass::fwd; }

OutputError output_error(const std::string& name, const HeadTensor& x, const HeadTensor& ref) {
  const ErrorNorms n = compare(x, ref);
  return {name, n.max_abs_ref, n.max_abs_error, n.relative()};
}

std::string problem_summary(const workload::Problem& p) {
  std::ostringstream s;
  s << "batch " << p.batch << ", heads " << p.heads << " (kv " << p.kv_heads << "), seq_q " << p.seq_q
    << ", seq_k " << p.seq_k << ", head_dim " << p.head_dim << (p.causal ? ", causal" : "")
    << (p.sparsity.is_dense() ? "" : ", block-sparse");
  return s.str();
}

}  // namespace

AttentionInputs random_inputs(const workload::Problem& p, std::uint64_t seed, double logit_scale) {
  p.validate();
  if (!(logit_scale > 0.0) || !std::isfinite(logit_scale))
    throw InputError("logit scale must be positive and finite (got " + std::to_string(logit_scale) + ")");
  std::mt19937_64 rng(seed);
  AttentionInputs in;
  in.q = random_tensor(rng, p.batch * p.heads, p.seq_q, p.head_dim, logit_scale);
  in.k = random_tensor(rng, p.batch * p.kv_heads, p.seq_k, p.head_dim, 1.0);
  in.v = random_tensor(rng, p.batch * p.kv_heads, p.seq_k, p.head_dim, 1.0);
  in.d_o = random_tensor(rng, p.batch * p.heads, p.seq_q, p.head_dim, 1.0);
  return in;
}

NumericsReport check_numerics(const workload::Problem& problem, workload::Algorithm algorithm, workload::Pass pass,
                              i64 block_m, i64 block_n, std::uint64_t seed, const CheckOptions& options) {
  problem.validate();
  if (block_m <= 0 || block_n <= 0)
    throw InputError("numerics check: block sizes must be positive (got block_m " + std::to_string(block_m) +
                     ", block_n " + std::to_string(block_n) + ")");
  NumericsReport report{problem, algorithm, pass, block_m, block_n, seed, options.logit_scale, 0, 0, {}};

  // One materialised mask, shared by the tiled run and the reference.
  const ReferenceMask ref_mask = reference_mask(problem, block_m, block_n);
  const TiledOptions tiling{block_m, block_n, ref_mask.blocks, options.fault, options.splits};
  const i64 m_blocks = ceil_div(problem.seq_q, block_m), n_blocks = ceil_div(problem.seq_k, block_n);

  schedule::AttentionTiles tiles{problem.seq_q, problem.seq_k, block_m, block_n, problem.causal, {}};
  if (!tiling.mask.active.empty()) tiles.mask = {tiling.mask.active.data(), m_blocks, n_blocks};
  report.total_blocks = m_blocks * n_blocks;
  for (i64 i = 0; i < m_blocks; ++i) report.active_blocks += tiles.active_in_row(i);

  const AttentionInputs in = random_inputs(problem, seed, options.logit_scale);
  const TiledForward fwd = tiled_forward(algorithm, problem, in, tiling);
  if (has_forward(pass)) {
    const ForwardResult ref = reference_forward(problem, in, ref_mask);
    report.errors.push_back(output_error("O", fwd.o, ref.o));
    report.errors.push_back(output_error("L", fwd.lse, ref.lse));
  }
  if (has_backward(pass)) {
    const TiledBackward bwd = tiled_backward(algorithm, problem, in, fwd, tiling);
    const GradResult ref = reference_backward(problem, in, ref_mask);
    report.errors.push_back(output_error("dQ", bwd.grads.dq, ref.dq));
    report.errors.push_back(output_error("dK", bwd.grads.dk, ref.dk));
    report.errors.push_back(output_error("dV", bwd.grads.dv, ref.dv));
  }
  return report;
}

double NumericsReport::max_relative() const {
  double worst = 0.0;
  for (const OutputError& e : errors) {
    if (std::isnan(e.relative)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, e.relative);
  }
  return worst;
}

const OutputError& NumericsReport::error(const std::string& name) const {
  for (const OutputError& e : errors)
    if (e.name == name) return e;
  throw InputError("numerics report: output '" + name + "' is not reported for pass " +
                   std::string(workload::to_string(pass)));
}

std::string NumericsReport::to_string() const {
  std::ostringstream s;
  s << "numerics: " << workload::to_string(algorithm) << " " << workload::to_string(pass) << ", "
    << problem_summary(problem) << "\n"
    << "tiling " << block_m << " x " << block_n << " (" << active_blocks << " of " << total_blocks
    << " tiles active per head), seed " << seed << ", logit scale " << logit_scale << "\n"
    << "error = max|x - ref| / max|ref| over all batch, heads and elements; ref in double\n";
  char line[128];
  std::snprintf(line, sizeof line, "%-6s %14s %14s %14s\n", "output", "max|ref|", "max|x-ref|", "rel. error");
  s << line;
  for (const OutputError& e : errors) {
    std::snprintf(line, sizeof line, "%-6s %14.6e %14.6e %14.6e\n", e.name.c_str(), e.max_abs_ref,
                  e.max_abs_error, e.relative);
    s << line;
  }
  return s.str();
}

}  // namespace iosim::numerics
