// Explicit instantiations: FlashAttention-2 bwd, fp16, head_dim 128 (menu in sim/schedule/kernel_menu.h).
#include "kernels/fa2/fa2_backward.cuh"
#include "kernels/fa2/fa2_launch.h"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels::fa2 {
#define IOSIM_FA2_INSTANTIATE(D, BM, BN) template void launch_backward<__half, D, BM, BN>(const BackwardParams&, cudaStream_t);
IOSIM_FA2_BWD_MENU_D128(IOSIM_FA2_INSTANTIATE)
#undef IOSIM_FA2_INSTANTIATE
}  // namespace iosim::kernels::fa2
