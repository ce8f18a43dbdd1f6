// Numerics: every algorithm's tiled loop nest, executed in double on the CPU,
// equals the double-precision reference up to rounding; the reference itself
// is checked against finite differences and closed-form cases.
#define BOOST_TEST_MODULE numerics
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "sim/common/error.h"
#include "sim/numerics/check.h"
#include "sim/numerics/reference.h"
#include "sim/numerics/tiled.h"

using namespace iosim;
using namespace iosim::numerics;
using workload::Algorithm;
using workload::Pass;
using workload::Problem;

namespace {

constexpr double kBound = 1e-12;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Problem make_problem(i64 batch, i64 heads, i64 kv_heads, i64 seq_q, i64 seq_k, i64 head_dim, bool causal) {
  Problem p;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.seq_q = seq_q;
  p.seq_k = seq_k;
  p.head_dim = head_dim;
  p.causal = causal;
  return p;
}

// A block-mask file in the temp directory, removed when the test ends.
class MaskFile {
 public:
  MaskFile(const std::string& tag, const std::vector<std::string>& rows)
      : path_(std::filesystem::temp_directory_path() /
              ("iosim_test_numerics_" + tag + "_" + std::to_string(::getpid()) + ".txt")) {
    std::ofstream out(path_);
    for (const std::string& r : rows) out << r << "\n";
  }
  ~MaskFile() { std::filesystem::remove(path_); }
  MaskFile(const MaskFile&) = delete;
  MaskFile& operator=(const MaskFile&) = delete;
  workload::SparsitySpec spec() const {
    workload::SparsitySpec s;
    s.kind = workload::SparsitySpec::Kind::file;
    s.file = path_.string();
    return s;
  }

