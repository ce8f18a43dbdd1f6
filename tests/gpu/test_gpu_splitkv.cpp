// Split-KV CUDA kernels (kernels/splitkv: the split kernel and the combine)
// against the double-precision reference: O and L for fp16 and bf16, head
// dims 64 and 128, decode shapes (N_q of 1, 3 and 16) against ragged key
// lengths (1000, 4097: the last key block holds 1 key, so the last split is
// partial), causal and not, GQA and MQA, split counts from 1 to every key
// block, the default rule, and every compiled tile. Outputs and partials are
// poisoned before each run (harness::check), so an unwritten row fails.
#define BOOST_TEST_MODULE test_gpu_splitkv
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

RunSpec splitkv(const iosim::workload::Problem& p, i64 splits, std::uint64_t seed) {
  RunSpec s;
  s.problem = p;
  s.algorithm = "splitkv";
  s.splits = splits;
  s.data_seed = seed;
  return s;
}

void expect_forward(const RunSpec& s) {
  BOOST_TEST_CONTEXT("d=" << s.problem.head_dim << " " << iosim::workload::to_string(s.problem.dtype)
                          << " B=" << s.problem.batch << " H=" << s.problem.heads << "/" << s.problem.kv_heads
                          << " Nq=" << s.problem.seq_q << " Nk=" << s.problem.seq_k
                          << (s.problem.causal ? " causal" : "") << " splits=" << s.splits) {
    iosim::gputest::expect_matches_reference(s, Pass::fwd);
  }
}

}  // namespace

// Decode: N_q in {1, 3, 16} against ragged key lengths, causal (the query rows
// are the last N_q positions) and not, with 1 split, a few, and one per key
// block (16 x 64 tiles: 1000 keys are 16 blocks, 4097 are 65).
BOOST_AUTO_TEST_CASE(splitkv_decode_matches_reference_for_every_split_count, *requires_gpu()) {
  std::uint64_t seed = 40;
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims)
      for (const i64 nq : {1, 3, 16})
        for (const i64 nk : {1000, 4097})
          for (const bool causal : {false, true})
            for (const i64 splits : {i64{1}, i64{3}, i64{7}, (nk + 63) / 64})
              expect_forward(splitkv(problem(2, 4, 2, nq, nk, d, t, causal), splits, ++seed));
}

// The default rule (enough CTAs to fill the device's SMs) on MQA and GQA in
// both layouts, and one head with many splits.
BOOST_AUTO_TEST_CASE(splitkv_default_splits_with_gqa_and_mqa, *requires_gpu()) {
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims) {
      expect_forward(splitkv(problem(1, 8, 1, 1, 8191, d, t), 0, 60));
      expect_forward(splitkv(problem(2, 8, 2, 4, 3000, d, t, true, Layout::bhsd), 0, 61));
      expect_forward(splitkv(problem(1, 1, 1, 2, 20000, d, t, true), 0, 62));
    }
}

// More query rows than one block (prefill-like), causal with N_q > N_k (rows
// that see no key: O = 0, L = -inf) and splits beyond a query block's key
// blocks (empty runs write LSE = -inf), and large logits.
BOOST_AUTO_TEST_CASE(splitkv_empty_splits_masked_rows_and_large_logits, *requires_gpu()) {
  for (const DType t : kDtypes)
    for (const i64 d : kHeadDims) {
      expect_forward(splitkv(problem(1, 2, 2, 100, 333, d, t, true), 6, 70));
      expect_forward(splitkv(problem(1, 2, 1, 300, 170, d, t, true), 3, 71));
      RunSpec s = splitkv(problem(1, 2, 2, 16, 2048, d, t), 5, 72);
      s.q_scale = 10.0 * 3.0 / std::sqrt(static_cast<double>(d));
      expect_forward(s);
    }
}

// Every compiled (head_dim, Br, Bc, dtype) on a causal GQA decode problem with
// a ragged last key block.
BOOST_AUTO_TEST_CASE(splitkv_every_compiled_tile_matches_reference, *requires_gpu()) {
  const auto tiles = iosim::gputest::compiled_tiles("splitkv");
  BOOST_TEST_REQUIRE(!tiles.empty());
  for (const auto& tile : tiles) {
    RunSpec s = splitkv(problem(1, 4, 2, 5, 9 * tile.block_n + 7, tile.head_dim, tile.dtype, true), 4, 80);
    s.block_m = tile.block_m;
    s.block_n = tile.block_n;
    BOOST_TEST_CONTEXT("d=" << tile.head_dim << " Br=" << tile.block_m << " Bc=" << tile.block_n << " "
                            << iosim::workload::to_string(tile.dtype)) {
      expect_forward(s);
    }
  }
}

// Out of its domain, before any launch: a backward pass, splits past the key
// blocks, a block mask, --splits on another algorithm.
BOOST_AUTO_TEST_CASE(splitkv_rejects_what_it_cannot_run, *requires_gpu()) {
  const auto p = problem(1, 2, 2, 1, 1000, 64, DType::fp16);
  BOOST_CHECK_THROW(iosim::harness::check(splitkv(p, 2, 1), Pass::bwd), iosim::InputError);
  BOOST_CHECK_THROW(iosim::harness::check(splitkv(p, 17, 1), Pass::fwd), iosim::InputError);  // 16 key blocks
  RunSpec masked = splitkv(p, 2, 1);
  masked.mask = iosim::workload::BlockMask{1, 16, std::vector<std::uint8_t>(16, 1)};
  BOOST_CHECK_THROW(iosim::harness::check(masked, Pass::fwd), iosim::InputError);
  RunSpec fa2 = splitkv(p, 2, 1);
  fa2.algorithm = "fa2";
  BOOST_CHECK_THROW(iosim::harness::check(fa2, Pass::fwd), iosim::InputError);
}
