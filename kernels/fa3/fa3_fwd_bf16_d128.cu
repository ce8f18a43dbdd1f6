// Explicit instantiation: FlashAttention-3 fwd, bf16, head_dim 128 (sm_90a).
#include "kernels/fa3/fa3_forward.cuh"
#include "kernels/fa3/fa3_launch.h"

namespace iosim::kernels::fa3 {
template void launch_forward<__nv_bfloat16, 128>(const ForwardParams&, cudaStream_t);
}  // namespace iosim::kernels::fa3