 private:
  std::filesystem::path path_;
};

struct Case {
  std::string name;
  Problem problem;
  i64 block_m, block_n;
  double logit_scale = 1.0;
};

// 64 x 64 with 16 x 16 tiles: row block 1 is fully masked.
const std::vector<std::string> kSquareMask = {"1 0 1 1", "0 0 0 0", "1 1 0 1", "0 1 1 1"};
// 77 x 45 with 16 x 32 tiles; with causal, row block 3 loses its only
// unmasked tile to the diagonal, so it is fully masked by the combination.
const std::vector<std::string> kRaggedMask = {"1 1", "0 0", "1 0", "0 1", "0 1"};

std::vector<Case> shape_cases(const MaskFile& square_mask, const MaskFile& ragged_mask) {
  std::vector<Case> cases;
  cases.push_back({"ragged dense 77x45, tiles 16x32", make_problem(1, 2, 2, 77, 45, 32, false), 16, 32});
  cases.push_back({"causal seq_q > seq_k", make_problem(1, 2, 2, 77, 45, 32, true), 16, 32});
  cases.push_back({"causal seq_q < seq_k", make_problem(1, 2, 2, 45, 77, 32, true), 16, 32});
  cases.push_back({"causal square ragged, batch 2", make_problem(2, 1, 1, 50, 50, 16, true), 16, 16});
  cases.push_back({"GQA heads 4 / kv 2, causal", make_problem(1, 4, 2, 40, 56, 16, true), 16, 16});
  cases.push_back({"MQA heads 4 / kv 1", make_problem(1, 4, 1, 33, 70, 16, false), 8, 16});
  cases.push_back({"MQA heads 4 / kv 1, causal, seq_q > seq_k", make_problem(1, 4, 1, 70, 33, 16, true), 16, 8});
  Problem sparse = make_problem(1, 2, 1, 64, 64, 16, false);
  sparse.sparsity = square_mask.spec();
  cases.push_back({"block sparse, masked row block", sparse, 16, 16});
  sparse.causal = true;
  cases.push_back({"block sparse + causal", sparse, 16, 16});
  Problem ragged_sparse = make_problem(1, 2, 2, 77, 45, 32, true);
  ragged_sparse.sparsity = ragged_mask.spec();
  cases.push_back({"block sparse + causal, ragged, seq_q > seq_k", ragged_sparse, 16, 32});
  cases.push_back({"large logits (+-30), causal ragged", make_problem(1, 2, 2, 77, 45, 32, true), 16, 32, 30.0});
  cases.push_back({"large logits (+-30), GQA", make_problem(1, 4, 2, 48, 64, 16, false), 16, 16, 30.0});
  cases.push_back({"head_dim 64, tiles 64x32, ragged", make_problem(1, 2, 2, 130, 200, 64, true), 64, 32});
  cases.push_back({"one tile larger than the problem", make_problem(1, 1, 1, 77, 45, 16, true), 128, 128});
  cases.push_back({"1 x 3 tiles", make_problem(1, 1, 1, 37, 29, 8, true), 1, 3});
  return cases;
}

std::vector<Algorithm> all_algorithms() {
  return {Algorithm::standard, Algorithm::fa1, Algorithm::fa1_swapped, Algorithm::fa2};
}
// fa1-swapped has no backward pass (build_trace rejects it too).
std::vector<Pass> passes_of(Algorithm a) {
  if (a == Algorithm::fa1_swapped) return {Pass::fwd};
  return {Pass::fwd, Pass::bwd, Pass::fwdbwd};
}
size_t outputs_of(Pass p) { return p == Pass::fwd ? 2 : p == Pass::bwd ? 3 : 5; }

TiledOptions tiling_for(const Problem& p, i64 bm, i64 bn) {
  return {bm, bn, reference_mask(p, bm, bn).blocks, InjectedFault::none};
}

// Elements of S in tiles that hold at least one visible element, counted
// straight from the definition (not through the schedule).
i64 visible_tile_elements(const Problem& p, const TiledOptions& opt) {
  const i64 mb = (p.seq_q + opt.block_m - 1) / opt.block_m, nb = (p.seq_k + opt.block_n - 1) / opt.block_n;
  i64 total = 0;
  for (i64 i = 0; i < mb; ++i)
    for (i64 j = 0; j < nb; ++j) {
      if (!opt.mask.active.empty() && opt.mask.active[static_cast<size_t>(i * nb + j)] == 0) continue;
      const i64 r0 = i * opt.block_m, r1 = std::min(p.seq_q, r0 + opt.block_m);
      const i64 c0 = j * opt.block_n, c1 = std::min(p.seq_k, c0 + opt.block_n);
      bool any = false;
      for (i64 r = r0; r < r1 && !any; ++r)
        for (i64 c = c0; c < c1 && !any; ++c) any = !p.causal || c <= r + (p.seq_k - p.seq_q);
      if (any) total += (r1 - r0) * (c1 - c0);
    }
  return total * p.batch * p.heads;
}

bool has_nan(const HeadTensor& t) {
  for (const HeadMatrix& m : t)
    for (double x : m.values)
      if (std::isnan(x)) return true;
  return false;
}

// sum(dO o O): its gradient with respect to Q, K, V is what the backward pass returns.
double loss(const Problem& p, const AttentionInputs& in, const ReferenceMask& mask, const iosim::DropoutRule& drop = {}) {
  const ForwardResult f = reference_forward(p, in, mask, drop);
  double sum = 0.0;
  for (size_t s = 0; s < f.o.size(); ++s)
    for (size_t e = 0; e < f.o[s].values.size(); ++e) sum += f.o[s].values[e] * in.d_o[s].values[e];
  return sum;
}

}  // namespace

// ---------------------------------------------------------------------------
// The reference.

