// Internal to kernels/fa1: FlashAttention (v1), Algorithm 1 forward and
// Algorithm 4 backward of Dao et al. 2022, with the paper's loop order (outer
// loop over key blocks, inner over query blocks; O_i, l_i, m_i or dQ_i read and
// written in global memory in every inner step). fa1_forward, fa1_backward and
// fa1_compiled_menu are declared in kernels/common/attention_api.h.
//
// Statistics: m = row max of the scaled, masked logits, l = sum of
// exp(logit - m); a row that sees no key keeps l = 0, m = -inf and O = 0.
// The backward pass reads l and m (not L = m + log l) and uses dq_accum
// (fp32, [batch][heads][seq_q][head_dim]) as its dQ accumulator.
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/dispatch.h"
#include "kernels/standard/launch_util.h"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels::detail {

// The (B_r, B_c) pairs and head dims compiled (IOSIM_FA1_BLOCKS,
// IOSIM_FA1_HEAD_DIMS) and which of them fit (fa1_fits) are the simulator's
// menu, sim/schedule/kernel_menu.h.
using schedule::fa1_fits;

// The compiled tiles, as dispatch lists (kernels/common/dispatch.h): every
// (B_r, B_c) of IOSIM_FA1_BLOCKS at every head dim of IOSIM_FA1_HEAD_DIMS,
// head dim outer, less the tiles whose shared memory does not fit the pass.
#define IOSIM_FA1_TILE_OF_D(BR, BC) ::template with<dispatch::AttentionTile<D, BR, BC>>
template <int D>
using Fa1TilesOfDim = typename dispatch::List<> IOSIM_FA1_BLOCKS(IOSIM_FA1_TILE_OF_D);
#undef IOSIM_FA1_TILE_OF_D
#define IOSIM_FA1_DIM_TILES(D) , Fa1TilesOfDim<D>
using Fa1Tiles = dispatch::join<dispatch::List<> IOSIM_FA1_HEAD_DIMS(IOSIM_FA1_DIM_TILES)>;
#undef IOSIM_FA1_DIM_TILES
template <class T>
struct Fa1ForwardFits : std::bool_constant<fa1_fits(false, T::d, T::bm, T::bn)> {};
template <class T>
struct Fa1BackwardFits : std::bool_constant<fa1_fits(true, T::d, T::bm, T::bn)> {};
using Fa1ForwardTiles = dispatch::keep_if<Fa1ForwardFits, Fa1Tiles>;
using Fa1BackwardTiles = dispatch::keep_if<Fa1BackwardFits, Fa1Tiles>;

// "fwd d=64 Br=64 Bc=64 fp16", "bwd ...": one entry per compiled kernel.
inline std::vector<std::string> fa1_menu() {
  std::vector<std::string> out;
  const auto add = [&](const char* pass, auto tile) {
    using T = decltype(tile);
    for (const auto dt : {workload::DType::fp16, workload::DType::bf16})
      out.push_back(std::string(pass) + " " + menu_entry(T::d, T::bm, T::bn, dt));
  };
  dispatch::for_each(Fa1ForwardTiles{}, [&](auto tile) { add("fwd", tile); });
  dispatch::for_each(Fa1BackwardTiles{}, [&](auto tile) { add("bwd", tile); });
  return out;
}

[[noreturn]] inline void throw_fa1_not_compiled(const AttentionConfig& c, const std::string& algo) {
  throw NotCompiled(algo + ": " + menu_entry(c.problem.head_dim, c.block_m, c.block_n, c.problem.dtype) +
                    " is not compiled; compiled: " + join(fa1_menu()));
}

}  // namespace iosim::kernels::detail
