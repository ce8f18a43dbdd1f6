// Hopper (sm_90a) building blocks of the FlashAttention-3 kernel, one PTX
// instruction each: mbarriers (with TMA transaction counts), TMA tile loads,
// named barriers, warpgroup register reallocation, and wgmma's fences and
// shared-memory matrix descriptors. The wgmma instructions themselves are in
// fa3_wgmma.cuh.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only: nothing here links libcuda)

#include <cstdint>

#include "kernels/common/device_primitives.cuh"

namespace iosim::kernels::hopper {

using dev::smem_addr;

// ---------------------------------------------------------------------------
// mbarrier (PTX ISA 9.7.13.15). A phase completes when `count` arrivals have
// happened and every expected transaction byte has landed; waiters name the
// phase by its parity.
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// Makes initialised barriers visible to the other threads and to the TMA unit.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// One arrival that also announces `bytes` of TMA data for this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Blocks until the phase of parity `parity` has completed. A fresh barrier
// counts its (nonexistent) previous phase, parity 1, as complete: a producer
// waiting for "stage empty" with parity 1 passes on first use.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, std::uint32_t parity) {
  const std::uint32_t a = smem_addr(bar);
  while (!mbar_try_wait(a, parity)) {
  }
}

// ---------------------------------------------------------------------------
// TMA (cp.async.bulk.tensor): one box of a 4-D tensor map at coordinates
// (c0 innermost), into shared memory, completing `bytes` on `bar`. Elements
// outside the tensor are filled with zeros (and still counted as bytes).
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                            int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// ---------------------------------------------------------------------------
// Named barriers (bar.sync / bar.arrive with an id and a thread count): the
// consumer warpgroups' ping-pong. Id 0 is __syncthreads'.
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Warpgroup register reallocation (setmaxnreg): every warp of the warpgroup
// executes the same one.
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// ---------------------------------------------------------------------------
// wgmma ordering: fence before the first wgmma that reads registers written
// since the last one; commit closes a group of issued wgmmas; wait<N> blocks
// until at most N groups are in flight.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Pins registers that an in-flight wgmma reads or writes: the compiler may
// not move their uses across this point (CUTLASS's warpgroup_fence_operand).
template <int N>
__device__ __forceinline__ void fence_operands(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_operands(std::uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Shared-memory matrix descriptor (PTX ISA 9.7.15.5.1) for the 128-byte
// swizzle: start address, leading and stride byte offsets (all >> 4),
// swizzle mode 1 in bits 62-63. Tiles are 1024-byte aligned, so the base
// offset (bits 49-51) is 0; stepping the start address by 32 bytes inside a
// 128-byte row selects the next 16 K-elements (the swizzle acts on the
// address bits).
//   K-major (Q, K):  rows of 64 elements; SBO = 1024 (8 rows), LBO unused.
//   N-major (V):     SBO = 1024 (8 K-rows), LBO = bytes between 64-column halves.
__device__ __forceinline__ std::uint64_t desc_sw128(std::uint32_t smem_byte_addr, std::uint32_t lbo_bytes) {
  constexpr std::uint64_t kSbo = 1024;
  return static_cast<std::uint64_t>((smem_byte_addr & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16) | ((kSbo >> 4) << 32) | (1ull << 62);
}

}  // namespace iosim::kernels::hopper
