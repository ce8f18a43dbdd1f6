// Internal to sim/numerics/*.cpp: conversions between HeadMatrix and Eigen,
// and the guards FlashAttention uses for rows whose maximum is -inf.
// Not for nvcc-compiled code (it includes Eigen); use reference.h there.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <limits>

#include "sim/numerics/reference.h"

namespace iosim::numerics::detail {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;
using RowMajorMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

inline Mat to_eigen(const HeadMatrix& m) {
  return Eigen::Map<const RowMajorMat>(m.values.data(), m.rows, m.cols);
}
inline HeadMatrix to_head(const Mat& m) {
  HeadMatrix out(m.rows(), m.cols());
  Eigen::Map<RowMajorMat>(out.values.data(), m.rows(), m.cols()) = m;
  return out;
}
inline HeadMatrix to_head(const Vec& v) {
  HeadMatrix out(v.size(), 1);
  for (i64 r = 0; r < v.size(); ++r) out(r, 0) = v(r);
  return out;
}

// The value to subtract before exponentiating: a row whose maximum is -inf
// (nothing visible yet) subtracts 0 instead, so exp(-inf - 0) = 0 rather
// than exp(-inf - -inf) = NaN. This is FlashAttention's Check_inf guard.
inline double exp_offset(double row_max) { return row_max == kNegInf ? 0.0 : row_max; }

// 1/l, with 0 for a row that has seen no visible key (l = 0), so its output
// stays 0 instead of 0/0.
inline double safe_inverse(double l) { return l == 0.0 ? 0.0 : 1.0 / l; }

// L = m + log(l); -inf for a row with no visible key.
inline double log_sum_exp(double m, double l) { return l == 0.0 ? kNegInf : m + std::log(l); }

}  // namespace iosim::numerics::detail
