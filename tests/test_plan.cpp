// The plan (sim/schedule/plan.h): the kernel list of every algorithm and
// pass, CTA shapes as the kernels launch them, and the loop-nest iterators
// the trace, the numerics and the kernels walk, against the plain loops they
// replace.
#define BOOST_TEST_MODULE test_plan
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

#include "sim/common/error.h"
#include "sim/schedule/kernel_registers.h"
#include "sim/schedule/plan.h"
#include "sim/schedule/warp_programs.h"
#include "sim/trace/algorithms.h"

using iosim::i64;
using iosim::schedule::AttentionTiles;
using iosim::schedule::KernelKind;
using iosim::schedule::make_plan;
using iosim::schedule::PlanTiling;
using iosim::workload::Algorithm;
using iosim::workload::Pass;
using iosim::workload::Problem;
namespace schedule = iosim::schedule;

namespace {

Problem problem(i64 nq, i64 nk, i64 d, bool causal, i64 heads = 4, i64 kv_heads = 2) {
  Problem p;
  p.batch = 2;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.seq_q = nq;
  p.seq_k = nk;
  p.head_dim = d;
  p.causal = causal;
  return p;
}

std::vector<std::string> names(const schedule::Plan& plan) {
  std::vector<std::string> out;
  for (const auto& k : plan.kernels) out.push_back(k.name);
  return out;
}

// Random tilings of random ragged problems, causal or not, dense or sparse.
struct Case {
  Problem p;
  i64 bm, bn;
  iosim::workload::BlockMask mask;
};
std::vector<Case> random_cases() {
  std::mt19937 rng(5);
  std::vector<Case> out;
  for (int n = 0; n < 200; ++n) {
    const i64 bm = 16 << (rng() % 4), bn = 16 << (rng() % 4);
    Case c{problem(1 + static_cast<i64>(rng() % 700), 1 + static_cast<i64>(rng() % 700), 64, rng() % 2 == 0), bm, bn, {}};
    if (rng() % 3 == 0) {
      c.p.sparsity.kind = iosim::workload::SparsitySpec::Kind::random_density;
      c.p.sparsity.density = 0.4;
      c.p.sparsity.seed = rng();
      c.mask = c.p.sparsity.materialise(c.p.seq_q, c.p.seq_k, bm, bn);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(kernel_lists_follow_each_algorithm) {
  const Problem p = problem(1000, 1000, 64, true);
  const PlanTiling t{64, 128, {128, 128, 32}, 100 * 1024};
  using V = std::vector<std::string>;
  BOOST_TEST(names(make_plan(p, Algorithm::fa2, Pass::fwdbwd, t)) ==
                 (V{"fa2_fwd", "fa2_bwd_preprocess", "fa2_bwd_main", "fa2_bwd_convert_dq"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(make_plan(p, Algorithm::fa1, Pass::fwdbwd, t)) == (V{"fa1_fwd", "fa1_bwd"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(make_plan(p, Algorithm::standard, Pass::fwdbwd, t)) ==
                 (V{"std_fwd_qk", "std_fwd_softmax", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_softmax",
                    "std_bwd_dq", "std_bwd_dk"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(make_plan(p, Algorithm::fa1_swapped, Pass::fwd, t)) == (V{"fa1_swapped_fwd"}),
             boost::test_tools::per_element());
  // Eager GPT-2 attention: scaling, masking (p is causal) and dropout between
  // standard attention's kernels, and the gradients of each in reverse order.
  BOOST_TEST(names(make_plan(p, Algorithm::standard_eager, Pass::fwdbwd, t)) ==
                 (V{"std_fwd_qk", "eager_fwd_scale", "eager_fwd_mask", "std_fwd_softmax", "eager_fwd_dropout",
                    "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "eager_bwd_dropout", "std_bwd_softmax",
                    "eager_bwd_mask", "eager_bwd_scale", "std_bwd_dq", "std_bwd_dk"}),
             boost::test_tools::per_element());
  BOOST_TEST(names(make_plan(problem(1000, 1000, 64, false), Algorithm::standard_eager, Pass::fwd, t)) ==
                 (V{"std_fwd_qk", "eager_fwd_scale", "std_fwd_softmax", "eager_fwd_dropout", "std_fwd_pv"}),
             boost::test_tools::per_element());
  BOOST_CHECK_THROW(make_plan(p, Algorithm::fa1_swapped, Pass::bwd, t), iosim::InputError);
  BOOST_CHECK_THROW(make_plan(p, Algorithm::fa2, Pass::fwd, PlanTiling{0, 64, {}, 1}), iosim::InputError);
}

// The CTA each kernel launches: threads from the kernels' warp rules, shared
// memory with the kernels' row padding (FA1, GEMM), which the kernel traits
// static_assert against the same functions.
// standard-eager's elementwise kernels say what they compute (the CUDA kernels
// dispatch on it), and its softmax is GPT-2's plain one: the scale and the
// mask have kernels of their own, so it neither scales nor masks.
BOOST_AUTO_TEST_CASE(eager_kernels_name_their_operation_and_its_softmax_neither_scales_nor_masks) {
  using Op = schedule::ElementwiseOp;
  const PlanTiling t{64, 64, {128, 128, 32}, 48 * 1024};
  const auto eager = make_plan(problem(300, 300, 64, true), Algorithm::standard_eager, Pass::fwdbwd, t);
  std::vector<int> ops;  // as integers, for Boost.Test's messages
  for (const auto& k : eager.kernels) {
    if (k.kind == KernelKind::elementwise) ops.push_back(static_cast<int>(k.as<schedule::ElementwisePlan>().op));
    if (k.kind == KernelKind::softmax_fwd || k.kind == KernelKind::softmax_bwd) {
      const auto& sp = k.as<schedule::SoftmaxPlan>();
      BOOST_TEST((!sp.applies_scale && !sp.tiles.causal && sp.tiles.mask.active == nullptr), k.name);
    }
  }
  std::vector<int> expected;
  for (Op op : {Op::scale, Op::mask_fill, Op::dropout, Op::dropout_bwd, Op::mask_zero, Op::scale})
    expected.push_back(static_cast<int>(op));
  BOOST_TEST(ops == expected, boost::test_tools::per_element());
  for (const auto& k : make_plan(problem(300, 300, 64, true), Algorithm::standard, Pass::fwdbwd, t).kernels)
    if (k.kind == KernelKind::softmax_fwd || k.kind == KernelKind::softmax_bwd) {
      const auto& sp = k.as<schedule::SoftmaxPlan>();
      BOOST_TEST((sp.applies_scale && sp.tiles.causal), k.name);
    }
}

// Occupancy takes the registers of the compiled instantiation (they differ by
// tile), and the kind's typical count for a tiling no kernel has.
BOOST_AUTO_TEST_CASE(registers_are_the_compiled_kernels_where_one_exists) {
  const Problem p = problem(2048, 2048, 64, false);
  auto fwd_regs = [&](i64 bm, i64 bn) {
    return make_plan(p, Algorithm::fa2, Pass::fwd, PlanTiling{bm, bn, {}, 1}).kernels[0].cta.regs_per_thread;
  };
  using iosim::schedule::compiled_registers;
  const auto small = compiled_registers(KernelKind::fa2_fwd, p.dtype, {64, 64, 16});
  const auto large = compiled_registers(KernelKind::fa2_fwd, p.dtype, {64, 128, 128});
  BOOST_REQUIRE((small && large));
  BOOST_TEST(*small != *large);  // a table of one count per kind would pass none of this
  BOOST_TEST(fwd_regs(64, 16) == *small);
  BOOST_TEST(fwd_regs(128, 128) == *large);
  BOOST_TEST(!compiled_registers(KernelKind::fa2_fwd, p.dtype, {64, 64, 48}));
  BOOST_TEST(fwd_regs(64, 48) == iosim::schedule::regs_per_thread(KernelKind::fa2_fwd, 64));
  const auto gemm = make_plan(p, Algorithm::standard, Pass::fwd, PlanTiling{64, 64, {128, 128, 64}, 1});
  BOOST_TEST(gemm.kernels[0].cta.regs_per_thread ==
             compiled_registers(KernelKind::gemm, p.dtype, {128, 128, 64}).value());
}

BOOST_AUTO_TEST_CASE(cta_shapes_are_the_launched_ones) {
  const Problem p = problem(1024, 1024, 128, false);
  const PlanTiling t{128, 64, {128, 128, 32}, 100 * 1024};
  const auto fa2 = make_plan(p, Algorithm::fa2, Pass::fwdbwd, t);
  BOOST_TEST(fa2.kernels[0].cta.threads == 128);  // d128 128x64: 4 warps of 32 rows
  BOOST_TEST(fa2.kernels[0].cta.smem_bytes == (128 + 2 * 64) * 128 * 2);
  BOOST_TEST(fa2.kernels[1].cta.threads == 128);  // row kernels
  BOOST_TEST(fa2.kernels[2].cta.threads == 256);  // backward: 8 warps
  const auto fa1 = make_plan(p, Algorithm::fa1, Pass::fwdbwd, PlanTiling{64, 64, {}, 1});
  BOOST_TEST(fa1.kernels[0].cta.threads == 4 * 32);
  BOOST_TEST(fa1.kernels[0].cta.smem_bytes == (2 * 64 + 2 * 64) * (128 + 8) * 2 + 2 * 64 * 4);
  BOOST_TEST(fa1.kernels[1].cta.threads == 8 * 32);
  // The compiled instantiation's count (kernel_registers.inc), not the kind's typical one.
  BOOST_TEST(fa1.kernels[1].cta.regs_per_thread ==
             schedule::compiled_registers(KernelKind::fa1_bwd, p.dtype, {p.head_dim, 64, 64}).value());
  const auto std_plan = make_plan(p, Algorithm::standard, Pass::fwd, t);
  BOOST_TEST(std_plan.kernels[0].cta.threads == 256);
  // Two stages of swizzled (unpadded) A and B chunks, or the epilogue's C tile
  // (swizzled too), whichever is larger: here equal, 2 (128 + 128) 32 = 128 x 128.
  BOOST_TEST(std_plan.kernels[0].cta.smem_bytes == 128 * 128 * 2);
  BOOST_TEST(std_plan.kernels[0].cta.smem_bytes == 2 * (128 + 128) * 32 * 2);
  BOOST_TEST(std_plan.kernels[2].cta.smem_bytes == 128 * 128 * 2);
  BOOST_TEST(!schedule::GemmSchedule::c_in_stage(128, 128, 32));  // C takes both stages
  BOOST_TEST(schedule::GemmSchedule::c_in_stage(128, 128, 64));   // C fits in one
  BOOST_TEST(schedule::GemmSchedule::launch_smem_bytes_for(64, 128, 32, 2) == 2 * (64 + 128) * 32 * 2);
  // The trace reports the plan's shapes.
  iosim::trace::TraceOptions opt;
  opt.algorithm = Algorithm::standard;
  opt.pass = Pass::fwd;
  const auto run = iosim::trace::build_trace(p, opt);
  BOOST_TEST(run.kernels[0].kernel->resources().threads == 256);
  BOOST_TEST(run.kernels[0].kernel->resources().smem_bytes == std_plan.kernels[0].cta.smem_bytes);
}

// A GEMM CTA computes tiles_per_cta output tiles along n in turn (fewer at
// the right edge): the grid covers every output tile exactly once, and the
// trace walks each CTA's tiles in that order, a step per k chunk of each
// group member and then the tile's C.
BOOST_AUTO_TEST_CASE(gemm_ctas_take_each_output_tile_once_in_turn) {
  for (const i64 n : {1, 100, 128, 129, 1000, 4096})
    for (const i64 per_cta : {1, 2, 3, 4, 8}) {
      schedule::GemmSchedule s{300, n, 72, 128, 128, 32, 3, 1, {}};
      s.tiles_per_cta = per_cta;
      std::vector<int> seen(static_cast<size_t>(s.output_tiles()), 0);
      const auto g = s.grid();
      BOOST_TEST(g.x == (s.n_tiles() + per_cta - 1) / per_cta);
      for (i64 z = 0; z < g.z; ++z)
        for (i64 y = 0; y < g.y; ++y)
          for (i64 x = 0; x < g.x; ++x) {
            const auto c = s.cta(x, y, z);
            BOOST_TEST((c.tiles >= 1 && c.tiles <= per_cta));
            for (i64 t = 0; t < c.tiles; ++t)
              ++seen[static_cast<size_t>((z * s.m_tiles() + c.m_tile) * s.n_tiles() + c.n_tile + t)];
          }
      BOOST_TEST(std::count(seen.begin(), seen.end(), 1) == s.output_tiles(), "n " << n << " per CTA " << per_cta);
    }
  // The plan's rule (gemm_tiles_per_cta) and the trace: S = Q K^T at K = 128
  // with 128 x 128 x 64 tiles is two chunks per tile; its CTAs take four
  // tiles when that leaves at least 512 CTAs, and the trace's steps follow them.
  const Problem p = problem(1000, 1000, 128, false, 32, 32);
  BOOST_TEST(make_plan(problem(1000, 1000, 128, false), Algorithm::standard, Pass::fwd, PlanTiling{64, 64, {128, 128, 64}, 1})
                 .kernels[0].as<schedule::GemmPlan>().s.tiles_per_cta == 1);  // 8 x 2 x 8 CTAs would be too few
  BOOST_TEST(make_plan(p, Algorithm::standard, Pass::fwd, PlanTiling{64, 64, {128, 128, 32}, 1})
                 .kernels[0].as<schedule::GemmPlan>().s.tiles_per_cta == 1);  // C takes both stages
  const PlanTiling t{64, 64, {128, 128, 64}, 1};
  const auto plan = make_plan(p, Algorithm::standard, Pass::fwd, t);
  const auto& qk = plan.kernels[0].as<schedule::GemmPlan>().s;
  BOOST_TEST(qk.tiles_per_cta == 4);
  BOOST_TEST(plan.kernels[0].grid.x == (qk.n_tiles() + qk.tiles_per_cta - 1) / qk.tiles_per_cta);
  iosim::trace::TraceOptions opt;
  opt.algorithm = Algorithm::standard;
  opt.pass = Pass::fwd;
  opt.gemm = {128, 128, 64};
  const auto run = iosim::trace::build_trace(p, opt);
  auto gen = run.kernels[0].kernel->cta_steps(0, 1, 0);
  std::vector<std::array<i64, 3>> steps;  // (program, B's first row = n0, C's first column)
  while (gen.next()) {
    const auto& st = gen.value();
    steps.push_back({st.compute.program, st.load_count > 1 ? st.loads[1].row0 : -1,
                     st.store_count > 0 ? st.stores[0].col0 : -1});
  }
  const i64 tiles = qk.cta(0, 1, 0).tiles;
  BOOST_TEST_REQUIRE(steps.size() == static_cast<size_t>(tiles * 3));
  for (i64 tile = 0; tile < tiles; ++tile) {
    const auto at = [&](i64 k) { return steps[static_cast<size_t>(tile * 3 + k)]; };
    BOOST_TEST(at(0)[0] == schedule::kMainStep);
    BOOST_TEST(at(0)[1] == tile * 128);  // K's rows of this tile (k contiguous: rows are n)
    BOOST_TEST(at(1)[1] == tile * 128);
    BOOST_TEST(at(2)[0] == (tile + 1 == tiles ? schedule::kFinalStep : schedule::kEpilogue));
    BOOST_TEST(at(2)[2] == tile * 128);
  }
}

// KeyBlockRange visits first_n_block/next_n_block's blocks, and its masked
// run is exactly the blocks that need an element mask.
BOOST_AUTO_TEST_CASE(key_block_range_is_the_plain_loop_with_the_mask_split) {
  for (const Case& c : random_cases()) {
    const AttentionTiles t = schedule::make_tiles(c.p, c.bm, c.bn, schedule::mask_view(&c.mask));
    for (i64 i = 0; i < t.m_blocks(); ++i) {
      std::vector<i64> plain, walked;
      for (i64 j = t.first_n_block(i); j < t.n_block_end(i); j = t.next_n_block(i, j)) plain.push_back(j);
      const auto r = t.key_blocks<int>(i);
      bool seen_masked = false;
      for (int j = r.first; j < r.end; j = r.next(j)) {
        walked.push_back(j);
        BOOST_TEST(r.masked(j) == t.needs_element_mask(i, j), "i=" << i << " j=" << j);
        BOOST_TEST(!(seen_masked && !r.masked(j)), "an unmasked block after a masked one at i=" << i);
        seen_masked = seen_masked || r.masked(j);
      }
      BOOST_TEST(walked == plain, boost::test_tools::per_element());
    }
  }
}

// FA2 backward's flat work walk is the nest "heads of the group, then active
// query blocks".
BOOST_AUTO_TEST_CASE(fa2_backward_work_walk_is_the_nested_loop) {
  for (const Case& c : random_cases()) {
    const AttentionTiles t = schedule::make_tiles(c.p, c.bm, c.bn, schedule::mask_view(&c.mask));
    const schedule::Fa2BackwardSchedule s{t, {1, 4, 2}, 64, {2}};
    for (i64 j = 0; j < t.n_blocks(); ++j) {
      const schedule::Fa2BackwardSchedule::Cta cta{j, 0, 0};
      std::vector<std::pair<i64, i64>> nested, walked;
      for (i64 g = 0; g < 2; ++g)
        for (i64 i = t.first_m_block(j); i < t.m_blocks(); i = t.next_m_block(j, i)) nested.push_back({g, i});
      const auto work = s.work_items<int>(cta);
      for (auto w = work.first(); !work.done(w); w = work.next(t, w)) {
        walked.push_back({w.g, w.i});
        BOOST_TEST(work.masked(w) == t.needs_element_mask(w.i, j), "j=" << j << " i=" << w.i);
      }
      BOOST_TEST((walked == nested), "j=" << j);
    }
  }
}

// FA1's outer loop skips exactly the key blocks with no active tile.
BOOST_AUTO_TEST_CASE(fa1_outer_loop_skips_empty_key_blocks) {
  for (const Case& c : random_cases()) {
    const AttentionTiles t = schedule::make_tiles(c.p, c.bm, c.bn, schedule::mask_view(&c.mask));
    const schedule::Fa1ForwardSchedule s{t, {1, 4, 2}, 64, {2}};
    std::vector<i64> plain, walked;
    for (i64 j = 0; j < t.n_blocks(); ++j)
      if (t.column_has_active(j)) plain.push_back(j);
    for (i64 j = s.first_key_block(); j < t.n_blocks(); j = s.next_key_block(j)) walked.push_back(j);
    BOOST_TEST(walked == plain, boost::test_tools::per_element());
  }
}

// splitkv: a split kernel and a combine, forward only, no block mask, splits
// from 1 to the key blocks; CTAs per (query block, split, head, batch).
BOOST_AUTO_TEST_CASE(splitkv_plans_a_split_kernel_and_a_combine_within_its_domain) {
  const Problem p = problem(3, 4097, 128, true);
  PlanTiling t{16, 64, {}, 100 * 1024, 5};
  const auto plan = make_plan(p, Algorithm::splitkv, Pass::fwd, t);
  using V = std::vector<std::string>;
  BOOST_TEST(names(plan) == (V{"splitkv_fwd", "splitkv_combine"}), boost::test_tools::per_element());
  const auto& split = plan.kernels[0];
  BOOST_TEST(split.grid.x == 5);  // one query block, 5 splits
  BOOST_TEST(split.grid.y == 4);
  BOOST_TEST(split.grid.z == 2);
  BOOST_TEST(split.cta.threads == 32 * schedule::SplitKvSchedule::kWarps);
  // Q_i and two stages of K_j, V_j (larger than the warps' merge buffers here).
  BOOST_TEST(split.cta.smem_bytes == (16 + 4 * 64) * 128 * 2);
  BOOST_TEST(plan.kernels[1].grid.x == 1);  // 3 rows, 4 per CTA at d = 128
  for (const Pass pass : {Pass::bwd, Pass::fwdbwd})
    BOOST_CHECK_THROW(make_plan(p, Algorithm::splitkv, pass, t), iosim::InputError);
  for (const i64 bad : {i64{0}, i64{66}}) {  // 4097 keys are 65 blocks of 64
    t.splits = bad;
    BOOST_CHECK_THROW(make_plan(p, Algorithm::splitkv, Pass::fwd, t), iosim::InputError);
  }
  t.splits = 65;
  BOOST_CHECK_NO_THROW(make_plan(p, Algorithm::splitkv, Pass::fwd, t));
  Problem sparse = p;
  sparse.sparsity.kind = iosim::workload::SparsitySpec::Kind::random_density;
  sparse.sparsity.density = 0.5;
  BOOST_CHECK_THROW(make_plan(sparse, Algorithm::splitkv, Pass::fwd, t), iosim::InputError);
}

// Each query block's active key blocks are cut into `splits` consecutive runs
// that cover them once, in order, differing by at most one block; no run is
// empty while there are at least as many blocks as splits.
BOOST_AUTO_TEST_CASE(splitkv_runs_partition_each_query_blocks_key_blocks_evenly) {
  std::mt19937 rng(11);
  for (int n = 0; n < 300; ++n) {
    Problem p = problem(1 + static_cast<i64>(rng() % 40), 1 + static_cast<i64>(rng() % 900), 64, rng() % 2 == 0);
    const i64 bm = 16 << (rng() % 2), bn = 16 << (rng() % 3);
    const AttentionTiles t = schedule::make_tiles(p, bm, bn);
    const i64 splits = 1 + static_cast<i64>(rng() % static_cast<std::uint32_t>(t.n_blocks()));
    const schedule::SplitKvSchedule s{t, schedule::head_shape(p), 64, {}, splits};
    for (i64 i = 0; i < t.m_blocks(); ++i) {
      std::vector<i64> plain, walked;
      for (i64 j = t.first_n_block(i); j < t.n_block_end(i); j = t.next_n_block(i, j)) plain.push_back(j);
      i64 shortest = t.n_blocks() + 1, longest = 0;
      for (i64 sp = 0; sp < splits; ++sp) {
        const auto r = s.key_blocks({i, sp, 0, 0});
        i64 run = 0;
        for (i64 j = r.first; j < r.end; j = r.next(j), ++run) {
          walked.push_back(j);
          BOOST_TEST(r.masked(j) == t.needs_element_mask(i, j));
        }
        shortest = std::min(shortest, run);
        longest = std::max(longest, run);
      }
      BOOST_TEST(walked == plain, boost::test_tools::per_element());
      BOOST_TEST(longest - shortest <= 1);
      if (t.n_block_end(i) >= splits) BOOST_TEST(shortest >= 1);
    }
  }
}

// The default: enough CTAs to fill the SMs once, at most one split per key block.
BOOST_AUTO_TEST_CASE(default_splits_fill_the_sms_once) {
  Problem p = problem(1, 32768, 128, false, 8, 8);
  p.batch = 1;
  BOOST_TEST(schedule::default_splits(p, 16, 64, 132) == 17);  // ceil(132 / 8)
  p.batch = 32;                                                 // 256 CTAs already
  BOOST_TEST(schedule::default_splits(p, 16, 64, 132) == 1);
  p.batch = 1;
  p.seq_k = 200;  // 4 key blocks
  BOOST_TEST(schedule::default_splits(p, 16, 64, 132) == 4);
  p.seq_q = 40;  // 3 query blocks: 24 CTAs
  p.seq_k = 32768;
  BOOST_TEST(schedule::default_splits(p, 16, 64, 132) == 6);
}

// FA1's warp programs (sim/schedule/warp_programs.cpp): a masked step's
// scores that the causal mask hides branch around the exponential, so the
// masked program issues fewer MUFU than the unmasked one; with no hidden
// score (no causal mask, whole blocks) both issue the same.
BOOST_AUTO_TEST_CASE(fa1_masked_steps_skip_the_exponentials_of_hidden_scores) {
  PlanTiling t;
  t.block_m = t.block_n = 64;
  for (const Pass pass : {Pass::fwd, Pass::bwd})
    for (const bool causal : {false, true}) {
      const auto plan = make_plan(problem(1024, 1024, 64, causal), Algorithm::fa1, pass, t);
      const auto progs = schedule::warp_programs(plan.kernels.at(0), 2);
      const i64 main = progs.programs.at(schedule::kMainStep).count(schedule::Pipe::mufu);
      const i64 masked = progs.programs.at(schedule::kMaskedStep).count(schedule::Pipe::mufu);
      if (causal) {
        BOOST_TEST(masked < main, plan.kernels.at(0).name);
      } else {
        BOOST_TEST(masked == main, plan.kernels.at(0).name);
      }
    }
}

// FA1's synchronous tile copies (tile_mma.cuh): a thread's n chunks arrive in
// n % 4 single iterations, then n / 4 batches of four; the backward's step
// waits for Q_i, O_i, dO_i, the fp32 dQaccum_i and then l_i, m_i.
BOOST_AUTO_TEST_CASE(fa1_copies_arrive_in_single_iterations_then_batches_of_four) {
  const auto rounds = [](i64 rows, i64 d, i64 elem, i64 threads) {
    const i64 n = (rows * d * elem / 16 + threads - 1) / threads;
    return n % 4 + n / 4;
  };
  for (const i64 bm : {32, 64, 128}) {
    PlanTiling t;
    t.block_m = bm;
    t.block_n = 64;
    const auto plan = make_plan(problem(1024, 1024, 64, false), Algorithm::fa1, Pass::bwd, t);
    const auto progs = schedule::warp_programs(plan.kernels.at(0), 2);
    const i64 threads = plan.kernels.at(0).cta.threads;
    BOOST_TEST(progs.rounds_of(schedule::kMainStep) == 3 * rounds(bm, 64, 2, threads) + rounds(bm, 64, 4, threads) + 1,
               "B_r " << bm);
  }
}

// fa3's plan: one forward kernel launched as the FA3 kernel is (384 threads,
// the schedule's shared memory, ptxas's registers for the instantiation), the
// trace pipelining as deep as the schedule's stage ring, the programs run by
// the 8 consumer warps; causal grids start at the last query block.
BOOST_AUTO_TEST_CASE(fa3_plan_launches_its_kernel_with_the_schedules_resources) {
  using S = schedule::Fa3ForwardSchedule;
  for (const i64 d : {64, 128})
    for (const auto dt : {iosim::workload::DType::fp16, iosim::workload::DType::bf16}) {
      Problem p = problem(300, 200, d, true);
      p.dtype = dt;
      const auto plan = make_plan(p, Algorithm::fa3, Pass::fwd, PlanTiling{S::kBlockM, S::kBlockN, {}});
      BOOST_TEST_REQUIRE(names(plan) == std::vector<std::string>{"fa3_fwd"});
      const auto& k = plan.kernels[0];
      BOOST_TEST((k.kind == KernelKind::fa3_fwd));
      BOOST_TEST(k.cta.threads == 384);
      BOOST_TEST(k.cta.smem_bytes == S::sram_bytes_for(d, 2));
      BOOST_TEST(k.cta.regs_per_thread ==
                 schedule::compiled_registers(KernelKind::fa3_fwd, dt, {d, S::kBlockM, S::kBlockN}).value());
      BOOST_TEST(k.cta.regs_per_thread * k.cta.threads <= 65536);  // launch_bounds(384, 1)
      BOOST_TEST(k.grid.x == 3);
      BOOST_TEST(k.grid.y == 4);
      BOOST_TEST(k.grid.z == 2);
      BOOST_TEST(schedule::warp_programs(k, 2).warps == 8);

      iosim::trace::TraceOptions o;
      o.algorithm = Algorithm::fa3;
      o.sram_limit_bytes = 227 * 1024;
      const auto run = iosim::trace::build_trace(p, o);
      BOOST_TEST(run.tiling.block_m == S::kBlockM);
      BOOST_TEST(run.tiling.block_n == S::kBlockN);
      BOOST_TEST(run.kernels.at(0).kernel->pipeline_stages() == S::stages_for(d, 2));
      // CTA x = 0 of a causal grid takes the last query block (rows 256..299).
      auto steps = run.kernels.at(0).kernel->cta_steps(0, 0, 0);
      BOOST_TEST_REQUIRE(steps.next());
      const auto& first = steps.value();
      bool saw_q = false;
      for (int l = 0; l < first.load_count; ++l)
        if (const auto& a = first.loads[static_cast<size_t>(l)]; a.tensor == iosim::trace::TensorId::Q) {
          saw_q = true;
          BOOST_TEST(a.row0 == 256);
          BOOST_TEST(a.rows == 44);
        }
      BOOST_TEST(saw_q);
    }
}

// fa3's TMA boxes past the tensors' ends (Fa3ForwardSchedule::tma_zero_fill_bytes):
// N = 1000, d = 128, dense: every one of the 8 CTAs loads the last K and V
// boxes with 24 rows of fill each, the last CTA its Q box with 24 more, so
// 8 x 48 + 24 = 408 rows of 256 B per head (what the H200's crossbar counted
// beside the trace's reads, experiments/results/2026-12-02-h200-staged-stores);
// none when N is a multiple of the box.
BOOST_AUTO_TEST_CASE(fa3_zero_fill_is_the_boxes_rows_past_the_tensors) {
  using S = schedule::Fa3ForwardSchedule;
  const auto fill = [](i64 n) {
    const auto plan = make_plan(problem(n, n, 128, false, 4, 4), Algorithm::fa3, Pass::fwd,
                                PlanTiling{S::kBlockM, S::kBlockN, {}});
    return plan.kernels.at(0).as<S>().tma_zero_fill_bytes();
  };
  BOOST_TEST(fill(1000) == 2 * 4 * 408 * 256);  // batch 2, 4 heads
  BOOST_TEST(fill(2048) == 0);
}

// fa3's step program issues the kernel's wgmmas (fa3_forward.cuh issue_qk,
// issue_pv): per key block d/16 m64n128k16 for S and B_c/16 m64n{d}k16 for
// P V, each one asynchronous instruction per warp carrying its 16 rows' FLOP
// (together the step's GEMM FLOP over the 8 consumer warps), and two
// wait_groups (S, then P V), both before the softmax.
BOOST_AUTO_TEST_CASE(fa3_step_issues_the_kernels_wgmmas_and_waits_for_them) {
  using S = schedule::Fa3ForwardSchedule;
  for (const i64 d : {64, 128}) {
    const auto plan = make_plan(problem(1024, 1024, d, false), Algorithm::fa3, Pass::fwd,
                                PlanTiling{S::kBlockM, S::kBlockN, {}});
    const auto progs = schedule::warp_programs(plan.kernels.at(0), 2);
    for (const int step : {schedule::kMainStep, schedule::kMaskedStep}) {
      const schedule::WarpProgram& prog = progs.programs.at(step);
      i64 n128 = 0, nd = 0, other = 0, waits = 0, plain_tensor = 0;
      i64 flop = 0;
      std::vector<i64> waited;
      for (const schedule::Instr& in : prog.code) {
        if (in.op == schedule::Op::wgmma) {
          flop += in.flop;
          (in.flop == 16 * 128 * 16 * 2 ? n128 : in.flop == 16 * d * 16 * 2 ? nd : other) += 1;
        } else if (in.op == schedule::Op::wgmma_wait) {
          ++waits;
          BOOST_TEST_REQUIRE(in.sources == 1);
          waited.push_back(in.source[0]);
        } else if (in.pipe == schedule::Pipe::tensor) {
          ++plain_tensor;
        }
      }
      BOOST_TEST(plain_tensor == 0, "no mma.sync in FA3");
      BOOST_TEST(other == 0);
      if (d == 128) {
        BOOST_TEST(n128 + nd == d / 16 + S::kBlockN / 16);
      } else {
        BOOST_TEST(n128 == d / 16);
        BOOST_TEST(nd == S::kBlockN / 16);
      }
      // 8 warps x this warp's FLOP = the step's S and P V products.
      BOOST_TEST(8 * flop == 2 * (2 * S::kBlockM * S::kBlockN * d));
      // The first wait is for S's last wgmma, the second for P V's last.
      BOOST_TEST_REQUIRE(waits == 2);
      const auto& a = prog.code.at(static_cast<size_t>(waited[0]));
      const auto& b = prog.code.at(static_cast<size_t>(waited[1]));
      BOOST_TEST((a.op == schedule::Op::wgmma && a.flop == 16 * 128 * 16 * 2));
      BOOST_TEST((b.op == schedule::Op::wgmma && b.flop == 16 * d * 16 * 2));
      BOOST_TEST(waited[1] > waited[0]);
      BOOST_TEST(prog.count(schedule::Pipe::tensor) == d / 16 + S::kBlockN / 16);
      // As the kernel's SASS has it, P V's wait comes before any of the
      // softmax's exponentials (nvcc hoists the second WARPGROUP.DEPBAR).
      size_t second_wait = 0, first_mufu = prog.code.size();
      for (size_t k = 0; k < prog.code.size(); ++k) {
        if (prog.code[k].op == schedule::Op::wgmma_wait) second_wait = k;
        if (prog.code[k].pipe == schedule::Pipe::mufu) first_mufu = std::min(first_mufu, k);
      }
      BOOST_TEST(second_wait < first_mufu);
    }
  }
}

BOOST_AUTO_TEST_CASE(fa3_plan_refuses_what_its_kernel_does_not_cover) {
  using S = schedule::Fa3ForwardSchedule;
  const PlanTiling tile{S::kBlockM, S::kBlockN, {}};
  BOOST_CHECK_THROW(make_plan(problem(256, 256, 64, false), Algorithm::fa3, Pass::bwd, tile), iosim::InputError);
  BOOST_CHECK_THROW(make_plan(problem(256, 256, 64, false), Algorithm::fa3, Pass::fwdbwd, tile), iosim::InputError);
  BOOST_CHECK_THROW(make_plan(problem(256, 256, 96, false), Algorithm::fa3, Pass::fwd, tile), iosim::InputError);
  BOOST_CHECK_THROW(make_plan(problem(256, 256, 64, false), Algorithm::fa3, Pass::fwd, PlanTiling{64, 128, {}}),
                    iosim::InputError);
  Problem fp32 = problem(256, 256, 64, false);
  fp32.dtype = iosim::workload::DType::fp32;
  BOOST_CHECK_THROW(make_plan(fp32, Algorithm::fa3, Pass::fwd, tile), iosim::InputError);
}

// Standard attention with GemmImpl::wgmma: its GEMMs are the Hopper kernel
// (kernels/standard/sm90a) with the shape it launches, the same schedule and
// grid as mma.sync's; the softmax is unchanged; N_k rows that TMA cannot read
// (not a multiple of 8 two-byte elements) fall back to mma.sync, as the
// kernel's launch would.
BOOST_AUTO_TEST_CASE(wgmma_gemm_plan_launches_the_hopper_kernel_where_tma_reads_the_rows) {
  using W = schedule::WgmmaGemmShape;
  const PlanTiling wg{128, 128, {128, 128, 64, schedule::GemmImpl::wgmma}};
  const PlanTiling mma{128, 128, {128, 128, 64}};
  for (const auto dt : {iosim::workload::DType::fp16, iosim::workload::DType::bf16}) {
    Problem p = problem(1000, 1000, 64, true);
    p.dtype = dt;
    const auto plan = make_plan(p, Algorithm::standard, Pass::fwdbwd, wg);
    const auto ref = make_plan(p, Algorithm::standard, Pass::fwdbwd, mma);
    BOOST_TEST_REQUIRE(names(plan) == names(ref));
    for (size_t i = 0; i < plan.kernels.size(); ++i) {
      const auto& k = plan.kernels[i];
      const auto& r = ref.kernels[i];
      BOOST_TEST((k.grid.x == r.grid.x && k.grid.y == r.grid.y && k.grid.z == r.grid.z), k.name);
      if (r.kind != KernelKind::gemm) {
        BOOST_TEST((k.kind == r.kind), k.name);
        continue;
      }
      BOOST_TEST((k.kind == KernelKind::gemm_wgmma), k.name);
      BOOST_TEST(schedule::is_gemm(k.kind));
      BOOST_TEST(k.cta.threads == 288);  // two consumer warpgroups and the producer warp
      BOOST_TEST(k.cta.smem_bytes == 3 * (128 + 128) * 64 * 2 + 6 * 8 + 1024);
      BOOST_TEST(k.cta.smem_bytes == W::kSmemBytes);
      BOOST_TEST(k.cta.regs_per_thread ==
                 schedule::compiled_registers(KernelKind::gemm_wgmma, dt, {128, 128, 64}).value());
      BOOST_TEST(k.cta.regs_per_thread * k.cta.threads * W::kMinCtasPerSm <= 65536);  // launch_bounds(288, 2)
      const auto& g = k.as<schedule::GemmPlan>().s;
      const auto& gr = r.as<schedule::GemmPlan>().s;
      BOOST_TEST((g.m == gr.m && g.n == gr.n && g.k == gr.k && g.tiles_per_cta == gr.tiles_per_cta), k.name);
      BOOST_TEST(schedule::warp_programs(k, 2).warps == W::kConsumerWarps);
    }
  }
  // N_k = 1001: S, P, dP, dS rows of 2002 bytes; every GEMM stays on mma.sync.
  for (const auto& k : make_plan(problem(1000, 1001, 64, false), Algorithm::standard, Pass::fwdbwd, wg).kernels)
    BOOST_TEST((k.kind != KernelKind::gemm_wgmma), k.name);
}

BOOST_AUTO_TEST_CASE(wgmma_gemm_plan_refuses_what_its_kernel_does_not_cover) {
  const Problem p = problem(256, 256, 64, false);
  const auto tiling = [](i64 m, i64 n, i64 k) { return PlanTiling{64, 64, {m, n, k, schedule::GemmImpl::wgmma}}; };
  BOOST_CHECK_NO_THROW(make_plan(p, Algorithm::standard_eager, Pass::fwd, tiling(128, 128, 64)));
  BOOST_CHECK_THROW(make_plan(p, Algorithm::standard, Pass::fwd, tiling(128, 128, 32)), iosim::InputError);
  BOOST_CHECK_THROW(make_plan(p, Algorithm::standard, Pass::fwd, tiling(64, 128, 64)), iosim::InputError);
  BOOST_CHECK_THROW(make_plan(p, Algorithm::fa2, Pass::fwd, tiling(128, 128, 64)), iosim::InputError);
  Problem fp32 = p;
  fp32.dtype = iosim::workload::DType::fp32;
  BOOST_CHECK_THROW(make_plan(fp32, Algorithm::standard, Pass::fwd, tiling(128, 128, 64)), iosim::InputError);
}

// The wgmma GEMM's zero fill (schedule::wgmma_gemm_zero_fill_bytes) against
// its boxes counted one by one as the producer loads them
// (standard_gemm_wgmma.cu produce(): per output tile and chunk, a 64 x 128
// box per k-contiguous operand, a 64 x 64 box per m- or n-contiguous half
// that starts inside the operand), minus what lies inside the operand, a row
// cut short in whole sectors; and at the measured points (N = 1000, d = 64,
// batch 2, 4 heads: Nsight Compute's crossbar read 393,216 bytes more than
// the trace for S = Q K^T, experiments/results/2026-11-28-h200-wgmma-gemm-bytes;
// P V's 16 bytes per cut row of P beyond the elements past it,
// experiments/results/2026-12-02-h200-wgmma-gemm-model).
BOOST_AUTO_TEST_CASE(wgmma_gemm_zero_fill_is_its_boxes_past_the_operands) {
  const PlanTiling wg{128, 128, {128, 128, 64, schedule::GemmImpl::wgmma}};
  const auto by_box = [](const schedule::GemmPlan& gp) {
    const auto& s = gp.s;
    i64 fill = 0;
    // A box of `rows` rows of 64 elements, `in_rows` of them inside the
    // operand with `in_cols` elements each: the rest is fill, a cut row's in
    // whole 32-byte sectors.
    const auto box = [](i64 rows, i64 in_rows, i64 in_cols) {
      const i64 cut = (64 - in_cols) * 2;
      return (rows - in_rows) * 128 + in_rows * ((cut + 31) / 32 * 32);
    };
    const auto operand = [&](const schedule::GemmOperand& o, i64 o0, i64 extent, i64 k0) {
      const i64 kd = std::min<i64>(64, s.k - k0);
      if (o.k_contiguous) return box(128, std::min<i64>(128, extent - o0), kd);  // rows: outer; columns: k
      i64 z = 0;
      for (i64 h = o0; h < o0 + 128; h += 64)
        if (h < extent) z += box(64, kd, std::min<i64>(64, extent - h));  // rows: k; columns: outer
      return z;
    };
    for (i64 mt = 0; mt < s.m_tiles(); ++mt)
      for (i64 nt = 0; nt < s.n_tiles(); ++nt)
        for (i64 kc = 0; kc < s.k_chunks(); ++kc)
          fill += operand(gp.a, mt * 128, s.m, kc * 64) + operand(gp.b, nt * 128, s.n, kc * 64);
    return fill * s.k_groups * s.batches;
  };
  for (const auto& [nq, nk, d] : std::vector<std::array<i64, 3>>{{1000, 1000, 64}, {700, 1304, 128}, {256, 512, 64}})
    for (const auto& k : make_plan(problem(nq, nk, d, false), Algorithm::standard, Pass::fwdbwd, wg).kernels)
      if (k.kind == KernelKind::gemm_wgmma)
        BOOST_TEST(schedule::wgmma_gemm_zero_fill_bytes(k.as<schedule::GemmPlan>()) ==
                       by_box(k.as<schedule::GemmPlan>()),
                   k.name << " at " << nq << "x" << nk << " d " << d);
  const auto plan = make_plan(problem(1000, 1000, 64, false, 4, 4), Algorithm::standard, Pass::fwd, wg);
  BOOST_TEST(schedule::wgmma_gemm_zero_fill_bytes(plan.kernels.at(0).as<schedule::GemmPlan>()) == 393216);
  const auto even = make_plan(problem(1024, 1024, 64, false, 4, 4), Algorithm::standard, Pass::fwdbwd, wg);
  for (const auto& k : even.kernels)
    if (k.kind == KernelKind::gemm_wgmma) {
      // d = 64: the MN-major operands' second halves are not loaded, so no fill either.
      BOOST_TEST(schedule::wgmma_gemm_zero_fill_bytes(k.as<schedule::GemmPlan>()) == 0, k.name);
    }
}

// The wgmma GEMM's programs: a chunk issues its four m64n128k16 wgmmas (a
// warp's 16 rows each: 8 consumer warps x 4 x 16 x 128 x 16 x 2 FLOP = the
// chunk's 128 x 128 x 64 product) and is filled to the counts Nsight Compute
// gave per consumer warp; a tile's C goes out in 16-byte runs, 8 stores per
// warp for 128 columns, 4 for d = 64.
BOOST_AUTO_TEST_CASE(wgmma_gemm_programs_issue_the_kernels_wgmmas_and_stores) {
  const PlanTiling wg{128, 128, {128, 128, 64, schedule::GemmImpl::wgmma}};
  const auto plan = make_plan(problem(2048, 2048, 64, false), Algorithm::standard, Pass::fwdbwd, wg);
  for (const auto& k : plan.kernels) {
    if (k.kind != KernelKind::gemm_wgmma) continue;
    const auto progs = schedule::warp_programs(k, 2);
    const auto& chunk = progs.programs.at(schedule::kMainStep);
    i64 flop = 0;
    for (const auto& in : chunk.code) flop += in.op == schedule::Op::wgmma ? in.flop : 0;
    BOOST_TEST(8 * flop == 2 * 128 * 128 * 64, k.name);
    BOOST_TEST(chunk.count(schedule::Pipe::tensor) == 4);
    const bool kk = k.as<schedule::GemmPlan>().b.k_contiguous;
    const bool a_kc = k.as<schedule::GemmPlan>().a.k_contiguous;
    BOOST_TEST(static_cast<i64>(chunk.code.size()) == (kk ? 82 : a_kc ? 89 : 93), k.name);
    const auto& last = progs.programs.at(schedule::kFinalStep);
    BOOST_TEST(last.count(schedule::Pipe::global) == (kk ? 8 : 4), k.name);  // S: 128 columns; O: d = 64
    BOOST_TEST(last.count(schedule::Pipe::shfl) == 32);
    BOOST_TEST(static_cast<i64>(last.code.size()) == (kk ? 366 + 114 + 73 : 383 + 72), k.name);
  }
}

// FA2 forward's step program (sim/schedule/warp_programs.cpp): at a fixed
// head dimension and warp layout, what a step executes is its per-score work
// (linear in B_c) plus a loop overhead that does not grow with B_c, so the
// count per pipe is affine in B_c with a non-negative intercept, and the
// non-GEMM pipes' intercept is a real per-step cost (> 0): small key blocks
// pay it once per B_c columns. What grows with B_c on fma and alu is only the
// per-score softmax (kernels/fa2/fa2_forward.cuh online_softmax: per n8 tile
// and row two FFMA, two FADD, one F2FP on fma and two FMNMX on alu) and the
// 64-bit address step of each further cp.async chunk of K and V (2 alu):
// no per-LDSM address operations, no register moves of S or P.
BOOST_AUTO_TEST_CASE(fa2_forward_step_overhead_does_not_scale_with_the_key_block) {
  for (const int d : {64, 128}) {
    const i64 bm = 128;
    std::vector<std::array<i64, schedule::kPipeCount>> counts;
    for (const int bn : {16, 32, 64}) {
      BOOST_TEST_REQUIRE(schedule::Fa2ForwardSchedule::rows_per_warp(d, bm, bn) ==
                         schedule::Fa2ForwardSchedule::rows_per_warp(d, bm, 16));
      PlanTiling t;
      t.block_m = bm;
      t.block_n = bn;
      const auto plan = make_plan(problem(1024, 1024, d, false), Algorithm::fa2, Pass::fwd, t);
      // Less the kernel's spills and register-indexed tables (LDL/STL, on
      // the global pipe), which its SASS has at some tiles and not others.
      const schedule::WarpProgram prog = schedule::warp_programs(plan.kernels.at(0), 2).programs.at(schedule::kMainStep);
      auto c = prog.count_by_pipe();
      c[static_cast<size_t>(schedule::Pipe::global)] -= static_cast<i64>(prog.locals.size());
      counts.push_back(c);
    }
    for (size_t p = 0; p < static_cast<size_t>(schedule::kPipeCount); ++p) {
      const i64 step = counts[1][p] - counts[0][p];
      BOOST_TEST(counts[2][p] - counts[1][p] == 2 * step, "d " << d << " pipe " << p);
      BOOST_TEST(counts[0][p] - step >= 0, "d " << d << " pipe " << p);
    }
    const i64 rows = 2 * schedule::Fa2ForwardSchedule::rows_per_warp(d, bm, 16) / 16;  // a thread's rows
    const i64 threads = 32 * schedule::Fa2ForwardSchedule::warps_for(d, bm, 16);
    const i64 more_chunks = 16 * d * 2 / 16 / threads;  // a tile's chunks per thread per 16 more keys
    const auto fma = static_cast<size_t>(schedule::Pipe::fma), alu = static_cast<size_t>(schedule::Pipe::alu);
    BOOST_TEST(counts[1][fma] - counts[0][fma] == rows * 2 * 5, "d " << d);
    BOOST_TEST(counts[1][alu] - counts[0][alu] == rows * 2 * 2 + 2 * 2 * more_chunks, "d " << d);
    for (const auto pipe : {schedule::Pipe::fma, schedule::Pipe::alu}) {
      const auto p = static_cast<size_t>(pipe);
      BOOST_TEST(counts[0][p] - (counts[1][p] - counts[0][p]) > 0, "d " << d << " pipe " << p);
    }
  }
}

// FA2 backward's programs (sim/schedule/warp_programs.cpp, counted off the
// sm_90 SASS): a step issues the kernel's five products as HMMA.16816
// (5 B_r B_c d / 2048 per CTA, split evenly over the warps), one MUFU.EX2
// per score of the warp's S tile (softmax_grad) and per element pair of P
// and dS an F2FP (fma) and an STS; the masked step adds integer work only;
// the epilogue packs dK and dV (an F2FP and an STS per element pair each).
BOOST_AUTO_TEST_CASE(fa2_backward_programs_issue_the_kernels_products) {
  for (const auto& [d, bm, bn] : std::vector<std::array<int, 3>>{
           {64, 64, 64}, {64, 64, 128}, {64, 128, 64}, {64, 128, 128}, {64, 64, 256},
           {128, 64, 64}, {128, 64, 128}, {128, 128, 64}, {128, 128, 128}}) {
    PlanTiling t;
    t.block_m = bm;
    t.block_n = bn;
    const auto plan = make_plan(problem(1024, 1024, d, false), Algorithm::fa2, Pass::bwd, t);
    const auto& k = *std::find_if(plan.kernels.begin(), plan.kernels.end(),
                                  [](const auto& x) { return x.kind == schedule::KernelKind::fa2_bwd_main; });
    const auto progs = schedule::warp_programs(k, 2);
    const i64 warps = schedule::Fa2BackwardSchedule::warps_for(d, bm, bn);
    const auto step = progs.programs.at(schedule::kMainStep).count_by_pipe();
    const auto masked = progs.programs.at(schedule::kMaskedStep).count_by_pipe();
    const auto epi = progs.programs.at(schedule::kEpilogue).count_by_pipe();
    const auto at = [](const auto& c, schedule::Pipe p) { return c[static_cast<size_t>(p)]; };
    std::string tile = "d";  // appended to, not "d" + ...: GCC 12 warns (-Wrestrict) on that insert
    tile += std::to_string(d) + " " + std::to_string(bm) + "x" + std::to_string(bn);
    BOOST_TEST(at(step, schedule::Pipe::tensor) * warps == 5 * i64{bm} * bn * d / 2048, tile);
    BOOST_TEST(at(step, schedule::Pipe::mufu) * warps * 32 == i64{bm} * bn, tile);
    BOOST_TEST(at(masked, schedule::Pipe::tensor) == at(step, schedule::Pipe::tensor), tile);
    BOOST_TEST(at(masked, schedule::Pipe::fma) == at(step, schedule::Pipe::fma), tile);
    BOOST_TEST(at(masked, schedule::Pipe::alu) > at(step, schedule::Pipe::alu), tile);
    // dK, dV: B_c d elements each, 2 per STS; the tile stores' LDS.
    const i64 chunks = i64{bn} * d * 2 / 16 / (32 * warps);
    BOOST_TEST(at(epi, schedule::Pipe::smem) * warps == 2 * i64{bn} * d / 64 + 2 * chunks * warps, tile);
  }
}

// FA2's row kernels (sim/schedule/warp_programs.cpp, counted off the sm_90
// SASS): a warp's instructions per CTA equal the SASS's dynamic count, which
// Nsight Compute's inst_executed per warp of the grid rows reproduce:
// preprocess 45 + (83 + 5 log2(d/8) + 9) per chunk + the zeroing loop's path,
// each chunk's two 16-byte loads and a store, and the zeroing's float4 stores
// (experiments/results/2026-11-28-fa2-row-kernels-sass); convert_dq 75 + 93
// per trip of four float4s, each trip's four loads and four stores, a load
// round per trip (experiments/results/2026-12-02-h200-staged-stores: its
// per-instruction counts at these four shapes).
BOOST_AUTO_TEST_CASE(fa2_row_kernel_programs_count_what_the_sass_executes) {
  struct Case {
    int d, bm;
    i64 convert, preprocess;  // per warp, as inst_executed / warps on the H200 (and preprocess on the H100)
  };
  for (const Case& c : {Case{64, 64, 261, 536}, Case{64, 128, 447, 975}, Case{128, 64, 447, 1015},
                        Case{128, 128, 819, 1934}}) {
    PlanTiling t;
    t.block_m = c.bm;
    t.block_n = 64;
    const auto plan = make_plan(problem(1024, 1024, c.d, false), Algorithm::fa2, Pass::bwd, t);
    std::string tile = "d";  // appended to: GCC 12 warns (-Wrestrict) on "d" + ...
    tile += std::to_string(c.d) + " B_r " + std::to_string(c.bm);
    for (const auto kind : {schedule::KernelKind::fa2_bwd_convert_dq, schedule::KernelKind::fa2_bwd_preprocess}) {
      const auto& k = *std::find_if(plan.kernels.begin(), plan.kernels.end(),
                                    [&](const auto& x) { return x.kind == kind; });
      const auto progs = schedule::warp_programs(k, 2);
      const auto& prog = progs.programs.at(schedule::kMainStep);
      const i64 chunks = i64{c.bm} * c.d / 8 / 128, float4s = i64{c.bm} * c.d / 4 / 128;
      const bool convert = kind == schedule::KernelKind::fa2_bwd_convert_dq;
      BOOST_TEST(static_cast<i64>(prog.code.size()) == (convert ? c.convert : c.preprocess), tile);
      BOOST_TEST(prog.count(schedule::Pipe::global) == (convert ? 2 * float4s : 3 * chunks + float4s), tile);
      BOOST_TEST(progs.rounds_of(schedule::kMainStep) == (convert ? float4s / 4 : chunks), tile);
    }
  }
  // A tile outside the menus, 6 float4s per thread (d 64, B_r 48): the SASS's
  // one-at-a-time loop takes the 2 left over (28 each, a round each), then one
  // unrolled trip.
  PlanTiling t;
  t.block_m = 48;
  t.block_n = 64;
  const auto plan = make_plan(problem(1024, 1024, 64, false), Algorithm::fa2, Pass::bwd, t);
  const auto& k = *std::find_if(plan.kernels.begin(), plan.kernels.end(),
                                [](const auto& x) { return x.kind == schedule::KernelKind::fa2_bwd_convert_dq; });
  const auto progs = schedule::warp_programs(k, 2);
  BOOST_TEST(static_cast<i64>(progs.programs.at(schedule::kMainStep).code.size()) == 75 + 2 * 28 + 93);
  BOOST_TEST(progs.programs.at(schedule::kMainStep).count(schedule::Pipe::global) == 2 * 6);
  BOOST_TEST(progs.rounds_of(schedule::kMainStep) == 3);
}

// The standard GEMM's step where every output tile is cut in n (O = P V with
// d 64 in a 128-wide tile: B's guarded copy, each warp issuing both the copy
// and the zero-fill side of every chunk's branch) executes the SASS's count
// (experiments/results/2026-11-28-sass-gemm-guarded/guarded.json: the
// 128x128x64 kn builds' guarded issue 259 single / 266 multi against 157 /
// 156 unguarded); Nsight Compute's inst_executed of the grid's cut rows is
// 0.96-0.99 of the model's with it, 0.86-0.96 with the estimate before.
BOOST_AUTO_TEST_CASE(a_gemm_cut_in_n_issues_both_sides_of_its_guarded_copy) {
  struct Case {
    i64 heads;
    i64 tiles_per_cta, issue_cut, issue;
  };
  for (const Case& c : {Case{8, 4, 266, 156}, Case{2, 1, 259, 157}}) {
    const auto pv_step = [&](i64 d) {
      const auto plan = make_plan(problem(8192, 8192, d, false, c.heads, c.heads), Algorithm::standard, Pass::fwd,
                                  PlanTiling{64, 64, {128, 128, 64}, 1});
      const auto& pv = plan.kernels.back();
      BOOST_TEST_REQUIRE(pv.name == "std_fwd_pv");
      BOOST_TEST(pv.as<schedule::GemmPlan>().s.tiles_per_cta == c.tiles_per_cta);
      return static_cast<i64>(schedule::warp_programs(pv, 2).programs.at(schedule::kMainStep).code.size());
    };
    // d 128 fills the tile: the unguarded issue; the products are the same.
    BOOST_TEST(pv_step(64) - pv_step(128) == c.issue_cut - c.issue, "heads " << c.heads);
  }
}
