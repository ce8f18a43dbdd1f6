// iosim-peer's device side: filling inputs by a rule the host can evaluate,
// and the copy kernel of `iosim-peer copy` (kernels/peer/peer_main.cpp).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "sim/common/hd.h"
#include "sim/workload/problem.h"

namespace iosim::peer {

// splitmix64's finaliser of (seed, i).
IOSIM_HD inline std::uint64_t mix(std::uint64_t seed, i64 i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// Element i of a tensor filled with `seed`: (mix mod 257 - 128) / 128, exact
// in fp16 and bf16, so the host knows every input without copying it back.
IOSIM_HD inline double input_value(std::uint64_t seed, i64 i) {
  return (static_cast<double>(mix(seed, i) % 257) - 128.0) / 128.0;
}

// Writes input_value(seed, i) to p[i], i < n, in the data type (fp16 or bf16).
void fill(std::uint16_t* p, i64 n, std::uint64_t seed, workload::DType t);
// out = in, 16 bytes per thread, grid-stride over n vectors.
void copy16(const void* in, void* out, i64 n, int blocks);

}  // namespace iosim::peer
