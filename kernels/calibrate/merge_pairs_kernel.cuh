// The merge probe's kernel, one source for iosim calibrate's l2.merge_window
// (kernels/calibrate/merge_probe.cu) and experiments/probes/merge_probe.cu
// (which includes this file by its relative path).
//
// Pairs of one-warp CTAs (one CTA per SM, so the two are on different SMs)
// read the same 128 B line: the first CTA to arrive publishes a %globaltimer
// instant kLeadNs ahead; every CTA waits for it, and round r starts
// kRoundNs x r later. In each round the pair's first CTA reads line (r, pair)
// at once, the second after spinning `delta` clock64 cycles. Each lane loads
// 4 B of the line with ld.global.cg: one request of 4 sectors per read. warm:
// the pair's first CTA reads its lines well before, so the timed reads hit.
// lines: rounds x pairs lines of 32 floats; line (r, p) at (r * pairs + p) * 32.
#pragma once
#include <cuda_runtime.h>

namespace iosim::merge_pairs {

constexpr int kRounds = 32;
constexpr unsigned long long kLeadNs = 20000;
constexpr unsigned long long kRoundNs = 10000;

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void spin_cycles(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__device__ __forceinline__ void wait_until(unsigned long long t) {
  while (globaltimer() < t) {
  }
}

__global__ void __launch_bounds__(32) pair_reads(const float* __restrict__ lines, int pairs, long long delta, int warm,
                                                 unsigned long long* start, float* __restrict__ sink) {
  const int pair = blockIdx.x / 2;
  const bool second = blockIdx.x % 2 == 1;
  if (pair >= pairs) return;
  float acc = 0.f;
  if (warm && !second)
    for (int r = 0; r < kRounds; ++r) acc += __ldcg(lines + (static_cast<long long>(r) * pairs + pair) * 32 + threadIdx.x);
  if (threadIdx.x == 0) atomicCAS(start, 0ull, globaltimer() + kLeadNs);
  __syncwarp();
  unsigned long long t0;
  do {
    t0 = *reinterpret_cast<volatile unsigned long long*>(start);
  } while (t0 == 0);
  for (int r = 0; r < kRounds; ++r) {
    wait_until(t0 + r * kRoundNs);
    if (second) spin_cycles(delta);
    acc += __ldcg(lines + (static_cast<long long>(r) * pairs + pair) * 32 + threadIdx.x);
  }
  if (acc == 1234.5f) sink[threadIdx.x] = acc;  // never true: keeps the loads
}

}  // namespace iosim::merge_pairs
