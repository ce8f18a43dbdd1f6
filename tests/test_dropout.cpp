// standard-eager's dropout rule (sim/common/philox.h), which the CUDA kernel
// and the double-precision reference share: Philox4x32-10 itself, the keep
// rate, and that the mask depends on the seed and the element alone.
#define BOOST_TEST_MODULE test_dropout
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>

#include "sim/common/philox.h"

using iosim::DropoutRule;
using iosim::i64;

BOOST_AUTO_TEST_CASE(philox_matches_random123s_known_answer) {
  // Random123's kat_vectors: philox4x32 10, counter 0 and key 0.
  const iosim::Philox4 r = iosim::philox4x32_10(0, 0);
  BOOST_TEST(r.v[0] == 0x6627e8d5u);
  BOOST_TEST(r.v[1] == 0xe169c58du);
  BOOST_TEST(r.v[2] == 0xbc57ac4cu);
  BOOST_TEST(r.v[3] == 0x9b00dbd8u);
}

BOOST_AUTO_TEST_CASE(keep_rate_is_one_minus_p_within_five_sigma) {
  const i64 n = 1 << 20;
  for (const double p : {0.1, 0.5, 0.9}) {
    const DropoutRule rule{p, 1234};
    i64 kept = 0;
    for (i64 e = 0; e < n; ++e) kept += rule.keeps(e);
    const double sigma = std::sqrt(p * (1 - p) / static_cast<double>(n));
    BOOST_TEST(std::abs(static_cast<double>(kept) / static_cast<double>(n) - (1 - p)) < 5 * sigma, "p " << p);
  }
}

BOOST_AUTO_TEST_CASE(p_zero_keeps_every_element_and_scales_by_one) {
  const DropoutRule rule{0.0, 77};
  for (i64 e = 0; e < 100000; ++e) BOOST_REQUIRE(rule.keeps(e));
  BOOST_TEST(rule.keep_scale() == 1.0f);
}

BOOST_AUTO_TEST_CASE(mask_depends_on_the_seed_and_the_element_alone) {
  const DropoutRule a{0.5, 1}, same{0.5, 1}, other{0.5, 2};
  i64 differ = 0;
  for (i64 e = 0; e < 4096; ++e) {
    BOOST_REQUIRE(a.keeps(e) == same.keeps(e));
    differ += a.keeps(e) != other.keeps(e);
  }
  // Two independent halves agree on about half the elements.
  BOOST_TEST(differ > 4096 / 4);
  BOOST_TEST(differ < 3 * 4096 / 4);
  // Element e takes word e % 4 of the call for e / 4.
  const iosim::Philox4 r = iosim::philox4x32_10(5, 1);
  for (int w = 0; w < 4; ++w) BOOST_TEST(a.keeps(20 + w) == DropoutRule::kept(r.v[w], a.threshold()));
}
