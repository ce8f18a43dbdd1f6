// fa3_forward: validates the config against what the FlashAttention-3 kernel
// covers (Hopper, fp16/bf16, d 64 or 128, its own 128 x 128 tile, no block
// mask), builds the schedule and the TMA descriptors, and dispatches to the
// compiled (dtype, d) instantiation.
#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <stdexcept>
#include <string>

#include "kernels/common/attention_api.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/common/dispatch.h"
#include "kernels/common/tma_encode.h"
#include "kernels/fa3/fa3_launch.h"
#include "sim/common/error.h"

namespace iosim::kernels {

namespace {

constexpr float kLog2e = 1.4426950408889634f;
using Sched = schedule::Fa3ForwardSchedule;

void require(bool ok, const std::string& what) {
  if (!ok) throw InputError("fa3: " + what);
}

// A 4-D map {d, seq, heads, batch} over one of Q, K, V (any layout: the
// strides say which), read in boxes of 64 columns (one 128-byte swizzle
// row) x `box_rows` rows of one head. Rows past `seq` read as zeros.
CUtensorMap tensor_map(PFN_cuTensorMapEncodeTiled_v12000 encode, const void* base, workload::DType t, i64 d, i64 seq,
                       i64 heads, i64 batch, const Strides& st, i64 box_rows, const char* what) {
  CUtensorMap map{};
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(seq),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(st.row * 2), static_cast<cuuint64_t>(st.head * 2),
                                 static_cast<cuuint64_t>(st.batch * 2)};
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = encode(&map, t == workload::DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                            4, const_cast<void*>(base), dims, strides, box, elem_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string("fa3: cuTensorMapEncodeTiled failed for ") + what + " (CUresult " +
                             std::to_string(static_cast<int>(r)) + ")");
  return map;
}

void validate(const AttentionConfig& c, const ForwardBuffers& b) {
  validate_config(c, "fa3");
  const workload::Problem& pr = c.problem;
  require(pr.head_dim == 64 || pr.head_dim == 128,
          "head_dim " + std::to_string(pr.head_dim) + " is not compiled (valid: 64, 128)");
  require(c.block_m == Sched::kBlockM && c.block_n == Sched::kBlockN,
          "the kernel's tile is Br=" + std::to_string(Sched::kBlockM) + " Bc=" + std::to_string(Sched::kBlockN) +
              " (got Br=" + std::to_string(c.block_m) + " Bc=" + std::to_string(c.block_n) + ")");
  require(c.d_block_mask == nullptr && pr.sparsity.is_dense(),
          "block-sparse masks are not supported (dense or causal)");
  require(pr.seq_q < (i64{1} << 31) && pr.seq_k < (i64{1} << 31), "sequence lengths must be < 2^31 (TMA coordinates)");
  for (const auto& [ptr, name] : {std::pair<const void*, const char*>{b.q, "q"}, {b.k, "k"}, {b.v, "v"},
                                  {b.o, "o"}, {b.lse, "lse"}}) {
    require(ptr != nullptr, std::string("buffer '") + name + "' is null");
    require(reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0,
            std::string("buffer '") + name + "' is not 16-byte aligned (TMA)");
  }
  const LaunchLimits dev = launch_limits();
  if (dev.compute_capability != 90)
    throw NotCompiled("fa3: the kernel is compiled for sm_90a (Hopper) only; this device is sm_" +
                      std::to_string(dev.compute_capability));
}

}  // namespace

std::vector<std::string> fa3_compiled_menu() {
  std::vector<std::string> menu;
  for (const auto dtype : {workload::DType::fp16, workload::DType::bf16})
    for (const i64 d : {64, 128}) menu.push_back("fwd " + menu_entry(d, Sched::kBlockM, Sched::kBlockN, dtype));
  return menu;
}

namespace fa3 {

void forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream, const ForwardVariant& v) {
  validate(c, b);
  const workload::Problem& pr = c.problem;
  ForwardParams p;
  p.sched.tiles = schedule::AttentionTiles{pr.seq_q, pr.seq_k, Sched::kBlockM, Sched::kBlockN, pr.causal, {}};
  p.sched.shape = c.shape();
  p.sched.head_dim = pr.head_dim;
  p.sched.bytes.data = 2;
  const Strides q_str = strides_for(pr, pr.heads, pr.seq_q);
  const Strides kv_str = strides_for(pr, pr.kv_heads, pr.seq_k);
  const auto encode = encode_tiled();
  p.tma_q = tensor_map(encode, b.q, pr.dtype, pr.head_dim, pr.seq_q, pr.heads, pr.batch, q_str, Sched::kBlockM, "Q");
  p.tma_k = tensor_map(encode, b.k, pr.dtype, pr.head_dim, pr.seq_k, pr.kv_heads, pr.batch, kv_str, Sched::kBlockN,
                       "K");
  p.tma_v = tensor_map(encode, b.v, pr.dtype, pr.head_dim, pr.seq_k, pr.kv_heads, pr.batch, kv_str, Sched::kBlockN,
                       "V");
  p.o = b.o;
  p.lse = b.lse;
  p.o_str = q_str;
  p.scale = c.scale();
  p.scale_log2 = p.scale * kLog2e;
  p.pingpong = v.pingpong;
  p.v_after_next_k = v.v_after_next_k;
  dispatch::element_type(pr.dtype, [&](auto elem) {
    using Elem = decltype(elem);
    if (pr.head_dim == 64) launch_forward<Elem, 64>(p, stream);
    else launch_forward<Elem, 128>(p, stream);
  });
}

}  // namespace fa3

void fa3_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream) {
  fa3::forward(c, b, stream, fa3::ForwardVariant{});
}

}  // namespace iosim::kernels
