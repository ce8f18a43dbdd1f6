// Explicit instantiations: the FlashAttention-2 backward pass's row kernels
// (preprocess and dQ conversion), fp16 and bf16.
#include "kernels/fa2/fa2_rows.cuh"
#include "kernels/fa2/fa2_launch.h"

namespace iosim::kernels::fa2 {
template void launch_row_kernel<__half>(schedule::KernelKind, const RowParams&, cudaStream_t);
template void launch_row_kernel<__nv_bfloat16>(schedule::KernelKind, const RowParams&, cudaStream_t);
}  // namespace iosim::kernels::fa2
