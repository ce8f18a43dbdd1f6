// standard-eager's dropout rule, shared by the CUDA kernel and the
// double-precision reference so the reference reproduces the kernel's mask:
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11; the generator PyTorch's CUDA dropout draws from), counter-based,
// so element e's draw depends on (seed, e) alone, not on which thread or CTA
// computes it.
//
// Element e is the flat position ((b * H + h) * N_q + r) * N_k + c of the
// [batch][heads][N_q][N_k] score matrices. One Philox call with counter
// (e / 4 as two 32-bit words, 0, 0) and key (the seed's two halves) gives the
// draws of elements 4(e / 4) .. 4(e / 4) + 3; element e takes word e % 4.
// It is kept iff its draw's top 24 bits are >= round(p * 2^24), so the keep
// probability is 1 - p within 2^-24, and p = 0 keeps every element.
#pragma once
#include <cstdint>

#include "sim/common/hd.h"

namespace iosim {

struct Philox4 {
  std::uint32_t v[4];
};

IOSIM_HD inline Philox4 philox4x32_10(std::uint64_t counter, std::uint64_t seed) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  std::uint32_t c0 = static_cast<std::uint32_t>(counter), c1 = static_cast<std::uint32_t>(counter >> 32), c2 = 0,
                c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kM0) * c0, p1 = static_cast<std::uint64_t>(kM1) * c2;
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return {{c0, c1, c2, c3}};
}

struct DropoutRule {
  double p = 0;  // drop probability, 0 <= p < 1
  std::uint64_t seed = 0;

  // round(p * 2^24): a draw whose top 24 bits are below it is dropped.
  IOSIM_HD std::uint32_t threshold() const { return static_cast<std::uint32_t>(p * 16777216.0 + 0.5); }
  IOSIM_HD static bool kept(std::uint32_t draw, std::uint32_t threshold) { return (draw >> 8) >= threshold; }
  // Whether flat element e is kept (one Philox call per element; the kernel
  // shares each call among the four elements it covers).
  IOSIM_HD bool keeps(std::int64_t e) const {
    const Philox4 r = philox4x32_10(static_cast<std::uint64_t>(e) / 4, seed);
    return kept(r.v[e % 4], threshold());
  }
  // What a kept element is multiplied by.
  IOSIM_HD float keep_scale() const { return static_cast<float>(1.0 / (1.0 - p)); }
};

}  // namespace iosim
