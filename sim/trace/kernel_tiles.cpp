#include "sim/trace/kernel_tiles.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace iosim::trace {

namespace {

using schedule::KernelMenu;
using workload::Pass;

bool has_fwd(Pass p) { return p != Pass::bwd; }
bool has_bwd(Pass p) { return p != Pass::fwd; }

std::string join(const std::vector<i64>& v, const char* sep) {
  std::string s;
  for (const i64 x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

std::string gemm_text(i64 m, i64 n, i64 k) { return join({m, n, k}, "x"); }

// Head dims with an FA1 or FA2 kernel, from the menu lists.
std::vector<i64> head_dims(Algorithm a) {
  std::vector<i64> dims;
  auto add = [&](i64 d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
  };
#define IOSIM_DIM_OF_TILE(D, BM, BN) add(D);
#define IOSIM_DIM(D) add(D);
  if (a == Algorithm::fa2) {
    IOSIM_FA2_FWD_MENU_D64_FULL(IOSIM_DIM_OF_TILE)
    IOSIM_FA2_FWD_MENU_D128_FULL(IOSIM_DIM_OF_TILE)
  } else if (a == Algorithm::splitkv) {
    IOSIM_SPLITKV_MENU_FULL(IOSIM_DIM_OF_TILE)
  } else if (a == Algorithm::fa3) {
    add(64);  // kernels/fa3/fa3_fwd_{fp16,bf16}_d{64,128}.cu, in every menu
    add(128);
  } else {
    IOSIM_FA1_HEAD_DIMS(IOSIM_DIM)
  }
#undef IOSIM_DIM
#undef IOSIM_DIM_OF_TILE
  return dims;
}

std::string full_gemm_menu() {
  std::string s;
#define IOSIM_GEMM_NAME(M, N, K) s += (s.empty() ? "" : ", ") + gemm_text(M, N, K);
  IOSIM_GEMM_TILES_FULL(IOSIM_GEMM_NAME)
#undef IOSIM_GEMM_NAME
  return s;
}

// Why no block size gives the problem a kernel; empty when some may.
std::string unsupported(const workload::Problem& p, Algorithm a) {
  if (a == Algorithm::fa1_swapped) return "fa1-swapped is a teaching variant with no CUDA kernel";
  if (p.dtype == workload::DType::fp32) return "the CUDA kernels take fp16 or bf16, not fp32";
  if (workload::is_standard(a))
    return p.head_dim % 8 == 0 ? std::string()
                               : "head dim " + std::to_string(p.head_dim) +
                                     " is not a multiple of 8 (the kernels move 16-byte rows)";
  const auto dims = head_dims(a);
  if (std::find(dims.begin(), dims.end(), p.head_dim) == dims.end())
    return std::string(workload::to_string(a)) + "'s kernels are compiled for head dims " + join(dims, " and ") +
           ", not " + std::to_string(p.head_dim);
  return {};
}

bool tile_in(KernelMenu menu, Algorithm a, bool backward, i64 d, i64 bm, i64 bn) {
  if (a == Algorithm::splitkv) return !backward && schedule::splitkv_in_menu(menu, d, bm, bn);
  // FA3's kernel has one tile, compiled whatever the menu (kernels/CMakeLists.txt).
  if (a == Algorithm::fa3)
    return !backward && (d == 64 || d == 128) && bm == schedule::Fa3ForwardSchedule::kBlockM &&
           bn == schedule::Fa3ForwardSchedule::kBlockN;
  return a == Algorithm::fa2 ? schedule::fa2_in_menu(menu, backward, d, bm, bn)
                             : schedule::fa1_in_menu(menu, backward, d, bm, bn);
}

bool compiled(KernelMenu menu, Algorithm a, Pass pass, i64 d, i64 bm, i64 bn, const GemmTiles& g) {
  if (workload::is_standard(a)) return schedule::gemm_in_menu(menu, g.m, g.n, g.k);
  return (!has_fwd(pass) || tile_in(menu, a, false, d, bm, bn)) && (!has_bwd(pass) || tile_in(menu, a, true, d, bm, bn));
}

double log_distance(i64 x, i64 x0) { return std::abs(std::log2(static_cast<double>(x) / static_cast<double>(x0))); }

}  // namespace

KernelAvailability kernel_availability(const workload::Problem& p, Algorithm a, Pass pass, i64 bm, i64 bn,
                                       const GemmTiles& gemm) {
  KernelAvailability r;
  r.reason = unsupported(p, a);
  if (!r.reason.empty()) return r;
  r.full = compiled(KernelMenu::full, a, pass, p.head_dim, bm, bn, gemm);
  r.ci = compiled(KernelMenu::ci, a, pass, p.head_dim, bm, bn, gemm);
  if (workload::is_standard(a) && gemm.impl == schedule::GemmImpl::wgmma) {
    // The wgmma kernel (its one tile) is in every menu; where N_k rows are not
    // 16-byte multiples the GEMMs fall back to mma.sync, whose menus decide.
    if (p.seq_k * p.elem_bytes() % 16 == 0) r.full = r.ci = true;
  }
  if (r.full) return r;
  if (workload::is_standard(a)) {
    r.reason = "GEMM tile " + gemm_text(gemm.m, gemm.n, gemm.k) + " is not compiled (full menu: " + full_gemm_menu() + ")";
  } else if (bm % 16 != 0 || bn % 16 != 0) {
    r.reason = "kernel tiles are multiples of 16 (16..256), not " + std::to_string(bm) + " x " + std::to_string(bn);
  } else {
    const bool fwd_ok = !has_fwd(pass) || tile_in(KernelMenu::full, a, false, p.head_dim, bm, bn);
    r.reason = std::to_string(bm) + " x " + std::to_string(bn) + " is not in " +
               std::string(workload::to_string(a)) + "'s " + (fwd_ok ? "backward" : "forward") + " menu at d=" +
               std::to_string(p.head_dim);
  }
  return r;
}

KernelAvailability kernel_availability(const AlgorithmTrace& run) {
  return kernel_availability(run.problem, run.algorithm, run.pass, run.tiling.block_m, run.tiling.block_n, run.gemm);
}

std::optional<KernelTiling> nearest_kernel_tiling(const workload::Problem& p, Algorithm a, Pass pass, i64 bm0,
                                                  i64 bn0, const GemmTiles& gemm, i64 sram_limit, std::string& why) {
  why = unsupported(p, a);
  if (!why.empty()) return std::nullopt;
  std::optional<KernelTiling> best;
  double best_distance = 0;
  auto consider = [&](const KernelTiling& c, double distance) {
    if (sram_footprint(p, a, pass, c.block_m, c.block_n, c.gemm, sram_limit) > sram_limit) return;
    constexpr double kTie = 1e-9;
    const bool better =
        !best || distance < best_distance - kTie ||
        (distance <= best_distance + kTie &&
         (c.in_ci_menu != best->in_ci_menu ? c.in_ci_menu : c.block_m * c.block_n > best->block_m * best->block_n));
    if (better) {
      best = c;
      best_distance = distance;
    }
  };
  if (workload::is_standard(a)) {
    for (const i64 m : schedule::kMenuGemmSizes)
      for (const i64 n : schedule::kMenuGemmSizes)
        for (const i64 k : schedule::kMenuGemmSizes)
          if (schedule::gemm_in_menu(KernelMenu::full, m, n, k))
            consider({m, n, {m, n, k}, schedule::gemm_in_menu(KernelMenu::ci, m, n, k)},
                     log_distance(m, gemm.m) + log_distance(n, gemm.n) + log_distance(k, gemm.k));
  } else {
    for (const i64 bm : schedule::kMenuBlockSizes)
      for (const i64 bn : schedule::kMenuBlockSizes)
        if (compiled(KernelMenu::full, a, pass, p.head_dim, bm, bn, gemm))
          consider({bm, bn, gemm, compiled(KernelMenu::ci, a, pass, p.head_dim, bm, bn, gemm)},
                   log_distance(bm, bm0) + log_distance(bn, bn0));
  }
  if (!best)
    why = "no compiled " + std::string(workload::to_string(a)) + " tile fits " + std::to_string(sram_limit) +
          " bytes of shared memory per block";
  return best;
}

}  // namespace iosim::trace
