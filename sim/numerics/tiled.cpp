#include "sim/numerics/tiled.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/common/error.h"
#include "sim/numerics/eigen_views.h"
#include "sim/schedule/attention_tiles.h"
#include "sim/schedule/kernel_schedules.h"

namespace iosim::numerics {

namespace {

using detail::exp_offset;
using detail::kNegInf;
using detail::log_sum_exp;
using detail::Mat;
using detail::safe_inverse;
using detail::Vec;
using schedule::AttentionTiles;
using workload::Algorithm;

double softmax_scale(const workload::Problem& p) { return 1.0 / std::sqrt(static_cast<double>(p.head_dim)); }

bool fault_applies(InjectedFault f, Algorithm a) {
  switch (f) {
    case InjectedFault::none: return true;
    case InjectedFault::fa1_skip_l_rescale: return a == Algorithm::fa1 || a == Algorithm::fa1_swapped;
    case InjectedFault::fa2_skip_o_rescale: return a == Algorithm::fa2 || a == Algorithm::splitkv;
    case InjectedFault::skip_diagonal_mask: return !workload::is_standard(a);
  }
  return false;
}

void validate(Algorithm a, const workload::Problem& p, const AttentionInputs& in, const TiledOptions& opt,
              bool backward) {
  check_inputs(p, in, backward);
  if (opt.block_m <= 0 || opt.block_n <= 0)
    throw InputError("tiled attention: block sizes must be positive (got block_m " + std::to_string(opt.block_m) +
                     ", block_n " + std::to_string(opt.block_n) + ")");
  if (!opt.mask.active.empty()) {
    const i64 mb = ceil_div(p.seq_q, opt.block_m), nb = ceil_div(p.seq_k, opt.block_n);
    if (opt.mask.m_blocks != mb || opt.mask.n_blocks != nb || static_cast<i64>(opt.mask.active.size()) != mb * nb)
      throw InputError("tiled attention: block mask is " + std::to_string(opt.mask.m_blocks) + " x " +
                       std::to_string(opt.mask.n_blocks) + "; the " + std::to_string(opt.block_m) + " x " +
                       std::to_string(opt.block_n) + " tile grid is " + std::to_string(mb) + " x " +
                       std::to_string(nb));
  }
  if (backward && a == Algorithm::fa1_swapped)
    throw InputError("fa1-swapped is a forward-only teaching variant (use --pass fwd)");
  if (a == Algorithm::splitkv) {
    schedule::check_splitkv(p, backward ? workload::Pass::bwd : workload::Pass::fwd, opt.block_n, opt.splits);
    if (!opt.mask.active.empty()) throw InputError("splitkv takes no block mask (dense or causal problems only)");
  }
  if (!fault_applies(opt.fault, a))
    throw InputError("tiled attention: the injected fault does not exist in " + std::string(workload::to_string(a)));
}

AttentionTiles make_tiles(const workload::Problem& p, const TiledOptions& opt) {
  AttentionTiles t{p.seq_q, p.seq_k, opt.block_m, opt.block_n, p.causal, {}};
  if (!opt.mask.active.empty()) t.mask = {opt.mask.active.data(), opt.mask.m_blocks, opt.mask.n_blocks};
  return t;
}

schedule::HeadShape head_shape(const workload::Problem& p) { return {p.batch, p.heads, p.kv_heads}; }

// What every per-head routine needs besides the head's own matrices.
struct Context {
  AttentionTiles tiles;
  double scale = 1.0;
  InjectedFault fault = InjectedFault::none;
  i64* score_elements = nullptr;
  i64 splits = 1;
};

// S_ij = scale Q_i K_j^T, with the elements above the causal diagonal set to
// -inf when the tile crosses it (whole inactive tiles never get here).
Mat score_tile(const Context& cx, const Mat& sQ, const Mat& sK, i64 i, i64 j) {
  Mat s = cx.scale * (sQ * sK.transpose());
  *cx.score_elements += s.size();
  const AttentionTiles& t = cx.tiles;
  if (cx.fault == InjectedFault::skip_diagonal_mask || !t.crosses_diagonal(i, j)) return s;
  for (i64 r = 0; r < s.rows(); ++r) {
    const i64 first_hidden = std::max<i64>(0, t.key_end_for_row(t.row_begin(i) + r) - t.col_begin(j));
    for (i64 c = first_hidden; c < s.cols(); ++c) s(r, c) = kNegInf;
  }
  return s;
}

// exp(S - offset) row by row, offset = the row's guarded maximum.
Mat exp_rows(const Mat& s, const Vec& row_max) {
  Mat p(s.rows(), s.cols());
  for (i64 r = 0; r < s.rows(); ++r) p.row(r) = (s.row(r).array() - exp_offset(row_max(r))).exp();
  return p;
}

Vec lse_of(const Vec& m, const Vec& l) {
  Vec out(m.size());
  for (i64 r = 0; r < m.size(); ++r) out(r) = log_sum_exp(m(r), l(r));
  return out;
}

struct HeadForward {
  Mat o, p;
  Vec lse, l, m;
};

// ---------------------------------------------------------------------------
// Standard attention: S for every (row, column), masked, row softmax, P V.
// The element mask comes from the schedule's tile grid (causal row limits,
// block mask), the same predicate the row-softmax kernel applies.
HeadForward standard_forward_head(const Context& cx, const Mat& q, const Mat& k, const Mat& v) {
  const AttentionTiles& t = cx.tiles;
  Mat s = cx.scale * (q * k.transpose());
  *cx.score_elements += s.size();
  for (i64 r = 0; r < s.rows(); ++r)
    for (i64 c = 0; c < s.cols(); ++c)
      if (c >= t.key_end_for_row(r) || !t.mask_allows(r / t.block_m, c / t.block_n)) s(r, c) = kNegInf;
  HeadForward out;
  const Vec row_max = s.rowwise().maxCoeff();
  out.p = exp_rows(s, row_max);
  const Vec sum = out.p.rowwise().sum();
  out.lse = Vec(s.rows());
  for (i64 r = 0; r < s.rows(); ++r) {
    out.p.row(r) *= safe_inverse(sum(r));
    out.lse(r) = log_sum_exp(row_max(r), sum(r));
  }
  out.o = out.p * v;
  return out;
}

// ---------------------------------------------------------------------------
// Lines 10-13 of Algorithm 1 on one tile: the on-chip copies sO, sl, sm of
// O_i, l_i, m_i are updated so that O_i stays normalised after every step.
void fa1_update(const Context& cx, Mat& sO, Vec& sl, Vec& sm, const Mat& s, const Mat& sV) {
  const Vec m_tile = s.rowwise().maxCoeff();           // m~_ij
  const Mat p_tile = exp_rows(s, m_tile);              // P~_ij
  const Vec l_tile = p_tile.rowwise().sum();           // l~_ij
  const Mat pv = p_tile * sV;
  for (i64 r = 0; r < s.rows(); ++r) {
    const double m_new = std::max(sm(r), m_tile(r));
    const double offset = exp_offset(m_new);
    const double alpha = std::exp(sm(r) - offset);      // e^(m_i - m_new)
    const double beta = std::exp(m_tile(r) - offset);   // e^(m~_ij - m_new)
    const double l_new = alpha * sl(r) + beta * l_tile(r);
    const double keep = cx.fault == InjectedFault::fa1_skip_l_rescale ? alpha : sl(r) * alpha;
    sO.row(r) = safe_inverse(l_new) * (keep * sO.row(r) + beta * pv.row(r));
    sl(r) = l_new;
    sm(r) = m_new;
  }
}

// Algorithm 1: outer loop over key blocks, inner over the active query blocks
// of that key block; O, l, m live in "HBM" (gO, gl, gm) between steps.
HeadForward fa1_forward_head(const Context& cx, const Mat& q, const Mat& k, const Mat& v) {
  const AttentionTiles& t = cx.tiles;
  Mat gO = Mat::Zero(q.rows(), q.cols());
  Vec gl = Vec::Zero(q.rows());
  Vec gm = Vec::Constant(q.rows(), kNegInf);
  const schedule::Fa1ForwardSchedule s{t, {}, q.cols(), {}};
  for (i64 j = s.first_key_block(); j < t.n_blocks(); j = s.next_key_block(j)) {
    const Mat sK = k.middleRows(t.col_begin(j), t.cols_in(j));
    const Mat sV = v.middleRows(t.col_begin(j), t.cols_in(j));
    for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) {
      const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
      const Mat sQ = q.middleRows(r0, rows);
      Mat sO = gO.middleRows(r0, rows);
      Vec sl = gl.segment(r0, rows), sm = gm.segment(r0, rows);
      fa1_update(cx, sO, sl, sm, score_tile(cx, sQ, sK, i, j), sV);
      gO.middleRows(r0, rows) = sO;
      gl.segment(r0, rows) = sl;
      gm.segment(r0, rows) = sm;
    }
  }
  return {gO, Mat(), lse_of(gm, gl), gl, gm};
}

// Loops swapped: outer over query blocks, inner over that block's active key
// blocks, O_i/l_i/m_i on chip until the block is done.
HeadForward fa1_swapped_forward_head(const Context& cx, const Mat& q, const Mat& k, const Mat& v) {
  const AttentionTiles& t = cx.tiles;
  Mat gO = Mat::Zero(q.rows(), q.cols());
  Vec gl(q.rows()), gm(q.rows());
  for (i64 i = 0; i < t.m_blocks(); ++i) {
    const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
    const Mat sQ = q.middleRows(r0, rows);
    Mat sO = gO.middleRows(r0, rows);
    Vec sl = Vec::Zero(rows), sm = Vec::Constant(rows, kNegInf);
    const auto keys = t.key_blocks(i);
    for (i64 j = keys.first; j < keys.end; j = keys.next(j)) {
      const Mat sK = k.middleRows(t.col_begin(j), t.cols_in(j));
      const Mat sV = v.middleRows(t.col_begin(j), t.cols_in(j));
      fa1_update(cx, sO, sl, sm, score_tile(cx, sQ, sK, i, j), sV);
    }
    gO.middleRows(r0, rows) = sO;
    gl.segment(r0, rows) = sl;
    gm.segment(r0, rows) = sm;
  }
  return {gO, Mat(), lse_of(gm, gl), gl, gm};
}

// ---------------------------------------------------------------------------
// FA2's online softmax over one run of key blocks of query block i: the
// unnormalised accumulator, rescaled by e^(m_old - m_new) when the row max
// grows, and the rows' maxima m and sums l.
struct OnlineRows {
  Mat acc;
  Vec m, l;
};
OnlineRows online_softmax_run(const Context& cx, const Mat& sQ, const Mat& k, const Mat& v, i64 i,
                              const AttentionTiles::KeyBlockRange<i64>& keys) {
  const AttentionTiles& t = cx.tiles;
  const i64 rows = sQ.rows();
  OnlineRows o{Mat::Zero(rows, v.cols()), Vec::Constant(rows, kNegInf), Vec::Zero(rows)};
  for (i64 j = keys.first; j < keys.end; j = keys.next(j)) {
    const Mat s = score_tile(cx, sQ, k.middleRows(t.col_begin(j), t.cols_in(j)), i, j);
    const Vec m_new = o.m.cwiseMax(s.rowwise().maxCoeff());
    const Mat p = exp_rows(s, m_new);
    Vec rescale(rows);
    for (i64 r = 0; r < rows; ++r) rescale(r) = std::exp(o.m(r) - exp_offset(m_new(r)));
    o.l = rescale.cwiseProduct(o.l) + p.rowwise().sum();
    if (cx.fault != InjectedFault::fa2_skip_o_rescale) o.acc = rescale.asDiagonal() * o.acc;
    o.acc += p * v.middleRows(t.col_begin(j), t.cols_in(j));
    o.m = m_new;
  }
  return o;
}

// FlashAttention-2: one CTA per query block, O = acc / l and L = m + log l.
HeadForward fa2_forward_head(const Context& cx, const Mat& q, const Mat& k, const Mat& v) {
  const AttentionTiles& t = cx.tiles;
  HeadForward out{Mat::Zero(q.rows(), q.cols()), Mat(), Vec(q.rows()), Vec(), Vec()};
  const schedule::Fa2ForwardSchedule sched{t, {}, q.cols(), {}};
  for (i64 i = 0; i < t.m_blocks(); ++i) {  // a CTA per query block
    const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
    const OnlineRows o = online_softmax_run(cx, q.middleRows(r0, rows), k, v, i, sched.key_blocks({i, 0, 0}));
    for (i64 r = 0; r < rows; ++r) {
      out.o.row(r0 + r) = safe_inverse(o.l(r)) * o.acc.row(r);
      out.lse(r0 + r) = log_sum_exp(o.m(r), o.l(r));
    }
  }
  return out;
}

// Split-KV: each (query block, split) CTA runs FA2's loop over its run of key
// blocks and leaves a normalised partial O_s and LSE_s (O_s = 0, LSE_s = -inf
// for an empty run); the combine walks the splits in order with a running
// maximum, as its kernel does.
HeadForward splitkv_forward_head(const Context& cx, const Mat& q, const Mat& k, const Mat& v) {
  const AttentionTiles& t = cx.tiles;
  HeadForward out{Mat::Zero(q.rows(), q.cols()), Mat(), Vec(q.rows()), Vec(), Vec()};
  const schedule::SplitKvSchedule sched{t, {}, q.cols(), {}, cx.splits};
  for (i64 i = 0; i < t.m_blocks(); ++i) {
    const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
    const Mat sQ = q.middleRows(r0, rows);
    Mat acc_all = Mat::Zero(rows, q.cols());  // the combine: sum_s e^(LSE_s - m) O_s
    Vec m_all = Vec::Constant(rows, kNegInf), sum_all = Vec::Zero(rows);
    for (i64 sp = 0; sp < cx.splits; ++sp) {
      const OnlineRows o = online_softmax_run(cx, sQ, k, v, i, sched.key_blocks({i, sp, 0, 0}));
      const Vec& m = o.m;
      const Vec& l = o.l;
      const Mat& acc = o.acc;
      for (i64 r = 0; r < rows; ++r) {
        const double lse_s = log_sum_exp(m(r), l(r));
        const double m_new = std::max(m_all(r), lse_s);
        const double alpha = std::exp(m_all(r) - exp_offset(m_new)), w = std::exp(lse_s - exp_offset(m_new));
        acc_all.row(r) = alpha * acc_all.row(r) + (w * safe_inverse(l(r))) * acc.row(r);
        sum_all(r) = alpha * sum_all(r) + w;
        m_all(r) = m_new;
      }
    }
    for (i64 r = 0; r < rows; ++r) {
      out.o.row(r0 + r) = safe_inverse(sum_all(r)) * acc_all.row(r);
      out.lse(r0 + r) = log_sum_exp(m_all(r), sum_all(r));
    }
  }
  return out;
}

HeadForward forward_head(Algorithm a, const Context& cx, const Mat& q, const Mat& k, const Mat& v) {
  switch (a) {
    case Algorithm::standard:  // standard-eager: the same arithmetic, dropout not applied (p = 0)
    case Algorithm::standard_eager: return standard_forward_head(cx, q, k, v);
    case Algorithm::fa1: return fa1_forward_head(cx, q, k, v);
    case Algorithm::fa1_swapped: return fa1_swapped_forward_head(cx, q, k, v);
    case Algorithm::fa2:
    // FA3's CTA runs FA2's loop (Fa3ForwardSchedule::key_blocks is FA2's walk):
    // the same arithmetic in the same order per query block.
    case Algorithm::fa3: return fa2_forward_head(cx, q, k, v);
    case Algorithm::splitkv: return splitkv_forward_head(cx, q, k, v);
  }
  throw InputError("tiled attention: unknown algorithm");
}

// ---------------------------------------------------------------------------
// Backward passes, one call per (batch, KV head): the query heads of the GQA
// group are looped inside, so dK/dV sum over the group.
struct GroupInputs {
  Mat k, v;
  std::vector<Mat> q, d_o, o, p;  // per query head of the group
  std::vector<Vec> lse, l, m;
};
struct GroupGrads {
  std::vector<Mat> dq;
  Mat dk, dv;
};

GroupGrads standard_backward_group(const Context& cx, const GroupInputs& g) {
  GroupGrads out{{}, Mat::Zero(g.k.rows(), g.k.cols()), Mat::Zero(g.v.rows(), g.v.cols())};
  for (size_t h = 0; h < g.q.size(); ++h) {
    const Mat& p = g.p[h];
    out.dv += p.transpose() * g.d_o[h];
    const Mat dp = g.d_o[h] * g.v.transpose();
    const Vec row_dot = dp.cwiseProduct(p).rowwise().sum();
    const Mat ds = p.cwiseProduct(dp.colwise() - row_dot);
    out.dq.push_back(cx.scale * (ds * g.k));
    out.dk += cx.scale * (ds.transpose() * g.q[h]);
  }
  return out;
}

// Algorithm 4: dQ_i is read, updated and written back to "HBM" (gdQ) in every
// inner step; dK_j, dV_j accumulate on chip and are written once per j.
GroupGrads fa1_backward_group(const Context& cx, const GroupInputs& g) {
  const AttentionTiles& t = cx.tiles;
  GroupGrads out{{}, Mat::Zero(g.k.rows(), g.k.cols()), Mat::Zero(g.v.rows(), g.v.cols())};
  for (const Mat& q : g.q) out.dq.push_back(Mat::Zero(q.rows(), q.cols()));  // step 5
  const schedule::Fa1BackwardSchedule s{t, {}, g.k.cols(), {}};
  for (i64 j = s.first_key_block(); j < t.n_blocks(); j = s.next_key_block(j)) {
    const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
    const Mat sK = g.k.middleRows(c0, cols), sV = g.v.middleRows(c0, cols);
    Mat sdK = Mat::Zero(cols, g.k.cols()), sdV = Mat::Zero(cols, g.v.cols());
    for (size_t h = 0; h < g.q.size(); ++h) {
      Mat& gdQ = out.dq[h];
      for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) {
        const i64 r0 = t.row_begin(i), rows = t.rows_in(i);
        const Mat sQ = g.q[h].middleRows(r0, rows), sO = g.o[h].middleRows(r0, rows);
        const Mat sdO = g.d_o[h].middleRows(r0, rows);
        Mat sdQ = gdQ.middleRows(r0, rows);
        const Vec sl = g.l[h].segment(r0, rows), sm = g.m[h].segment(r0, rows);
        const Mat s = score_tile(cx, sQ, sK, i, j);
        Mat p = exp_rows(s, sm);
        for (i64 r = 0; r < rows; ++r) p.row(r) *= safe_inverse(sl(r));  // diag(l_i)^-1
        sdV += p.transpose() * sdO;
        const Mat dp = sdO * sV.transpose();
        const Vec d_row = sdO.cwiseProduct(sO).rowwise().sum();  // D_i, recomputed every step
        const Mat ds = p.cwiseProduct(dp.colwise() - d_row);
        sdQ += cx.scale * (ds * sK);
        gdQ.middleRows(r0, rows) = sdQ;
        sdK += cx.scale * (ds.transpose() * sQ);
      }
    }
    out.dk.middleRows(c0, cols) = sdK;
    out.dv.middleRows(c0, cols) = sdV;
  }
  return out;
}

