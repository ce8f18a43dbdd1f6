// Internal to kernels/standard: the batched tensor-core GEMM that standard
// attention's products run on, launched from a schedule::GemmSchedule
// (grid (n tiles / tiles_per_cta, m tiles, batch slices); each CTA's output
// tiles in turn, k walked in tile_k chunks over the k_groups operands: exactly
// the tiles the trace (sim/trace/algorithms.cpp, gemm_cta) counts).
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/common/gemm_impl.h"
#include "sim/schedule/kernel_schedules.h"
#include "sim/workload/problem.h"

namespace iosim::kernels::detail {

// One operand of C[m x n] = sum_g A_g[m x k] B_g[k x n], in global memory.
// Its (outer, k) element (outer = m for A, n for B) lives at
//   base + (k_contiguous ? outer * outer_stride + k : k * outer_stride + outer),
// base = ptr + b * batch_stride + head * head_stride, where batch slice z of
// the grid is (b, hz) = (z / z_heads, z % z_heads) and, for group member g,
// head = (hz * head_mul + g) / head_div (GQA: K/V heads are query heads / group;
// dK/dV sum over the group's query heads hz * group + g).
struct GemmOperand {
  const void* ptr = nullptr;
  i64 batch_stride = 0, head_stride = 0, outer_stride = 0;
  i64 head_mul = 1, head_div = 1;
  bool k_contiguous = true;
};

// C (row-major, contiguous columns) of batch slice z at ptr + b * batch_stride + hz * head_stride.
struct GemmOutput {
  void* ptr = nullptr;
  i64 batch_stride = 0, head_stride = 0, row_stride = 0;
};

struct GemmLaunch {
  schedule::GemmSchedule s;
  i64 z_heads = 1;
  GemmOperand a, b;
  GemmOutput c;
  workload::DType dtype = workload::DType::fp16;
  // wgmma: the sm_90a kernel (standard_gemm_wgmma.h) when its tile is this
  // one and TMA can read the operands; else mma.sync.
  GemmImpl impl = GemmImpl::mma;
};

// Throws NotCompiled when (tile_m, tile_n, tile_k) is not in the menu.
void launch_gemm(const GemmLaunch& g, cudaStream_t stream);
bool gemm_tiles_compiled(i64 tile_m, i64 tile_n, i64 tile_k);
std::vector<std::string> gemm_tile_menu();  // "128x128x32", ...

}  // namespace iosim::kernels::detail
