// fa2_forward / fa2_backward: validate the config, build the schedules the
// simulator traces, and dispatch to the compiled (head_dim, Br, Bc, dtype)
// instantiation (kernels/common/dispatch.h); anything else throws NotCompiled
// listing the menu.
#include <stdexcept>
#include <string>

#include "kernels/common/attention_api.h"
#include "kernels/common/device_info.h"
#include "kernels/common/dispatch.h"
#include "kernels/fa2/fa2_launch.h"
#include "sim/schedule/kernel_menu.h"
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

// The compiled (head_dim, B_r, B_c) tiles (fa2_menu.h) as dispatch lists.
#define IOSIM_FA2_TILE_TYPE(D, BM, BN) ::with<dispatch::AttentionTile<D, BM, BN>>
using ForwardTiles = dispatch::List<> IOSIM_FA2_FWD_MENU(IOSIM_FA2_TILE_TYPE);
using BackwardTiles = dispatch::List<> IOSIM_FA2_BWD_MENU(IOSIM_FA2_TILE_TYPE);
#undef IOSIM_FA2_TILE_TYPE

}  // namespace

std::vector<std::string> fa2_compiled_menu() {
  std::vector<std::string> menu;
  for (const auto dtype : {workload::DType::fp16, workload::DType::bf16}) {
    const auto add = [&](const char* pass, auto tile) {
      using T = decltype(tile);
      menu.push_back(std::string(pass) + " " + menu_entry(T::d, T::bm, T::bn, dtype));
    };
    dispatch::for_each(ForwardTiles{}, [&](auto tile) { add("fwd", tile); });
    dispatch::for_each(BackwardTiles{}, [&](auto tile) { add("bwd", tile); });
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
  if (!dispatch::contains(dispatch::tile_key(c), ForwardTiles{})) not_compiled(c, "forward");
  require_dtype_supported(launch_limits(), c.problem.dtype, "fa2 forward");
  const workload::Problem& pr = c.problem;
  fa2::ForwardParams p;
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
  p.step_log = c.step_log;
  for (const schedule::KernelPlan& k : c.plan(workload::Algorithm::fa2, workload::Pass::fwd).kernels) {
    if (k.kind != schedule::KernelKind::fa2_fwd) throw std::logic_error("fa2 forward: unexpected kernel " + k.name);
    p.sched = k.as<schedule::Fa2ForwardSchedule>();
    const bool launched = dispatch::find_tile(c, ForwardTiles{}, [&](auto tile, auto elem) {
      using T = decltype(tile);
      fa2::launch_forward<decltype(elem), T::d, T::bm, T::bn>(p, stream);
    });
    if (!launched) throw std::logic_error("fa2 forward: dispatch found no compiled tile");
  }
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
  if (!dispatch::contains(dispatch::tile_key(c), BackwardTiles{})) not_compiled(c, "backward");
  require_dtype_supported(launch_limits(), c.problem.dtype, "fa2 backward");
  const workload::Problem& pr = c.problem;
  fa2::BackwardParams p;
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
  p.step_log = c.step_log;

  fa2::RowParams rows;
  rows.head_dim = pr.head_dim;
  rows.o = b.o;
  rows.d_o = b.d_o;
  rows.dvec = b.d;
  rows.dq_accum = b.dq_accum;
  rows.dq = b.dq;
  rows.q_str = p.q_str;
  rows.scale = p.scale;

  // The plan's kernels in its order: preprocess, main, dQ conversion.
  for (const schedule::KernelPlan& k : c.plan(workload::Algorithm::fa2, workload::Pass::bwd).kernels) {
    switch (k.kind) {
      case schedule::KernelKind::fa2_bwd_preprocess:
      case schedule::KernelKind::fa2_bwd_convert_dq:
        rows.rows = k.as<schedule::RowBlockSchedule>();
        dispatch::element_type(c.problem.dtype,
                               [&](auto elem) { fa2::launch_row_kernel<decltype(elem)>(k.kind, rows, stream); });
        break;
      case schedule::KernelKind::fa2_bwd_main: {
        p.sched = k.as<schedule::Fa2BackwardSchedule>();
        const bool launched = dispatch::find_tile(c, BackwardTiles{}, [&](auto tile, auto elem) {
          using T = decltype(tile);
          fa2::launch_backward<decltype(elem), T::d, T::bm, T::bn>(p, stream);
        });
        if (!launched) throw std::logic_error("fa2 backward: dispatch found no compiled tile");
        break;
      }
      default: throw std::logic_error("fa2 backward: unexpected kernel " + k.name);
    }
  }
}

}  // namespace iosim::kernels
