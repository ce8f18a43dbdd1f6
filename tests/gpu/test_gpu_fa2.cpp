// FlashAttention-2 CUDA kernels (kernels/fa2) against the double-precision
// reference: forward O and L, backward dQ, dK, dV, for fp16 and bf16 and head
// dims 64 and 128, on the cases where tiled kernels go wrong (ragged lengths,
// bottom-right causal masking with Nq != Nk, rows that see no key, large
// logits, grouped-query attention, block-sparse masks with empty rows).
#define BOOST_TEST_MODULE test_gpu_fa2
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>

#include "gpu_test_support.h"
#include "kernels/common/attention_api.h"
#include "sim/common/error.h"

using iosim::i64;
using iosim::gputest::problem;
using iosim::gputest::requires_gpu;
using iosim::harness::RunSpec;
using iosim::workload::DType;
using iosim::workload::Layout;
using iosim::workload::Pass;

namespace {

const DType kDtypes[] = {DType::fp16, DType::bf16};
const i64 kHeadDims[] = {64, 128};

RunSpec fa2(const iosim::workload::Problem& p, std::uint64_t seed) {
  RunSpec s;
  s.problem = p;
  s.algorithm = "fa2";
  s.data_seed = seed;
  return s;
}

// Forward and backward, each with FlashAttention-2's default tiles for the pass.
void expect_both_passes(const RunSpec& s) {
  BOOST_TEST_CONTEXT("d=" << s.problem.head_dim << " " << iosim::workload::to_string(s.problem.dtype)
                          << " Nq=" << s.problem.seq_q << " Nk=" << s.problem.seq_k
                          << (s.problem.causal ? " causal" : "")) {
    iosim::gputest::expect_matches_reference(s, Pass::fwd);
    iosim::gputest::expect_matches_reference(s, Pass::bwd);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(fa2_matches_reference_on_ragged_lengths, *requires_gpu()) {
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims) expect_both_passes(fa2(problem(2, 3, 3, 333, 333, d, t), 11));
}

BOOST_AUTO_TEST_CASE(fa2_causal_is_bottom_right_aligned_with_fewer_queries_than_keys, *requires_gpu()) {
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims) expect_both_passes(fa2(problem(1, 2, 2, 200, 328, d, t, true), 12));
}

// Nq > Nk: the first Nq - Nk rows see no key; the reference defines O = 0 and
// L = -inf there, and those rows contribute no gradient.
BOOST_AUTO_TEST_CASE(fa2_causal_rows_that_see_no_key_give_zero_output_and_minus_inf_lse, *requires_gpu()) {
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims) expect_both_passes(fa2(problem(1, 2, 2, 300, 170, d, t, true), 13));
}

// Q scaled so that the logits q.k have a standard deviation of 10 before the
// softmax scale (q, k uniform in [-1, 1]: sd(q.k) = sqrt(d)/3), so the extremes
// pass +-30: the online softmax must rescale without overflow.
BOOST_AUTO_TEST_CASE(fa2_large_logits_keep_accuracy, *requires_gpu()) {
  for (const DType t : kDtypes) {
    for (const i64 d : kHeadDims) {
      RunSpec s = fa2(problem(1, 2, 2, 256, 256, d, t), 14);
      s.q_scale = 10.0 * 3.0 / std::sqrt(static_cast<double>(d));
      expect_both_passes(s);
    }
  }
}

// GQA (8 query heads on 2 KV heads, BHSD layout) and MQA (causal, 1 KV head):
// dK and dV of a KV head sum over its group inside one CTA.
BOOST_AUTO_TEST_CASE(fa2_gqa_and_mqa_sum_dk_dv_over_the_group, *requires_gpu()) {
  for (const DType t : kDtypes) {
    for (const i64 d : kHeadDims) {
      expect_both_passes(fa2(problem(2, 8, 2, 256, 192, d, t, false, Layout::bhsd), 15));
      expect_both_passes(fa2(problem(1, 4, 1, 160, 160, d, t, true), 16));
    }
  }
}

// A block mask on the pass's tile grid with one query block empty (its rows:
// O = 0, L = -inf) and one key block never used (dK = dV = 0 there), the rest
// random; with and without causal masking.
BOOST_AUTO_TEST_CASE(fa2_block_sparse_skips_inactive_tiles_and_zeroes_empty_rows, *requires_gpu()) {
  for (const DType t : kDtypes) {
    for (const i64 d : kHeadDims) {
      for (const bool causal : {false, true}) {
        for (const Pass pass : {Pass::fwd, Pass::bwd}) {
          RunSpec s = fa2(problem(1, 2, 2, 430, 470, d, t, causal), 17);
          s.mask = iosim::gputest::holey_block_mask(s, pass);
          BOOST_TEST_CONTEXT("d=" << d << " " << iosim::workload::to_string(t) << (causal ? " causal" : "")) {
            iosim::gputest::expect_matches_reference(s, pass);
          }
        }
      }
    }
  }
}

// Every compiled (head_dim, Br, Bc, dtype) on a causal GQA problem whose
// lengths are not multiples of the tile (ragged edges and diagonal tiles).
BOOST_AUTO_TEST_CASE(fa2_every_compiled_tile_matches_reference, *requires_gpu()) {
  const auto tiles = iosim::gputest::compiled_tiles("fa2");
  BOOST_TEST_REQUIRE(!tiles.empty());
  for (const auto& tile : tiles) {
    RunSpec s = fa2(problem(1, 2, 1, 2 * tile.block_m + 5, 2 * tile.block_n + 9, tile.head_dim, tile.dtype, true), 18);
    s.block_m = tile.block_m;
    s.block_n = tile.block_n;
    BOOST_TEST_CONTEXT(tile.pass << " d=" << tile.head_dim << " Br=" << tile.block_m << " Bc=" << tile.block_n << " "
                                 << iosim::workload::to_string(tile.dtype)) {
      iosim::gputest::expect_matches_reference(s, tile.pass == "bwd" ? Pass::bwd : Pass::fwd);
    }
  }
}