// FlashAttention-2 backward main kernel (after the D preprocess): a CTA per
// key block; dQ accumulates in dQaccum across CTAs.
GroupGrads fa2_backward_group(const Context& cx, const GroupInputs& g) {
  const AttentionTiles& t = cx.tiles;
  GroupGrads out{{}, Mat::Zero(g.k.rows(), g.k.cols()), Mat::Zero(g.v.rows(), g.v.cols())};
  std::vector<Vec> d_rows;  // preprocess: D = rowsum(dO o O)
  for (size_t h = 0; h < g.q.size(); ++h) {
    d_rows.push_back(g.d_o[h].cwiseProduct(g.o[h]).rowwise().sum());
    out.dq.push_back(Mat::Zero(g.q[h].rows(), g.q[h].cols()));  // dQaccum = 0
  }
  const schedule::Fa2BackwardSchedule sched{t, {1, static_cast<i64>(g.q.size()), 1}, g.k.cols(), {}};
  for (i64 j = 0; j < t.n_blocks(); ++j) {  // a CTA per key block
    const i64 c0 = t.col_begin(j), cols = t.cols_in(j);
    const Mat sK = g.k.middleRows(c0, cols), sV = g.v.middleRows(c0, cols);
    Mat sdK = Mat::Zero(cols, g.k.cols()), sdV = Mat::Zero(cols, g.v.cols());
    const schedule::Fa2BackwardSchedule::Cta cta{j, 0, 0};
    const auto work = sched.work_items(cta);
    for (auto w = work.first(); !work.done(w); w = work.next(sched.tiles, w)) {
      const size_t h = static_cast<size_t>(w.g);
      const i64 i = w.i, r0 = t.row_begin(i), rows = t.rows_in(i);
      const Mat sQ = g.q[h].middleRows(r0, rows), sdO = g.d_o[h].middleRows(r0, rows);
      const Vec sL = g.lse[h].segment(r0, rows);
      const Mat s = score_tile(cx, sQ, sK, i, j);
      Mat p(rows, cols);
      // A row with no visible key has L = -inf; its P is 0 (exp(S - L) would be NaN).
      for (i64 r = 0; r < rows; ++r) {
        if (sL(r) == kNegInf)
          p.row(r).setZero();
        else
          p.row(r) = (s.row(r).array() - sL(r)).exp().matrix();
      }
      sdV += p.transpose() * sdO;
      const Mat dp = sdO * sV.transpose();
      const Mat ds = p.cwiseProduct(dp.colwise() - d_rows[h].segment(r0, rows));
      out.dq[h].middleRows(r0, rows) += cx.scale * (ds * sK);
      sdK += cx.scale * (ds.transpose() * sQ);
    }
    out.dk.middleRows(c0, cols) = sdK;
    out.dv.middleRows(c0, cols) = sdV;
  }
  return out;
}

