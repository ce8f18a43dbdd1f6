#include "sim/numerics/reference.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/common/error.h"
#include "sim/numerics/eigen_views.h"

namespace iosim::numerics {

using detail::kNegInf;
using detail::Mat;
using detail::Vec;

HeadMatrix::HeadMatrix(i64 r, i64 c, double fill)
    : rows(r), cols(c), values(static_cast<size_t>(r * c), fill) {}

HeadTensor make_head_tensor(i64 batch, i64 heads, i64 rows, i64 cols, double fill) {
  return HeadTensor(static_cast<size_t>(batch * heads), HeadMatrix(rows, cols, fill));
}

i64 flat_index(i64 b, i64 h, i64 s, i64 x, i64 heads, i64 seq, i64 dim, workload::Layout layout) {
  return layout == workload::Layout::bshd ? ((b * seq + s) * heads + h) * dim + x
                                          : ((b * heads + h) * seq + s) * dim + x;
}

namespace {

template <typename T>
HeadTensor from_flat_impl(const std::vector<T>& flat, i64 batch, i64 heads, i64 seq, i64 dim,
                          workload::Layout layout) {
  const i64 expected = batch * heads * seq * dim;
  if (static_cast<i64>(flat.size()) != expected)
    throw InputError("from_flat: buffer holds " + std::to_string(flat.size()) + " elements; batch " +
                     std::to_string(batch) + " x heads " + std::to_string(heads) + " x seq " +
                     std::to_string(seq) + " x dim " + std::to_string(dim) + " needs " +
                     std::to_string(expected));
  HeadTensor out = make_head_tensor(batch, heads, seq, dim);
  for (i64 b = 0; b < batch; ++b)
    for (i64 h = 0; h < heads; ++h)
      for (i64 s = 0; s < seq; ++s)
        for (i64 x = 0; x < dim; ++x)
          out[static_cast<size_t>(b * heads + h)](s, x) =
              static_cast<double>(flat[static_cast<size_t>(flat_index(b, h, s, x, heads, seq, dim, layout))]);
  return out;
}

template <typename T>
std::vector<T> to_flat_impl(const HeadTensor& t, i64 batch, i64 heads, workload::Layout layout) {
  if (static_cast<i64>(t.size()) != batch * heads)
    throw InputError("to_flat: tensor has " + std::to_string(t.size()) + " slices; batch " +
                     std::to_string(batch) + " x heads " + std::to_string(heads) + " expected");
  if (t.empty()) return {};
  const i64 seq = t.front().rows, dim = t.front().cols;
  std::vector<T> flat(static_cast<size_t>(batch * heads * seq * dim));
  for (i64 b = 0; b < batch; ++b)
    for (i64 h = 0; h < heads; ++h) {
      const HeadMatrix& m = t[static_cast<size_t>(b * heads + h)];
      if (m.rows != seq || m.cols != dim) throw InputError("to_flat: slices differ in shape");
      for (i64 s = 0; s < seq; ++s)
        for (i64 x = 0; x < dim; ++x)
          flat[static_cast<size_t>(flat_index(b, h, s, x, heads, seq, dim, layout))] = static_cast<T>(m(s, x));
    }
  return flat;
}

void check_tensor(const char* name, const HeadTensor& t, i64 slices, i64 rows, i64 cols) {
  const auto shape = [&] {
    return std::to_string(slices) + " slices of " + std::to_string(rows) + " x " + std::to_string(cols);
  };
  if (static_cast<i64>(t.size()) != slices)
    throw InputError(std::string("attention inputs: ") + name + " has " + std::to_string(t.size()) +
                     " (batch, head) slices; the problem needs " + shape());
  for (const HeadMatrix& m : t)
    if (m.rows != rows || m.cols != cols ||
        static_cast<i64>(m.values.size()) != rows * cols)
      throw InputError(std::string("attention inputs: ") + name + " has a " + std::to_string(m.rows) +
                       " x " + std::to_string(m.cols) + " slice; the problem needs " + shape());
}

void check_mask(const workload::Problem& p, const ReferenceMask& mask) {
  if (mask.dense()) return;
  if (mask.block_m <= 0 || mask.block_n <= 0)
    throw InputError("reference attention: a block mask needs positive block_m and block_n");
  const i64 mb = ceil_div(p.seq_q, mask.block_m), nb = ceil_div(p.seq_k, mask.block_n);
  if (mask.blocks.m_blocks != mb || mask.blocks.n_blocks != nb ||
      static_cast<i64>(mask.blocks.active.size()) != mb * nb)
    throw InputError("reference attention: block mask is " + std::to_string(mask.blocks.m_blocks) + " x " +
                     std::to_string(mask.blocks.n_blocks) + " (" + std::to_string(mask.blocks.active.size()) +
                     " entries); the " + std::to_string(mask.block_m) + " x " + std::to_string(mask.block_n) +
                     " tile grid is " + std::to_string(mb) + " x " + std::to_string(nb));
}

// The element mask, written straight from the definition (deliberately not
// through sim/schedule, which the tiled executions use).
Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> visibility(const workload::Problem& p,
                                                              const ReferenceMask& mask) {
  Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> vis(p.seq_q, p.seq_k);
  for (i64 r = 0; r < p.seq_q; ++r)
    for (i64 c = 0; c < p.seq_k; ++c) {
      const bool causal_ok = !p.causal || c <= r + (p.seq_k - p.seq_q);
      const bool block_ok =
          mask.dense() ||
          mask.blocks.active[static_cast<size_t>((r / mask.block_m) * mask.blocks.n_blocks + c / mask.block_n)] != 0;
      vis(r, c) = causal_ok && block_ok;
    }
  return vis;
}

struct Probabilities {
  Mat p;    // seq_q x seq_k softmax, 0 where not visible
  Vec lse;  // seq_q
};

// Row softmax of the scaled, masked scores, two-pass (max, then sum).
Probabilities softmax_rows(const Mat& q, const Mat& k, double scale,
                           const Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>& vis) {
  const Mat s = scale * (q * k.transpose());
  Probabilities out{Mat::Zero(s.rows(), s.cols()), Vec::Constant(s.rows(), kNegInf)};
  for (i64 r = 0; r < s.rows(); ++r) {
    double row_max = kNegInf;
    for (i64 c = 0; c < s.cols(); ++c)
      if (vis(r, c)) row_max = std::max(row_max, s(r, c));
    if (row_max == kNegInf) continue;  // no visible key: P row 0, L = -inf
    double sum = 0.0;
    for (i64 c = 0; c < s.cols(); ++c)
      if (vis(r, c)) sum += (out.p(r, c) = std::exp(s(r, c) - row_max));
    out.p.row(r) /= sum;
    out.lse(r) = row_max + std::log(sum);
  }
  return out;
}

double softmax_scale(const workload::Problem& p) { return 1.0 / std::sqrt(static_cast<double>(p.head_dim)); }

void check_dropout(const DropoutRule& d) {
  if (!(d.p >= 0.0 && d.p < 1.0))
    throw InputError("reference attention: dropout probability " + std::to_string(d.p) + " is outside [0, 1)");
}

// Z / (1 - p) of query head slice (b, h): the factor dropout multiplies P
// (and dP) by, element by element; all ones without dropout.
Mat dropout_factor(const workload::Problem& p, const DropoutRule& d, i64 b, i64 h) {
  if (d.p == 0.0) return Mat::Ones(p.seq_q, p.seq_k);
  Mat f(p.seq_q, p.seq_k);
  const double kept = 1.0 / (1.0 - d.p);
  for (i64 r = 0; r < p.seq_q; ++r)
    for (i64 c = 0; c < p.seq_k; ++c)
      f(r, c) = d.keeps(((b * p.heads + h) * p.seq_q + r) * p.seq_k + c) ? kept : 0.0;
  return f;
}

}  // namespace

void check_inputs(const workload::Problem& p, const AttentionInputs& in, bool backward) {
  p.validate();
  check_tensor("Q", in.q, p.batch * p.heads, p.seq_q, p.head_dim);
  check_tensor("K", in.k, p.batch * p.kv_heads, p.seq_k, p.head_dim);
  check_tensor("V", in.v, p.batch * p.kv_heads, p.seq_k, p.head_dim);
  if (backward) check_tensor("dO", in.d_o, p.batch * p.heads, p.seq_q, p.head_dim);
}

HeadTensor from_flat(const std::vector<float>& flat, i64 batch, i64 heads, i64 seq, i64 dim,
                     workload::Layout layout) {
  return from_flat_impl(flat, batch, heads, seq, dim, layout);
}
HeadTensor from_flat(const std::vector<double>& flat, i64 batch, i64 heads, i64 seq, i64 dim,
                     workload::Layout layout) {
  return from_flat_impl(flat, batch, heads, seq, dim, layout);
}
std::vector<float> to_flat_float(const HeadTensor& t, i64 batch, i64 heads, workload::Layout layout) {
  return to_flat_impl<float>(t, batch, heads, layout);
}
std::vector<double> to_flat_double(const HeadTensor& t, i64 batch, i64 heads, workload::Layout layout) {
  return to_flat_impl<double>(t, batch, heads, layout);
}

ReferenceMask reference_mask(const workload::Problem& p, i64 block_m, i64 block_n) {
  if (block_m <= 0 || block_n <= 0)
    throw InputError("block mask: block sizes must be positive (got block_m " + std::to_string(block_m) +
                     ", block_n " + std::to_string(block_n) + ")");
  ReferenceMask mask{{}, block_m, block_n};
  if (!p.sparsity.is_dense())
    mask.blocks = p.sparsity.materialise(p.seq_q, p.seq_k, block_m, block_n);
  return mask;
}

ForwardResult reference_forward(const workload::Problem& p, const AttentionInputs& in,
                                const ReferenceMask& mask, const DropoutRule& dropout) {
  check_inputs(p, in, false);
  check_mask(p, mask);
  check_dropout(dropout);
  const auto vis = visibility(p, mask);
  const i64 group = p.heads / p.kv_heads;
  ForwardResult out;
  for (i64 b = 0; b < p.batch; ++b)
    for (i64 h = 0; h < p.heads; ++h) {
      const size_t qi = static_cast<size_t>(b * p.heads + h);
      const size_t ki = static_cast<size_t>(b * p.kv_heads + h / group);
      const Probabilities sm = softmax_rows(detail::to_eigen(in.q[qi]), detail::to_eigen(in.k[ki]),
                                            softmax_scale(p), vis);
      const Mat pd = sm.p.cwiseProduct(dropout_factor(p, dropout, b, h));
      out.o.push_back(detail::to_head(Mat(pd * detail::to_eigen(in.v[ki]))));
      out.lse.push_back(detail::to_head(sm.lse));
    }
  return out;
}

GradResult reference_backward(const workload::Problem& p, const AttentionInputs& in,
                              const ReferenceMask& mask, const DropoutRule& dropout) {
  check_inputs(p, in, true);
  check_mask(p, mask);
  check_dropout(dropout);
  const auto vis = visibility(p, mask);
  const i64 group = p.heads / p.kv_heads;
  const double scale = softmax_scale(p);
  GradResult out;
  out.dq.resize(static_cast<size_t>(p.batch * p.heads));
  for (i64 b = 0; b < p.batch; ++b)
    for (i64 kvh = 0; kvh < p.kv_heads; ++kvh) {
      const size_t ki = static_cast<size_t>(b * p.kv_heads + kvh);
      const Mat k = detail::to_eigen(in.k[ki]), v = detail::to_eigen(in.v[ki]);
      Mat dk = Mat::Zero(p.seq_k, p.head_dim), dv = Mat::Zero(p.seq_k, p.head_dim);
      for (i64 h = kvh * group; h < (kvh + 1) * group; ++h) {
        const size_t qi = static_cast<size_t>(b * p.heads + h);
        const Mat q = detail::to_eigen(in.q[qi]), d_o = detail::to_eigen(in.d_o[qi]);
        const Mat prob = softmax_rows(q, k, scale, vis).p;
        const Mat drop = dropout_factor(p, dropout, b, h);
        const Mat dp = (d_o * v.transpose()).cwiseProduct(drop);
        const Vec row_dot = prob.cwiseProduct(dp).rowwise().sum();
        const Mat ds = prob.cwiseProduct(dp.colwise() - row_dot);
        dv += prob.cwiseProduct(drop).transpose() * d_o;
        dk += scale * (ds.transpose() * q);
        out.dq[qi] = detail::to_head(Mat(scale * (ds * k)));
      }
      out.dk.push_back(detail::to_head(dk));
      out.dv.push_back(detail::to_head(dv));
    }
  return out;
}

double ErrorNorms::relative() const {
  return max_abs_ref > 0.0 ? max_abs_error / max_abs_ref : max_abs_error;
}

ErrorNorms compare(const HeadTensor& x, const HeadTensor& ref) {
  if (x.size() != ref.size())
    throw InputError("compare: " + std::to_string(x.size()) + " slices vs " + std::to_string(ref.size()) +
                     " in the reference");
  ErrorNorms n;
  const double inf = std::numeric_limits<double>::infinity();
  for (size_t s = 0; s < x.size(); ++s) {
    if (x[s].rows != ref[s].rows || x[s].cols != ref[s].cols)
      throw InputError("compare: slice " + std::to_string(s) + " is " + std::to_string(x[s].rows) + " x " +
                       std::to_string(x[s].cols) + ", reference " + std::to_string(ref[s].rows) + " x " +
                       std::to_string(ref[s].cols));
    for (size_t e = 0; e < x[s].values.size(); ++e) {
      const double a = x[s].values[e], r = ref[s].values[e];
      if (!std::isfinite(r)) {
        if (a != r) n.max_abs_error = inf;  // -inf must match exactly (NaN never does)
        continue;
      }
      n.max_abs_ref = std::max(n.max_abs_ref, std::abs(r));
      n.max_abs_error = std::isfinite(a) ? std::max(n.max_abs_error, std::abs(a - r)) : inf;
    }
  }
  return n;
}

}  // namespace iosim::numerics