BOOST_AUTO_TEST_CASE(reference_row_with_one_visible_key_returns_that_value_row) {
  // Causal, square: row 0 sees key 0 only, so O[0] = V[0] and L[0] = scale q0.k0.
  const Problem p = make_problem(1, 1, 1, 9, 9, 8, true);
  const AttentionInputs in = random_inputs(p, 3);
  const ForwardResult f = reference_forward(p, in);
  double dot = 0.0;
  for (i64 x = 0; x < p.head_dim; ++x) {
    BOOST_TEST(f.o[0](0, x) == in.v[0](0, x));
    dot += in.q[0](0, x) * in.k[0](0, x);
  }
  BOOST_TEST(f.lse[0](0, 0) == dot / std::sqrt(8.0), boost::test_tools::tolerance(1e-14));
  // Non-causal with two keys: O is the two-way softmax blend.
  const Problem two = make_problem(1, 1, 1, 3, 2, 4, false);
  const AttentionInputs in2 = random_inputs(two, 4);
  const ForwardResult f2 = reference_forward(two, in2);
  for (i64 r = 0; r < 3; ++r) {
    double s[2];
    for (i64 c = 0; c < 2; ++c) {
      s[c] = 0.0;
      for (i64 x = 0; x < 4; ++x) s[c] += in2.q[0](r, x) * in2.k[0](c, x);
      s[c] /= 2.0;  // sqrt(4)
    }
    const double w0 = 1.0 / (1.0 + std::exp(s[1] - s[0]));
    for (i64 x = 0; x < 4; ++x)
      BOOST_TEST(f2.o[0](r, x) == w0 * in2.v[0](0, x) + (1 - w0) * in2.v[0](1, x),
                 boost::test_tools::tolerance(1e-13));
    BOOST_TEST(f2.lse[0](r, 0) == std::log(std::exp(s[0]) + std::exp(s[1])), boost::test_tools::tolerance(1e-13));
  }
}

BOOST_AUTO_TEST_CASE(reference_gradients_match_central_differences) {
  // GQA (2 query heads on 1 KV head), causal with seq_q > seq_k, and a block
  // mask: every rule the backward pass must respect; without and with
  // standard-eager's dropout (its mask depends on the positions alone).
  Problem p = make_problem(1, 2, 1, 11, 7, 4, true);
  ReferenceMask mask;
  mask.block_m = 4;
  mask.block_n = 4;
  mask.blocks = {3, 2, {1, 1, 1, 0, 0, 1}};
  for (const iosim::DropoutRule drop : {iosim::DropoutRule{}, iosim::DropoutRule{0.3, 5}}) {
    AttentionInputs in = random_inputs(p, 11);
    const GradResult g = reference_backward(p, in, mask, drop);
    const double h = 1e-6;
    auto check = [&](HeadTensor& t, const HeadTensor& grad, const char* name) {
      for (size_t s = 0; s < t.size(); ++s)
        for (size_t e = 0; e < t[s].values.size(); ++e) {
          const double keep = t[s].values[e];
          t[s].values[e] = keep + h;
          const double up = loss(p, in, mask, drop);
          t[s].values[e] = keep - h;
          const double down = loss(p, in, mask, drop);
          t[s].values[e] = keep;
          BOOST_TEST_CONTEXT(name << " slice " << s << " element " << e << " dropout " << drop.p) {
            BOOST_TEST(std::abs((up - down) / (2 * h) - grad[s].values[e]) < 1e-7);
          }
        }
    };
    check(in.q, g.dq, "dQ");
    check(in.k, g.dk, "dK");
    check(in.v, g.dv, "dV");
  }
}

