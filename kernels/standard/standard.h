// Standard attention (the kernels eager PyTorch runs): tiled tensor-core GEMMs
// and row-softmax kernels, launched from schedule::GemmSchedule and
// schedule::RowSoftmaxSchedule. standard_forward/standard_backward themselves
// are declared in kernels/common/attention_api.h, and so is the menu,
// standard_compiled_menu(): "tile 128x128x32 fp16", ... (the GEMM tiles; any
// head dim runs on them).
//
// Conventions: S = Q K^T is stored unscaled; P = softmax(scale * S) with the
// causal and block masks applied element by element (the block mask is read on
// the AttentionConfig's block_m x block_n grid; the trace uses the GEMM tile
// for it, so set block_m/block_n = gemm_tiles.tile_m/tile_n); masked entries
// and fully masked rows give P = 0. Backward: dS = scale * P o (dP - rowsum(dP o P))
// is the gradient of S, so dQ = dS K and dK = dS^T Q need no further scale.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/common/attention_api.h"

namespace iosim::kernels {

// As standard_forward/standard_backward, but with the row-softmax kernels'
// on-chip budget given explicitly (RowSoftmaxSchedule::sram_limit_bytes). The
// plain launchers use the device's opt-in shared memory per block, the value
// a hardware profile's per-block limit describes. Tests use a small limit to
// exercise the two-pass (row does not fit on chip) path.
void standard_forward_with_limit(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream,
                                 i64 softmax_sram_limit_bytes);
void standard_backward_with_limit(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream,
                                  i64 softmax_sram_limit_bytes);

}  // namespace iosim::kernels
