// splitkv_forward: validate the config, build the plan's two schedules (the
// ones the simulator traces) and launch them in order: the split kernel
// dispatched to the compiled (head_dim, Br, Bc, dtype) instantiation, then the
// combine. Anything outside the menu throws NotCompiled listing it.
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/common/attention_api.h"
#include "kernels/common/device_info.h"
#include "kernels/common/dispatch.h"
#include "kernels/splitkv/splitkv_launch.h"
#include "kernels/standard/launch_util.h"
#include "sim/common/error.h"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels {

namespace {

constexpr float kLog2e = 1.4426950408889634f;

#define IOSIM_SPLITKV_TILE_TYPE(D, BM, BN) ::with<dispatch::AttentionTile<D, BM, BN>>
using Tiles = dispatch::List<> IOSIM_SPLITKV_MENU(IOSIM_SPLITKV_TILE_TYPE);
#undef IOSIM_SPLITKV_TILE_TYPE

}  // namespace

std::vector<std::string> splitkv_compiled_menu() {
  std::vector<std::string> menu;
  for (const auto dtype : {workload::DType::fp16, workload::DType::bf16})
    dispatch::for_each(Tiles{}, [&](auto tile) {
      using T = decltype(tile);
      menu.push_back("fwd " + menu_entry(T::d, T::bm, T::bn, dtype));
    });
  return menu;
}

void splitkv_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream) {
  validate_config(c, "splitkv");
  const std::pair<const void*, const char*> buffers[] = {{b.q, "q"}, {b.k, "k"}, {b.v, "v"}, {b.o, "o"}, {b.lse, "lse"},
                                                          {b.o_accum, "o_accum"}, {b.lse_accum, "lse_accum"}};
  for (const auto& [ptr, name] : buffers) detail::require_pointer(ptr, "splitkv", name);
  if (!dispatch::contains(dispatch::tile_key(c), Tiles{}))
    throw NotCompiled("splitkv: no compiled kernel for " +
                      menu_entry(c.problem.head_dim, c.block_m, c.block_n, c.problem.dtype) +
                      " (build with -DIOSIM_KERNEL_MENU=full for the block-size menu); compiled: " +
                      detail::join(splitkv_compiled_menu()));
  require_dtype_supported(launch_limits(), c.problem.dtype, "splitkv");
  const workload::Problem& pr = c.problem;
  splitkv::ForwardParams f;
  f.q = b.q;
  f.k = b.k;
  f.v = b.v;
  f.o_accum = b.o_accum;
  f.lse_accum = b.lse_accum;
  f.q_str = strides_for(pr, pr.heads, pr.seq_q);
  f.kv_str = strides_for(pr, pr.kv_heads, pr.seq_k);
  f.scale = c.scale();
  f.scale_log2 = f.scale * kLog2e;
  f.step_log = c.step_log;
  splitkv::CombineParams cb;
  cb.o_accum = b.o_accum;
  cb.lse_accum = b.lse_accum;
  cb.o = b.o;
  cb.lse = b.lse;
  cb.o_str = f.q_str;
  // The plan's kernels in its order (make_plan checks the splits).
  for (const schedule::KernelPlan& k : c.plan(workload::Algorithm::splitkv, workload::Pass::fwd).kernels) {
    switch (k.kind) {
      case schedule::KernelKind::splitkv_fwd: {
        f.sched = k.as<schedule::SplitKvSchedule>();
        const bool launched = dispatch::find_tile(c, Tiles{}, [&](auto tile, auto elem) {
          using T = decltype(tile);
          splitkv::launch_forward<decltype(elem), T::d, T::bm, T::bn>(f, stream);
        });
        if (!launched) throw std::logic_error("splitkv: dispatch found no compiled tile");
        break;
      }
      case schedule::KernelKind::splitkv_combine:
        cb.sched = k.as<schedule::SplitKvCombineSchedule>();
        dispatch::element_type(pr.dtype, [&](auto elem) { splitkv::launch_combine<decltype(elem)>(cb, stream); });
        break;
      default: throw std::logic_error("splitkv: unexpected kernel " + k.name);
    }
  }
}

}  // namespace iosim::kernels
