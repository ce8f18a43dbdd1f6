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
#include <utility>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/standard/launch_util.h"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels::detail {

// The (B_r, B_c) pairs and head dims compiled (IOSIM_FA1_BLOCKS,
// IOSIM_FA1_HEAD_DIMS) and which of them fit (fa1_fits) are the simulator's
// menu, sim/schedule/kernel_menu.h.
using schedule::fa1_fits;

// "fwd d=64 Br=64 Bc=64 fp16", "bwd ...": one entry per compiled kernel.
inline std::vector<std::string> fa1_menu() {
  std::vector<std::string> out;
  const std::vector<std::pair<int, int>> blocks = {
#define IOSIM_FA1_PAIR(BR, BC) {BR, BC},
      IOSIM_FA1_BLOCKS(IOSIM_FA1_PAIR)
#undef IOSIM_FA1_PAIR
  };
  const std::vector<int> dims = {
#define IOSIM_FA1_DIM(D) D,
      IOSIM_FA1_HEAD_DIMS(IOSIM_FA1_DIM)
#undef IOSIM_FA1_DIM
  };
  for (const bool backward : {false, true})
    for (const int d : dims)
      for (const auto& [br, bc] : blocks)
        if (fa1_fits(backward, d, br, bc))
          for (const auto dt : {workload::DType::fp16, workload::DType::bf16})
            out.push_back(std::string(backward ? "bwd " : "fwd ") + menu_entry(d, br, bc, dt));
  return out;
}

[[noreturn]] inline void throw_fa1_not_compiled(const AttentionConfig& c, const std::string& algo) {
  throw NotCompiled(algo + ": " + menu_entry(c.problem.head_dim, c.block_m, c.block_n, c.problem.dtype) +
                    " is not compiled; compiled: " + join(fa1_menu()));
}

}  // namespace iosim::kernels::detail
