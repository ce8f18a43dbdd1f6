// Declarations of the per-instantiation launchers of the FlashAttention-3
// forward kernel; each is explicitly instantiated in one
// fa3_fwd_{fp16,bf16}_d{64,128}.cu file (compiled for sm_90a only), so the
// dispatcher (fa3_api.cpp) compiles no kernel code.
#pragma once
#include <cuda_runtime.h>

#include "kernels/fa3/fa3_params.h"

namespace iosim::kernels::fa3 {

// fa3_forward with the consumer ping-pong selectable (tests turn it off to
// tell a scheduling fault from a numerical one).
void forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream, bool pingpong);

template <class Elem, int D>
void launch_forward(const ForwardParams& p, cudaStream_t stream);

}  // namespace iosim::kernels::fa3