// Dropout replaces P by P o Z / (1 - p): O's row r is then the kept keys'
// weights, scaled by 1 / (1 - p), times V; p = 0 changes nothing.
BOOST_AUTO_TEST_CASE(reference_dropout_scales_the_kept_probabilities) {
  const Problem p = make_problem(1, 2, 2, 6, 5, 4, false);
  const AttentionInputs in = random_inputs(p, 12);
  const iosim::DropoutRule drop{0.4, 9};
  const ForwardResult plain = reference_forward(p, in), none = reference_forward(p, in, {}, {0.0, 9});
  const ForwardResult dropped = reference_forward(p, in, {}, drop);
  BOOST_TEST(plain.o[1].values == none.o[1].values, boost::test_tools::per_element());
  const double scale = 1.0 / std::sqrt(4.0);
  i64 kept = 0;
  for (i64 r = 0; r < p.seq_q; ++r) {
    // Row r of head 1 by hand: softmax weights from the scores, kept ones scaled.
    std::vector<double> w(static_cast<size_t>(p.seq_k));
    double sum = 0;
    for (i64 c = 0; c < p.seq_k; ++c) {
      double s = 0;
      for (i64 x = 0; x < p.head_dim; ++x) s += in.q[1](r, x) * in.k[1](c, x);
      sum += w[static_cast<size_t>(c)] = std::exp(scale * s);
    }
    for (i64 x = 0; x < p.head_dim; ++x) {
      double o = 0;
      for (i64 c = 0; c < p.seq_k; ++c) {
        const bool keep = drop.keeps(((0 * p.heads + 1) * p.seq_q + r) * p.seq_k + c);
        kept += x == 0 && keep;
        o += keep ? w[static_cast<size_t>(c)] / sum / (1.0 - drop.p) * in.v[1](c, x) : 0.0;
      }
      BOOST_TEST(dropped.o[1](r, x) == o, boost::test_tools::tolerance(1e-12));
    }
  }
  BOOST_TEST((kept > 0 && kept < p.seq_q * p.seq_k));  // the case drops some keys and keeps some
  BOOST_CHECK_THROW(reference_forward(p, in, {}, {1.0, 9}), iosim::InputError);
}

BOOST_AUTO_TEST_CASE(reference_rows_without_visible_keys_output_zero) {
  const Problem p = make_problem(1, 1, 1, 10, 6, 4, true);  // rows 0..3 see nothing
  const AttentionInputs in = random_inputs(p, 5);
  const ForwardResult f = reference_forward(p, in);
  const GradResult g = reference_backward(p, in);
  for (i64 r = 0; r < 4; ++r) {
    BOOST_TEST(f.lse[0](r, 0) == kNegInf);
    for (i64 x = 0; x < 4; ++x) {
      BOOST_TEST(f.o[0](r, x) == 0.0);
      BOOST_TEST(g.dq[0](r, x) == 0.0);
    }
  }
  BOOST_TEST(std::isfinite(f.lse[0](4, 0)));
}

BOOST_AUTO_TEST_CASE(flat_buffers_follow_bshd_and_bhsd_indexing) {
  const i64 B = 2, H = 3, S = 5, D = 4;
  for (auto layout : {workload::Layout::bshd, workload::Layout::bhsd}) {
    std::vector<float> flat(static_cast<size_t>(B * H * S * D));
    // Element (b, s, h, x) written where the layout's formula puts it.
    for (i64 b = 0; b < B; ++b)
      for (i64 s = 0; s < S; ++s)
        for (i64 h = 0; h < H; ++h)
          for (i64 x = 0; x < D; ++x) {
            const i64 at = layout == workload::Layout::bshd ? ((b * S + s) * H + h) * D + x
                                                            : ((b * H + h) * S + s) * D + x;
            flat[static_cast<size_t>(at)] = static_cast<float>(1000 * b + 100 * h + 10 * s + x);
          }
    const HeadTensor t = from_flat(flat, B, H, S, D, layout);
    BOOST_TEST(t.size() == static_cast<size_t>(B * H));
    for (i64 b = 0; b < B; ++b)
      for (i64 h = 0; h < H; ++h)
        for (i64 s = 0; s < S; ++s)
          for (i64 x = 0; x < D; ++x) BOOST_TEST(t[static_cast<size_t>(b * H + h)](s, x) == 1000 * b + 100 * h + 10 * s + x);
    BOOST_TEST(to_flat_float(t, B, H, layout) == flat);
  }
  BOOST_CHECK_THROW(from_flat(std::vector<float>(7), B, H, S, D, workload::Layout::bshd), InputError);
}

// ---------------------------------------------------------------------------
// Tiled executions against the reference.

