// Explicit instantiations: split-KV forward, bf16 (menu in sim/schedule/kernel_menu.h).
#include "kernels/splitkv/splitkv_forward.cuh"
#include "kernels/splitkv/splitkv_launch.h"
#include "sim/schedule/kernel_menu.h"

namespace iosim::kernels::splitkv {
#define IOSIM_SPLITKV_INSTANTIATE(D, BM, BN) template void launch_forward<__nv_bfloat16, D, BM, BN>(const ForwardParams&, cudaStream_t);
IOSIM_SPLITKV_MENU(IOSIM_SPLITKV_INSTANTIATE)
#undef IOSIM_SPLITKV_INSTANTIATE
}  // namespace iosim::kernels::splitkv
