// Portable qualifiers so one header can describe a schedule for both the
// host-side trace generator (g++) and the CUDA kernels (nvcc).
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define IOSIM_HD __host__ __device__
#else
#define IOSIM_HD
#endif

namespace iosim {
using i64 = std::int64_t;
using u64 = std::uint64_t;

IOSIM_HD constexpr i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }
IOSIM_HD constexpr i64 min_i64(i64 a, i64 b) { return a < b ? a : b; }
IOSIM_HD constexpr i64 max_i64(i64 a, i64 b) { return a > b ? a : b; }
}  // namespace iosim
