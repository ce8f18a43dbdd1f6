// fa2_forward / fa2_backward: validate the config, build the schedules the
// simulator traces, and dispatch to the compiled (head_dim, Br, Bc, dtype)
// instantiation; anything else throws NotCompiled listing the menu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "kernels/common/attention_api.h"
#include "kernels/common/device_info.h"
#include "kernels/fa2/fa2_launch.h"
#include "kernels/fa2/fa2_menu.h"
#include "sim/common/error.h"

namespace iosim::kernels {

namespace {

constexpr float kLog2e = 1.4426950408889634f;

void require(const void* ptr, const char* what) {
  if (ptr == nullptr) throw InputError(std::string("fa2: buffer '") + what + "' is null");
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& it : items) s += (s.empty() ? "" : ", ") + it;
  return s;
}

[[noreturn]] void not_compiled(const AttentionConfig& c, const char* pass) {
  throw NotCompiled(std::string("fa2 ") + pass + ": no compiled kernel for " +
                    menu_entry(c.problem.head_dim, c.block_m, c.block_n, c.problem.dtype) +
                    " (build with -DIOSIM_KERNEL_MENU=full for the block-size menu); compiled: " +
                    joined(fa2_compiled_menu()));
}

}  // namespace

std::vector<std::string> fa2_compiled_menu() {
  std::vector<std::string> menu;
  for (const auto dtype : {workload::DType::fp16, workload::DType::bf16}) {
#define IOSIM_FA2_LIST(D, BM, BN) menu.push_back(std::string(pass) + " " + menu_entry(D, BM, BN, dtype));
    const char* pass = "fwd";
    IOSIM_FA2_FWD_MENU(IOSIM_FA2_LIST)
    pass = "bwd";
    IOSIM_FA2_BWD_MENU(IOSIM_FA2_LIST)
#undef IOSIM_FA2_LIST
  }
  return menu;
}

void fa2_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream) {
  validate_config(c, "fa2");
  require(b.q, "q");
  require(b.k, "k");
  require(b.v, "v");
  require(b.o, "o");
  require(b.lse, "lse");
#define IOSIM_FA2_IS(D, BM, BN) || (c.problem.head_dim == D && c.block_m == BM && c.block_n == BN)
  if (!(false IOSIM_FA2_FWD_MENU(IOSIM_FA2_IS))) not_compiled(c, "forward");
  require_dtype_supported(launch_limits(), c.problem.dtype, "fa2 forward");
  const workload::Problem& pr = c.problem;
  fa2::ForwardParams p;
  p.sched = {c.tiles(), c.shape(), pr.head_dim, {pr.elem_bytes()}};
  p.q = b.q;
  p.k = b.k;
  p.v = b.v;
  p.o = b.o;
  p.lse = b.lse;
  p.q_str = strides_for(pr, pr.heads, pr.seq_q);
  p.kv_str = strides_for(pr, pr.kv_heads, pr.seq_k);
  p.o_str = p.q_str;
  p.scale = c.scale();
  p.scale_log2 = p.scale * kLog2e;

  const bool fp16 = pr.dtype == workload::DType::fp16;
#define IOSIM_FA2_TRY(D, BM, BN)                                        \
  if (pr.head_dim == D && c.block_m == BM && c.block_n == BN) {         \
    if (fp16) fa2::launch_forward<__half, D, BM, BN>(p, stream);        \
    else fa2::launch_forward<__nv_bfloat16, D, BM, BN>(p, stream);      \
    return;                                                             \
  }
  IOSIM_FA2_FWD_MENU(IOSIM_FA2_TRY)
#undef IOSIM_FA2_TRY
  not_compiled(c, "forward");
}

void fa2_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream) {
  validate_config(c, "fa2");
  require(b.q, "q");
  require(b.k, "k");
  require(b.v, "v");
  require(b.o, "o");
  require(b.d_o, "d_o");
  require(b.lse, "lse");
  require(b.dq, "dq");
  require(b.dk, "dk");
  require(b.dv, "dv");
  require(b.dq_accum, "dq_accum");
  require(b.d, "d");
  if (!(false IOSIM_FA2_BWD_MENU(IOSIM_FA2_IS))) not_compiled(c, "backward");
#undef IOSIM_FA2_IS
  require_dtype_supported(launch_limits(), c.problem.dtype, "fa2 backward");
  const workload::Problem& pr = c.problem;
  fa2::BackwardParams p;
  p.sched = {c.tiles(), c.shape(), pr.head_dim, {pr.elem_bytes()}};
  p.q = b.q;
  p.k = b.k;
  p.v = b.v;
  p.d_o = b.d_o;
  p.lse = b.lse;
  p.dvec = b.d;
  p.dk = b.dk;
  p.dv = b.dv;
  p.dq_accum = b.dq_accum;
  p.q_str = strides_for(pr, pr.heads, pr.seq_q);
  p.kv_str = strides_for(pr, pr.kv_heads, pr.seq_k);
  p.scale = c.scale();
  p.scale_log2 = p.scale * kLog2e;

  fa2::RowParams rows;
  // The row kernels use the backward tiling's B_r, as the trace does.
  rows.rows = {pr.seq_q, c.block_m, c.shape()};
  rows.head_dim = pr.head_dim;
  rows.o = b.o;
  rows.d_o = b.d_o;
  rows.dvec = b.d;
  rows.dq_accum = b.dq_accum;
  rows.dq = b.dq;
  rows.q_str = p.q_str;
  rows.scale = p.scale;

  const bool fp16 = pr.dtype == workload::DType::fp16;
#define IOSIM_FA2_TRY(D, BM, BN)                                             \
  if (pr.head_dim == D && c.block_m == BM && c.block_n == BN) {              \
    if (fp16) fa2::launch_backward<__half, D, BM, BN>(p, rows, stream);      \
    else fa2::launch_backward<__nv_bfloat16, D, BM, BN>(p, rows, stream);    \
    return;                                                                  \
  }
  IOSIM_FA2_BWD_MENU(IOSIM_FA2_TRY)
#undef IOSIM_FA2_TRY
  not_compiled(c, "backward");
}

}  // namespace iosim::kernels