GroupGrads backward_group(Algorithm a, const Context& cx, const GroupInputs& g) {
  switch (a) {
    case Algorithm::standard:
    case Algorithm::standard_eager: return standard_backward_group(cx, g);
    case Algorithm::fa1: return fa1_backward_group(cx, g);
    case Algorithm::fa2: return fa2_backward_group(cx, g);
    case Algorithm::fa1_swapped:
    case Algorithm::splitkv:
    case Algorithm::fa3: break;
  }
  throw InputError(std::string(workload::to_string(a)) + " is forward-only (use --pass fwd)");
}

Vec to_vec(const HeadMatrix& m) { return detail::to_eigen(m).col(0); }

void check_forward_state(Algorithm a, const workload::Problem& p, const TiledForward& fwd) {
  const size_t n = static_cast<size_t>(p.batch * p.heads);
  const bool ok = fwd.o.size() == n && fwd.lse.size() == n &&
                  (a != Algorithm::fa1 || (fwd.l.size() == n && fwd.m.size() == n)) &&
                  (!workload::is_standard(a) || fwd.p.size() == n);
  if (!ok)
    throw InputError("tiled backward: the forward state does not come from " + std::string(workload::to_string(a)) +
                     "'s tiled_forward on this problem");
}

}  // namespace

TiledForward tiled_forward(Algorithm a, const workload::Problem& p, const AttentionInputs& in,
                           const TiledOptions& opt) {
  validate(a, p, in, opt, false);
  TiledForward out;
  const Context cx{make_tiles(p, opt), softmax_scale(p), opt.fault, &out.score_elements, opt.splits};
  const schedule::HeadShape shape = head_shape(p);
  for (i64 b = 0; b < p.batch; ++b)
    for (i64 h = 0; h < p.heads; ++h) {
      const size_t qi = static_cast<size_t>(b * p.heads + h);
      const size_t ki = static_cast<size_t>(b * p.kv_heads + shape.kv_head_of(h));
      const HeadForward hf = forward_head(a, cx, detail::to_eigen(in.q[qi]), detail::to_eigen(in.k[ki]),
                                          detail::to_eigen(in.v[ki]));
      out.o.push_back(detail::to_head(hf.o));
      out.lse.push_back(detail::to_head(hf.lse));
      if (hf.l.size() > 0) out.l.push_back(detail::to_head(hf.l));
      if (hf.m.size() > 0) out.m.push_back(detail::to_head(hf.m));
      if (hf.p.size() > 0) out.p.push_back(detail::to_head(hf.p));
    }
  return out;
}

