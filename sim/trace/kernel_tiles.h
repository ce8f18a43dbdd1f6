// Whether a tiling the simulator runs has a compiled CUDA kernel (the menus of
// sim/schedule/kernel_menu.h), and the nearest tiling that has one.
//
// The simulator accepts any positive block sizes, head dim and data type; the
// kernels exist for fewer: fp16 and bf16; FA1 and FA2 at head dims 64 and 128
// with the menu's tiles (multiples of 16, from 16 to 256); splitkv at head dims
// 64 and 128 with B_r 16 or 32 and B_c 64 or 128 (full menu); fa3 (forward) at
// head dims 64 and 128 with its one 128 x 128 tile (every menu); standard attention
// at head dims that are multiples of 8 with the menu's GEMM tiles (its block
// size only sets a mask's granularity); fa1-swapped has no kernel.
#pragma once
#include <optional>
#include <string>

#include "sim/schedule/kernel_menu.h"
#include "sim/trace/algorithms.h"

namespace iosim::trace {

struct KernelAvailability {
  bool full = false;   // every kernel of the pass is compiled in the full menu
  bool ci = false;     // ... and in the CI menu
  std::string reason;  // why not, when !full
};

KernelAvailability kernel_availability(const workload::Problem& p, Algorithm a, workload::Pass pass, i64 block_m,
                                       i64 block_n, const GemmTiles& gemm);
KernelAvailability kernel_availability(const AlgorithmTrace& run);

// A tiling with a kernel in the full menu.
struct KernelTiling {
  i64 block_m = 0, block_n = 0;  // standard attention: the GEMM tile's m x n (its mask blocks)
  GemmTiles gemm;
  bool in_ci_menu = false;
};

// The compiled tiling nearest to (block_m, block_n) (standard attention: to
// `gemm`), by the sum of |log2| of the size ratios, among those whose
// footprint fits `sram_limit_bytes`; ties go to the CI menu, then to larger
// tiles. nullopt when no size can help (head dim, data type, algorithm):
// `why` says why.
std::optional<KernelTiling> nearest_kernel_tiling(const workload::Problem& p, Algorithm a, workload::Pass pass,
                                                  i64 block_m, i64 block_n, const GemmTiles& gemm,
                                                  i64 sram_limit_bytes, std::string& why);

}  // namespace iosim::trace
