// Explicit instantiation: FlashAttention-3 fwd, fp16, head_dim 64 (sm_90a).
#include "kernels/fa3/fa3_forward.cuh"
#include "kernels/fa3/fa3_launch.h"

namespace iosim::kernels::fa3 {
template void launch_forward<__half, 64>(const ForwardParams&, cudaStream_t);
}  // namespace iosim::kernels::fa3
