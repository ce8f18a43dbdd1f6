// The kernel menu as the simulator sees it (sim/schedule/kernel_menu.h, the
// lists the CUDA kernels instantiate): the CI menu is part of the full one,
// every entry is made of the sizes the tile search tries, a tiling without a
// kernel says why, and --tiles kernel's choice is compiled and fits.
#define BOOST_TEST_MODULE kernel_menu
#include <boost/test/unit_test.hpp>

#include <set>
#include <tuple>

#include "sim/profile/profile_names.h"
#include "sim/schedule/kernel_menu.h"
#include "sim/trace/kernel_tiles.h"

using namespace iosim;
using schedule::KernelMenu;
using workload::Algorithm;
using workload::Pass;

namespace {

bool is_block_size(i64 v) {
  for (const i64 s : schedule::kMenuBlockSizes)
    if (s == v) return true;
  return false;
}
bool is_gemm_size(i64 v) {
  for (const i64 s : schedule::kMenuGemmSizes)
    if (s == v) return true;
  return false;
}

workload::Problem problem(i64 d, workload::DType dtype = workload::DType::fp16) {
  workload::Problem p;
  p.batch = 1;
  p.heads = 2;
  p.kv_heads = 2;
  p.seq_q = p.seq_k = 1024;
  p.head_dim = d;
  p.dtype = dtype;
  return p;
}

std::string reason(Algorithm a, Pass pass, const workload::Problem& p, i64 bm, i64 bn, trace::GemmTiles g = {}) {
  const auto k = trace::kernel_availability(p, a, pass, bm, bn, g);
  BOOST_TEST(!k.full);
  return k.reason;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(the_ci_menu_is_part_of_the_full_menu) {
  int entries = 0;
#define IOSIM_CHECK_FWD(D, BM, BN) \
  ++entries;                       \
  BOOST_TEST(schedule::fa2_in_menu(KernelMenu::full, false, D, BM, BN));
#define IOSIM_CHECK_BWD(D, BM, BN) \
  ++entries;                       \
  BOOST_TEST(schedule::fa2_in_menu(KernelMenu::full, true, D, BM, BN));
#define IOSIM_CHECK_FA1(BR, BC) \
  ++entries;                    \
  BOOST_TEST(schedule::fa1_in_menu(KernelMenu::full, false, 64, BR, BC));
#define IOSIM_CHECK_GEMM(M, N, K) \
  ++entries;                      \
  BOOST_TEST(schedule::gemm_in_menu(KernelMenu::full, M, N, K));
  IOSIM_FA2_FWD_MENU_D64_CI(IOSIM_CHECK_FWD)
  IOSIM_FA2_FWD_MENU_D128_CI(IOSIM_CHECK_FWD)
  IOSIM_FA2_BWD_MENU_D64_CI(IOSIM_CHECK_BWD)
  IOSIM_FA2_BWD_MENU_D128_CI(IOSIM_CHECK_BWD)
  IOSIM_FA1_BLOCKS_CI(IOSIM_CHECK_FA1)
  IOSIM_GEMM_TILES_CI(IOSIM_CHECK_GEMM)
#undef IOSIM_CHECK_FWD
#undef IOSIM_CHECK_BWD
#undef IOSIM_CHECK_FA1
#undef IOSIM_CHECK_GEMM
  BOOST_TEST(entries == 9);
}

// The nearest-tile search tries kMenuBlockSizes and kMenuGemmSizes only.
BOOST_AUTO_TEST_CASE(every_full_menu_entry_is_made_of_the_searched_sizes) {
  std::set<std::tuple<i64, i64, i64>> fa2;
#define IOSIM_CHECK_TILE(D, BM, BN)                                \
  BOOST_TEST((is_block_size(BM) && is_block_size(BN)), BM << "x" << BN); \
  fa2.insert({D, BM, BN});
#define IOSIM_CHECK_PAIR(BR, BC) BOOST_TEST((is_block_size(BR) && is_block_size(BC)), BR << "x" << BC);
#define IOSIM_CHECK_GEMM(M, N, K) BOOST_TEST((is_gemm_size(M) && is_gemm_size(N) && is_gemm_size(K)));
  IOSIM_FA2_FWD_MENU_D64_FULL(IOSIM_CHECK_TILE)
  IOSIM_FA2_FWD_MENU_D128_FULL(IOSIM_CHECK_TILE)
  IOSIM_FA2_BWD_MENU_D64_FULL(IOSIM_CHECK_TILE)
  IOSIM_FA2_BWD_MENU_D128_FULL(IOSIM_CHECK_TILE)
  IOSIM_FA1_BLOCKS_FULL(IOSIM_CHECK_PAIR)
  IOSIM_GEMM_TILES_FULL(IOSIM_CHECK_GEMM)
#undef IOSIM_CHECK_TILE
#undef IOSIM_CHECK_PAIR
#undef IOSIM_CHECK_GEMM
  BOOST_TEST(fa2.size() > 16u);
}

BOOST_AUTO_TEST_CASE(flashattention2s_own_tiles_are_in_the_ci_menu) {
  BOOST_TEST(schedule::fa2_in_menu(KernelMenu::ci, false, 64, 128, 128));
  BOOST_TEST(schedule::fa2_in_menu(KernelMenu::ci, false, 128, 128, 64));
  BOOST_TEST(schedule::fa2_in_menu(KernelMenu::ci, true, 64, 128, 128));
  BOOST_TEST(schedule::fa2_in_menu(KernelMenu::ci, true, 128, 64, 128));
  BOOST_TEST(!schedule::fa2_in_menu(KernelMenu::ci, false, 64, 64, 64));  // full menu only
  BOOST_TEST(schedule::fa2_in_menu(KernelMenu::full, false, 64, 64, 64));
  // FA1 entries that would not fit 227 KB are not compiled.
  BOOST_TEST(!schedule::fa1_in_menu(KernelMenu::full, true, 128, 128, 128));
  BOOST_TEST(schedule::fa1_in_menu(KernelMenu::full, false, 128, 128, 128));
}

// fa3's kernel: one tile, forward, d 64 and 128, compiled in every menu
// (kernels/CMakeLists.txt builds kernels/fa3 whatever the menu).
BOOST_AUTO_TEST_CASE(fa3s_one_tile_is_compiled_in_every_menu) {
  for (const i64 d : {64, 128}) {
    const auto ok = trace::kernel_availability(problem(d), Algorithm::fa3, Pass::fwd, 128, 128, {});
    BOOST_TEST((ok.full && ok.ci), d);
  }
  BOOST_TEST(contains(reason(Algorithm::fa3, Pass::fwd, problem(64), 64, 128), "not in fa3's forward menu at d=64"));
  BOOST_TEST(contains(reason(Algorithm::fa3, Pass::fwd, problem(96), 128, 128), "head dims 64 and 128, not 96"));
  std::string why;
  const auto near = trace::nearest_kernel_tiling(problem(128), Algorithm::fa3, Pass::fwd, 64, 163, {}, 232448, why);
  BOOST_TEST_REQUIRE(near.has_value(), why);
  BOOST_TEST(near->block_m == 128);
  BOOST_TEST(near->block_n == 128);
}

BOOST_AUTO_TEST_CASE(a_tiling_without_a_kernel_says_why) {
  BOOST_TEST(contains(reason(Algorithm::fa2, Pass::fwd, problem(64), 64, 163), "multiples of 16"));
  BOOST_TEST(contains(reason(Algorithm::fa2, Pass::fwd, problem(64), 3, 16), "not 3 x 16"));
  BOOST_TEST(contains(reason(Algorithm::fa2, Pass::fwd, problem(7), 7, 2981), "head dims 64 and 128, not 7"));
  BOOST_TEST(contains(reason(Algorithm::fa1, Pass::fwd, problem(96), 64, 64), "head dims 64 and 128, not 96"));
  BOOST_TEST(contains(reason(Algorithm::fa2, Pass::bwd, problem(64), 256, 256), "not in fa2's backward menu at d=64"));
  BOOST_TEST(contains(reason(Algorithm::fa2, Pass::fwd, problem(64, workload::DType::fp32), 64, 64), "not fp32"));
  BOOST_TEST(contains(reason(Algorithm::fa1_swapped, Pass::fwd, problem(64), 64, 64), "teaching variant"));
  BOOST_TEST(contains(reason(Algorithm::standard_eager, Pass::fwd, problem(12), 128, 128), "multiple of 8"));
  BOOST_TEST(contains(reason(Algorithm::standard, Pass::fwd, problem(12), 128, 128), "multiple of 8"));
  BOOST_TEST(contains(reason(Algorithm::standard, Pass::fwd, problem(64), 128, 128, {96, 96, 32}), "96x96x32"));
  const auto ok = trace::kernel_availability(problem(64), Algorithm::fa2, Pass::fwdbwd, 128, 128, {});
  BOOST_TEST((ok.full && ok.ci));
  const auto full_only = trace::kernel_availability(problem(64), Algorithm::fa2, Pass::fwd, 64, 64, {});
  BOOST_TEST((full_only.full && !full_only.ci));
  // standard-eager runs on standard's GEMM tiles (its elementwise kernels have none).
  const auto eager = trace::kernel_availability(problem(64), Algorithm::standard_eager, Pass::fwdbwd, 128, 128, {});
  BOOST_TEST((eager.full && eager.ci));
}

// For every shipped profile and pass, the nearest tile to the paper's rule is
// compiled for every kernel of the pass and fits the profile's shared memory.
BOOST_AUTO_TEST_CASE(the_nearest_kernel_tile_is_compiled_and_fits) {
  const std::string dir = profile::default_profile_dir();
  for (const auto& name : profile::profile_names_in(dir)) {
    const i64 limit = profile::find_profile(name, dir).smem_per_block_bytes;
    for (const Algorithm a : {Algorithm::fa1, Algorithm::fa2, Algorithm::standard})
      for (const Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd})
        for (const i64 d : {64, 128}) {
          const auto p = problem(d);
          const auto rule = trace::default_tiling(p, a, pass, {}, limit);
          std::string why;
          const auto tile = trace::nearest_kernel_tiling(p, a, pass, rule.block_m, rule.block_n, {}, limit, why);
          BOOST_TEST_CONTEXT(name << " " << workload::to_string(a) << " " << workload::to_string(pass) << " d=" << d) {
            if (!tile) {
              BOOST_TEST(contains(why, "fits"), why);  // only when no compiled tile fits (FA1 d128 on the T4)
              continue;
            }
            BOOST_TEST(trace::kernel_availability(p, a, pass, tile->block_m, tile->block_n, tile->gemm).full);
            BOOST_TEST(trace::sram_footprint(p, a, pass, tile->block_m, tile->block_n, tile->gemm, limit) <= limit);
          }
        }
  }
  // The rule's 64 x 163 on the A100 (d=64): 64 x 128 is nearer than 64 x 256.
  std::string why;
  const auto a100 = trace::nearest_kernel_tiling(problem(64), Algorithm::fa2, Pass::fwdbwd, 64, 163, {}, 166912, why);
  BOOST_REQUIRE(a100.has_value());
  BOOST_TEST(a100->block_m == 64);
  BOOST_TEST(a100->block_n == 128);
  BOOST_TEST(!trace::nearest_kernel_tiling(problem(64), Algorithm::fa2, Pass::fwd, 64, 64, {}, 1024, why).has_value());
  BOOST_TEST(contains(why, "fits 1024 bytes"), why);
  BOOST_TEST(!trace::nearest_kernel_tiling(problem(7), Algorithm::fa2, Pass::fwd, 7, 7, {}, 166912, why).has_value());
  BOOST_TEST(contains(why, "not 7"), why);
}