BOOST_AUTO_TEST_CASE(tiled_algorithms_match_reference_within_1e_12) {
  const MaskFile square("square", kSquareMask), ragged("ragged", kRaggedMask);
  std::uint64_t seed = 100;
  double worst = 0.0;
  for (const Case& c : shape_cases(square, ragged))
    for (Algorithm a : all_algorithms())
      for (Pass pass : passes_of(a)) {
        CheckOptions opt;
        opt.logit_scale = c.logit_scale;
        const NumericsReport r = check_numerics(c.problem, a, pass, c.block_m, c.block_n, ++seed, opt);
        worst = std::max(worst, r.max_relative());
        BOOST_TEST_CONTEXT(c.name << ", " << workload::to_string(a) << "\n" << r.to_string()) {
          BOOST_TEST(r.errors.size() == outputs_of(pass));
          for (const OutputError& e : r.errors) {
            BOOST_TEST_CONTEXT(e.name) {
              BOOST_TEST(e.relative <= kBound);
              BOOST_TEST(e.max_abs_ref > 0.0);  // the comparison is not vacuous
            }
          }
        }
      }
  BOOST_TEST_MESSAGE("worst max-norm relative error over all cases: " << worst);
}

BOOST_AUTO_TEST_CASE(large_logit_cases_really_have_large_logits) {
  // L >= the row's largest scaled score, so max|L| > 30 means logits of that size.
  const NumericsReport r =
      check_numerics(make_problem(1, 2, 2, 77, 45, 32, true), Algorithm::fa2, Pass::fwd, 16, 32, 1, {30.0});
  BOOST_TEST(r.error("L").max_abs_ref > 30.0);
  BOOST_TEST(r.max_relative() <= kBound);
}