TiledBackward tiled_backward(Algorithm a, const workload::Problem& p, const AttentionInputs& in,
                             const TiledForward& fwd, const TiledOptions& opt) {
  validate(a, p, in, opt, true);
  check_forward_state(a, p, fwd);
  TiledBackward out;
  const Context cx{make_tiles(p, opt), softmax_scale(p), opt.fault, &out.score_elements};
  const schedule::HeadShape shape = head_shape(p);
  out.grads.dq.resize(static_cast<size_t>(p.batch * p.heads));
  for (i64 b = 0; b < p.batch; ++b)
    for (i64 kvh = 0; kvh < p.kv_heads; ++kvh) {
      const size_t ki = static_cast<size_t>(b * p.kv_heads + kvh);
      GroupInputs g{detail::to_eigen(in.k[ki]), detail::to_eigen(in.v[ki]), {}, {}, {}, {}, {}, {}, {}};
      const i64 head0 = kvh * shape.group();
      for (i64 h = head0; h < head0 + shape.group(); ++h) {
        const size_t qi = static_cast<size_t>(b * p.heads + h);
        g.q.push_back(detail::to_eigen(in.q[qi]));
        g.d_o.push_back(detail::to_eigen(in.d_o[qi]));
        g.o.push_back(detail::to_eigen(fwd.o[qi]));
        g.lse.push_back(to_vec(fwd.lse[qi]));
        if (a == Algorithm::fa1) {
          g.l.push_back(to_vec(fwd.l[qi]));
          g.m.push_back(to_vec(fwd.m[qi]));
        }
        if (workload::is_standard(a)) g.p.push_back(detail::to_eigen(fwd.p[qi]));
      }
      const GroupGrads gg = backward_group(a, cx, g);
      for (i64 h = head0; h < head0 + shape.group(); ++h)
        out.grads.dq[static_cast<size_t>(b * p.heads + h)] = detail::to_head(gg.dq[static_cast<size_t>(h - head0)]);
      out.grads.dk.push_back(detail::to_head(gg.dk));
      out.grads.dv.push_back(detail::to_head(gg.dv));
    }
  return out;
}

}  // namespace iosim::numerics
