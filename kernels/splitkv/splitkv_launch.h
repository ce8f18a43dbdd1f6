// Declarations of the split-KV launchers: the forward per (dtype, head_dim,
// B_r, B_c), instantiated in splitkv_fwd_{fp16,bf16}.cu from the menu in
// sim/schedule/kernel_menu.h, and the combine per dtype (splitkv_combine.cu),
// so the dispatcher (splitkv_api.cu) compiles no kernel code.
#pragma once
#include <cuda_runtime.h>

#include "kernels/splitkv/splitkv_params.h"

namespace iosim::kernels::splitkv {

template <class Elem, int D, int BM, int BN>
void launch_forward(const ForwardParams& p, cudaStream_t stream);

template <class Elem>
void launch_combine(const CombineParams& p, cudaStream_t stream);

}  // namespace iosim::kernels::splitkv
