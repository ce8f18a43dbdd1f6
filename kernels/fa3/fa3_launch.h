// Declarations of the per-instantiation launchers of the FlashAttention-3
// forward kernel; each is explicitly instantiated in one
// fa3_fwd_{fp16,bf16}_d{64,128}.cu file (compiled for sm_90a only), so the
// dispatcher (fa3_api.cpp) compiles no kernel code.
#pragma once
#include <cuda_runtime.h>

#include "kernels/fa3/fa3_params.h"

namespace iosim::kernels::fa3 {

// fa3_forward with its scheduling choices selectable (tests check that they
// change no number; the bench times them).
void forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream, const ForwardVariant& v);

template <class Elem, int D>
void launch_forward(const ForwardParams& p, cudaStream_t stream);

}  // namespace iosim::kernels::fa3
