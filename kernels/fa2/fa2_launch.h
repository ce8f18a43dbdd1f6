// Declarations of the per-instantiation launchers; each is explicitly
// instantiated in one fa2_{fwd,bwd}_{fp16,bf16}_d{64,128}.cu file from the
// menu in sim/schedule/kernel_menu.h, so the dispatcher (fa2_api.cu) compiles no kernel code.
#pragma once
#include <cuda_runtime.h>

#include "kernels/fa2/fa2_params.h"
#include "sim/schedule/plan.h"

namespace iosim::kernels::fa2 {

template <class Elem, int D, int BM, int BN>
void launch_forward(const ForwardParams& p, cudaStream_t stream);

template <class Elem, int D, int BM, int BN>
void launch_backward(const BackwardParams& p, cudaStream_t stream);

// The backward pass's row kernels (instantiated in fa2_rows.cu).
template <class Elem>
void launch_row_kernel(schedule::KernelKind kind, const RowParams& rows, cudaStream_t stream);

}  // namespace iosim::kernels::fa2