BOOST_AUTO_TEST_CASE(tiled_executions_compute_only_active_tiles) {
  const MaskFile square("square", kSquareMask), ragged("ragged", kRaggedMask);
  for (const Case& c : shape_cases(square, ragged)) {
    const TiledOptions opt = tiling_for(c.problem, c.block_m, c.block_n);
    const AttentionInputs in = random_inputs(c.problem, 9);
    const i64 expected = visible_tile_elements(c.problem, opt);
    for (Algorithm a : all_algorithms()) {
      BOOST_TEST_CONTEXT(c.name << ", " << workload::to_string(a)) {
        const TiledForward f = tiled_forward(a, c.problem, in, opt);
        if (a == Algorithm::standard) {
          BOOST_TEST(f.score_elements == c.problem.batch * c.problem.heads * c.problem.seq_q * c.problem.seq_k);
          continue;
        }
        BOOST_TEST(f.score_elements == expected);
        if (a == Algorithm::fa1_swapped) continue;
        BOOST_TEST(tiled_backward(a, c.problem, in, f, opt).score_elements == expected);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fully_masked_rows_are_zero_without_nan) {
  const MaskFile ragged("ragged", kRaggedMask);
  Problem p = make_problem(1, 2, 1, 77, 45, 32, true);
  p.sparsity = ragged.spec();
  const TiledOptions opt = tiling_for(p, 16, 32);
  const AttentionInputs in = random_inputs(p, 21);
  // Rows 0..31 see no key (causal, seq_q - seq_k = 32); rows 48..63 lose
  // their only unmasked tile to the diagonal.
  std::vector<i64> masked_rows;
  for (i64 r = 0; r < 32; ++r) masked_rows.push_back(r);
  for (i64 r = 48; r < 64; ++r) masked_rows.push_back(r);
  for (Algorithm a : all_algorithms()) {
    BOOST_TEST_CONTEXT(workload::to_string(a)) {
      const TiledForward f = tiled_forward(a, p, in, opt);
      BOOST_TEST(!has_nan(f.o));
      BOOST_TEST(!has_nan(f.lse));
      for (size_t h = 0; h < f.o.size(); ++h)
        for (i64 r : masked_rows) {
          BOOST_TEST(f.lse[h](r, 0) == kNegInf);
          for (i64 x = 0; x < p.head_dim; ++x) BOOST_TEST(f.o[h](r, x) == 0.0);
        }
      if (a == Algorithm::fa1_swapped) continue;
      const TiledBackward b = tiled_backward(a, p, in, f, opt);
      BOOST_TEST(!has_nan(b.grads.dq));
      BOOST_TEST(!has_nan(b.grads.dk));
      BOOST_TEST(!has_nan(b.grads.dv));
      for (size_t h = 0; h < b.grads.dq.size(); ++h)
        for (i64 r : masked_rows)
          for (i64 x = 0; x < p.head_dim; ++x) BOOST_TEST(b.grads.dq[h](r, x) == 0.0);
    }
  }
}

// splitkv: the splits' partials merged give the reference's O and L for every
// split count, causal with N_q < N_k (decode) and N_q > N_k (empty splits,
// fully masked rows), GQA, ragged key blocks, large logits.
BOOST_AUTO_TEST_CASE(splitkv_matches_reference_for_every_split_count) {
  struct SplitCase {
    Problem problem;
    i64 block_m, block_n;
    double logit_scale;
  };
  const std::vector<SplitCase> cases = {
      {make_problem(1, 4, 1, 1, 100, 32, true), 16, 16, 1.0},   // decode, MQA
      {make_problem(2, 4, 2, 3, 97, 16, true), 16, 16, 30.0},  // ragged last block, GQA, large logits
      {make_problem(1, 2, 2, 16, 77, 32, false), 16, 8, 1.0},
      {make_problem(1, 2, 2, 77, 45, 32, true), 16, 16, 1.0},  // rows that see nothing; empty splits
  };
  std::uint64_t seed = 500;
  for (const SplitCase& c : cases) {
    const i64 blocks = (c.problem.seq_k + c.block_n - 1) / c.block_n;
    for (const i64 splits : {i64{1}, i64{2}, i64{3}, blocks}) {
      CheckOptions opt;
      opt.logit_scale = c.logit_scale;
      opt.splits = splits;
      const NumericsReport r = check_numerics(c.problem, Algorithm::splitkv, Pass::fwd, c.block_m, c.block_n, ++seed, opt);
      BOOST_TEST_CONTEXT("splits " << splits << "\n" << r.to_string()) {
        BOOST_TEST(r.errors.size() == 2u);
        BOOST_TEST(r.max_relative() <= kBound);
      }
    }
  }
  CheckOptions bad;
  bad.splits = 8;  // 100 keys are 7 blocks of 16
  BOOST_CHECK_THROW(check_numerics(cases[0].problem, Algorithm::splitkv, Pass::fwd, 16, 16, 1, bad), InputError);
  BOOST_CHECK_THROW(check_numerics(cases[0].problem, Algorithm::splitkv, Pass::bwd, 16, 16, 1), InputError);
}

// ---------------------------------------------------------------------------
// The bound bites: a wrong algorithm fails it by orders of magnitude.

BOOST_AUTO_TEST_CASE(wrong_variants_exceed_the_bound) {
  const Problem causal = make_problem(1, 2, 2, 77, 45, 32, true);
  const Problem dense = make_problem(1, 2, 2, 77, 45, 32, false);
  struct Wrong {
    Algorithm algorithm;
    Pass pass;
    InjectedFault fault;
    Problem problem;
  };
  const std::vector<Wrong> wrong = {
      {Algorithm::fa1, Pass::fwd, InjectedFault::fa1_skip_l_rescale, dense},
      {Algorithm::fa1_swapped, Pass::fwd, InjectedFault::fa1_skip_l_rescale, dense},
      {Algorithm::fa1, Pass::bwd, InjectedFault::fa1_skip_l_rescale, dense},
      {Algorithm::fa2, Pass::fwd, InjectedFault::fa2_skip_o_rescale, dense},
      {Algorithm::fa1, Pass::fwd, InjectedFault::skip_diagonal_mask, causal},
      {Algorithm::fa2, Pass::fwdbwd, InjectedFault::skip_diagonal_mask, causal},
      {Algorithm::splitkv, Pass::fwd, InjectedFault::fa2_skip_o_rescale, dense},
      {Algorithm::splitkv, Pass::fwd, InjectedFault::skip_diagonal_mask, causal},
  };
  for (const Wrong& w : wrong) {
    CheckOptions opt;
    const NumericsReport right = check_numerics(w.problem, w.algorithm, w.pass, 16, 8, 7, opt);
    opt.fault = w.fault;
    const NumericsReport broken = check_numerics(w.problem, w.algorithm, w.pass, 16, 8, 7, opt);
    BOOST_TEST_CONTEXT(broken.to_string()) {
      BOOST_TEST(right.max_relative() <= kBound);
      BOOST_TEST(broken.max_relative() > 1e-3);
    }
  }
}

// ---------------------------------------------------------------------------
// Reports and input errors.

BOOST_AUTO_TEST_CASE(report_lists_the_outputs_of_its_pass) {
  const Problem p = make_problem(1, 1, 1, 20, 20, 8, false);
  auto names = [](const NumericsReport& r) {
    std::vector<std::string> n;
    for (const OutputError& e : r.errors) n.push_back(e.name);
    return n;
  };
  const NumericsReport fwd = check_numerics(p, Algorithm::fa2, Pass::fwd, 8, 8, 1);
  const NumericsReport bwd = check_numerics(p, Algorithm::fa2, Pass::bwd, 8, 8, 1);
  const NumericsReport both = check_numerics(p, Algorithm::fa2, Pass::fwdbwd, 8, 8, 1);
  BOOST_TEST(names(fwd) == (std::vector<std::string>{"O", "L"}), boost::test_tools::per_element());
  BOOST_TEST(names(bwd) == (std::vector<std::string>{"dQ", "dK", "dV"}), boost::test_tools::per_element());
  BOOST_TEST(names(both) == (std::vector<std::string>{"O", "L", "dQ", "dK", "dV"}), boost::test_tools::per_element());
  BOOST_CHECK_THROW(fwd.error("dQ"), InputError);
  const std::string table = both.to_string();
  for (const char* name : {"O ", "L ", "dQ", "dK", "dV", "max|x - ref| / max|ref|"})
    BOOST_TEST(table.find(name) != std::string::npos, name);
}

BOOST_AUTO_TEST_CASE(invalid_requests_throw_input_error) {
  const Problem p = make_problem(1, 2, 2, 32, 32, 8, false);
  BOOST_CHECK_THROW(check_numerics(p, Algorithm::fa1_swapped, Pass::bwd, 8, 8, 1), InputError);
  BOOST_CHECK_THROW(check_numerics(p, Algorithm::fa2, Pass::fwd, 0, 8, 1), InputError);
  CheckOptions wrong_fault;
  wrong_fault.fault = InjectedFault::fa2_skip_o_rescale;
  BOOST_CHECK_THROW(check_numerics(p, Algorithm::fa1, Pass::fwd, 8, 8, 1, wrong_fault), InputError);
  // A 4 x 4 mask (blocks of 8 x 8 over 32 x 32) maps onto tiles of 4 x 8 or
  // 8 x 8, but not onto 6-column tiles (8 neither divides 6 nor is divided by it).
  const MaskFile square("square_mismatch", kSquareMask);
  Problem sparse = p;
  sparse.sparsity = square.spec();
  BOOST_CHECK_THROW(check_numerics(sparse, Algorithm::fa2, Pass::fwd, 4, 6, 1), InputError);
  BOOST_CHECK_NO_THROW(check_numerics(sparse, Algorithm::fa2, Pass::fwd, 4, 8, 1));
  BOOST_CHECK_NO_THROW(check_numerics(sparse, Algorithm::fa2, Pass::fwd, 8, 8, 1));
  // Inputs whose shapes disagree with the problem.
  AttentionInputs in = random_inputs(p, 1);
  in.k.pop_back();
  BOOST_CHECK_THROW(reference_forward(p, in), InputError);
  BOOST_CHECK_THROW(tiled_forward(Algorithm::fa2, p, in, TiledOptions{}), InputError);
}
