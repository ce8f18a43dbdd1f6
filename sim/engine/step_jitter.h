// How much the steps of identical CTAs differ in length on the GPU.
//
// The engine would otherwise run identical CTAs in lockstep: CTAs that read
// the same tile then reach the L2 in the same simulated cycle and merge into
// one lookup, where the GPU merges a hit only with a read in the same few
// cycles (experiments/results/2026-11-28-h200-merge-probe) because its CTAs
// drift apart: no two steps take the same time. The step-jitter probe
// (experiments/results/2026-11-28-h200-step-jitter-probe) measures that
// variation: the length of a CTA's step over its mean step, standard
// deviation sm_pipes.step_jitter, about normally distributed. Each step's
// length is scaled by a draw from that distribution, from a hash of the CTA
// and the step: deterministic, the same on every run.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace iosim::engine {

// A normal draw (Box-Muller on two 24-bit uniforms of a 64-bit mix of the
// CTA and its step's ordinal), mean 0, standard deviation 1.
inline double step_normal(std::int64_t cta, std::int64_t step) {
  std::uint64_t h = static_cast<std::uint64_t>(cta) * 0x9E3779B97F4A7C15ull ^
                    (static_cast<std::uint64_t>(step) + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  const double u1 = (static_cast<double>(h >> 40) + 0.5) / 16777216.0;  // (0, 1)
  const double u2 = static_cast<double>((h >> 8) & 0xffffffu) / 16777216.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// The factor a step's length is scaled by: 1 + cv x a normal draw (never
// negative; with cv = 0, exactly 1).
inline double step_jitter_factor(double cv, std::int64_t cta, std::int64_t step) {
  if (!(cv > 0)) return 1.0;
  return std::max(0.0, 1.0 + cv * step_normal(cta, step));
}

// An SM favours the CTAs that started on it first (the step-jitter probe's
// second run: at 5 CTAs per SM their mean steps are 0.89, 0.93, 0.98, 1.06,
// 1.14 of the SM's mean by start rank, for every workload tried), so the CTAs
// of a launch finish rank by rank and the slots they free come round the SMs
// in turn. The CTA of start rank r among n on its SM takes
//   1 + a (1 - 2/n) (r - (n - 1) / 2)
// times the SM's mean step, a = sm_pipes.cta_priority (the probe's least
// squares over 2-8 CTAs per SM, within 0.035 of every rank). Past 8 CTAs the
// probe's order is no longer monotonic: the first 8 ranks take the 8-CTA
// factors and the later ones the mean, an approximation (at 10-16 CTAs the
// ranks from 8 on ran at 0.89-1.33 of the SM's mean, in no order).
// The engine gives these factors to the CTAs a launch starts together (the
// first wave), whose ranks hold for most of their lives; a later CTA starts
// as the youngest and ages through the ranks, and takes the mean.
inline double cta_priority_factor(double a, std::int64_t n, std::int64_t rank) {
  if (!(a > 0) || n < 2 || rank >= 8) return 1.0;
  const double m = static_cast<double>(std::min<std::int64_t>(n, 8));
  return 1.0 + a * (1.0 - 2.0 / m) * (static_cast<double>(rank) - (m - 1.0) / 2.0);
}

}  // namespace iosim::engine
