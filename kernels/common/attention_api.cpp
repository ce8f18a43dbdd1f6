#include "kernels/common/attention_api.h"

#include <cmath>

#include "sim/common/error.h"

namespace iosim::kernels {

Strides strides_for(const workload::Problem& p, i64 heads, i64 seq) {
  const i64 d = p.head_dim;
  if (p.layout == workload::Layout::bshd) return {seq * heads * d, d, heads * d};
  return {heads * seq * d, seq * d, d};
}

schedule::AttentionTiles AttentionConfig::tiles() const {
  schedule::AttentionTiles t{problem.seq_q, problem.seq_k, block_m, block_n, problem.causal, {}};
  if (d_block_mask != nullptr) t.mask = {d_block_mask, t.m_blocks(), t.n_blocks()};
  return t;
}

schedule::Plan AttentionConfig::plan(workload::Algorithm algorithm, workload::Pass pass, i64 sram_limit_bytes) const {
  const schedule::PlanTiling tiling{block_m, block_n,
                                    {gemm_tiles.tile_m, gemm_tiles.tile_n, gemm_tiles.tile_k, gemm_impl},
                                    sram_limit_bytes, splits};
  return schedule::make_plan(problem, algorithm, pass, tiling, tiles().mask);
}

schedule::HeadShape AttentionConfig::shape() const { return {problem.batch, problem.heads, problem.kv_heads}; }

float AttentionConfig::scale() const {
  return softmax_scale != 0.0f ? softmax_scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(problem.head_dim)));
}

void validate_config(const AttentionConfig& c, const std::string& algorithm) {
  c.problem.validate();
  if (c.problem.dtype == workload::DType::fp32) {
    throw InputError(algorithm + ": the CUDA kernels take fp16 or bf16 inputs, not fp32 (use --dtype fp16|bf16)");
  }
  if (c.problem.head_dim % 8 != 0) {
    throw InputError(algorithm + ": head_dim " + std::to_string(c.problem.head_dim) +
                     " is not a multiple of 8 (rows are moved in 16-byte chunks)");
  }
  if (c.block_m < 1 || c.block_n < 1) {
    throw InputError(algorithm + ": block sizes must be >= 1 (got block_m " + std::to_string(c.block_m) +
                     ", block_n " + std::to_string(c.block_n) + ")");
  }
}

std::string menu_entry(i64 head_dim, i64 block_m, i64 block_n, workload::DType dtype) {
  return "d=" + std::to_string(head_dim) + " Br=" + std::to_string(block_m) + " Bc=" + std::to_string(block_n) +
         " " + std::string(workload::to_string(dtype));
}

std::vector<std::string> compiled_menu(const std::string& algorithm) {
  if (algorithm == "fa2") return fa2_compiled_menu();
  if (algorithm == "fa1") return fa1_compiled_menu();
  if (algorithm == "standard" || algorithm == "standard-eager") return standard_compiled_menu();
  if (algorithm == "splitkv") return splitkv_compiled_menu();
  if (algorithm == "fa3") return fa3_compiled_menu();
  throw InputError("compiled_menu: unknown algorithm '" + algorithm +
                   "' (valid: standard, standard-eager, fa1, fa2, splitkv, fa3)");
}

}  // namespace iosim::kernels
