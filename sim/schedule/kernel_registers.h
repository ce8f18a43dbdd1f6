// Registers per thread of each compiled kernel instantiation, from ptxas
// (kernel_registers.inc: scripts/kernel_registers.py generates it from a
// full-menu build, and the ctest kernel_registers_match_ptxas checks it
// against every CUDA build's own reports). Occupancy depends on them: an FA2
// forward at 64 x 16 uses 94 registers and runs 4 CTAs per SM where a
// 255-register tile runs 2, so the plan takes the count of the kernel the GPU
// runs, not one per kernel kind. The counts are sm_90's; profiles of other
// architectures take them too (their own builds' counts are not recorded).
#pragma once
#include <array>
#include <optional>

#include "sim/schedule/plan.h"

namespace iosim::schedule {

// The instantiation's key beside its kind and data type: head dim, B_r, B_c
// (attention kernels); tile M, N, K (GEMMs); the operation (elementwise);
// zeros (row kernels).
using RegisterKey = std::array<i64, 3>;

// The registers ptxas gave the instantiation; nullopt where no kernel of that
// key is compiled (a tiling the simulator explores but no kernel has).
std::optional<i64> compiled_registers(KernelKind kind, workload::DType dtype, const RegisterKey& key);

}  // namespace iosim::schedule
