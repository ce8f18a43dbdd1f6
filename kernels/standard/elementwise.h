// Internal to kernels/standard: standard-eager's elementwise kernels (scale,
// mask, dropout and their gradients; schedule::ElementwiseOp), launched from a
// schedule::ElementwisePlan: grid (row groups, heads, batch) of
// RowElementwiseSchedule, each CTA reading its rows of the plan's inputs and
// writing its rows of the outputs, once, as the trace counts.
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "sim/common/philox.h"
#include "sim/schedule/plan.h"
#include "sim/workload/problem.h"

namespace iosim::kernels::detail {

struct ElementwiseLaunch {
  schedule::ElementwisePlan e;
  std::array<const void*, 2> in{};  // the plan's e.in, in order
  std::array<void*, 2> out{};       // the plan's e.out, in order
  float scale = 1;                  // ElementwiseOp::scale
  DropoutRule dropout;              // dropout, dropout_bwd
  workload::DType dtype = workload::DType::fp16;
};

void launch_elementwise(const ElementwiseLaunch& l, cudaStream_t stream);

// mask[r * seq_k + c] = 1 where query row r sees key c under `tiles` (the
// causal rule and the block mask), else 0: standard-eager's mask buffer, one
// for all heads (GPT-2's registered `bias`), built once before the passes.
void fill_visibility_mask(const schedule::AttentionTiles& tiles, std::uint8_t* mask, cudaStream_t stream);

}  // namespace iosim::kernels::detail
