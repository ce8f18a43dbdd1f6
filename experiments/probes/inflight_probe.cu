// In-flight probe: how many bytes of DRAM loads one SM keeps outstanding.
//
// Why (issue 9, DRAM writes): the engine's L2 saw every load of a wave of
// resident CTAs at the instant the CTAs issued them, so a kernel whose CTAs
// all read first and write last (convert_dq: 12 CTAs per SM) had its 67 MB of
// reads pass through the L2 before any of its writes, and left 27 MB dirty
// where the hardware left 16. On the hardware a CTA's loads reach the L2 only
// as fast as the SM may have them outstanding. This probe measures that limit.
//
// One CTA of 128-1024 threads streams through DRAM-resident data: per
// iteration each thread issues K independent 16-byte ld.global.cg loads (its
// lanes' loads of one instruction are 512 contiguous bytes), then consumes
// them. So K x threads x 16 bytes are requested at once; an iteration lasts
// about one loaded latency while the SM admits them all, and longer when it
// holds some back. Bytes per cycle against K give the limit: the plateau of
// bytes per cycle times the latency at small K. `all` runs the same CTA on
// every SM at once (each its own region), for the loaded latency; `one_l2`
// runs one CTA on L2-resident data (4 MiB re-read), for the hits' side.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/inflight_probe.cu -o inflight_probe
//   ./inflight_probe > inflight.csv
//
// Before every launch a flush kernel reads 4x the L2 elsewhere, so the
// launch's loads miss the L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_check.h"
#include "probe_flush.cuh"

namespace {

constexpr int kMaxThreads = 1024;
constexpr long long kBytesPerCta = 24ll << 20;  // each CTA streams 24 MiB per launch

// `wrap` (in float4s, a multiple of K x threads): the CTA re-reads its first
// `wrap` elements over and over (L2-resident data); 0: it streams.
template <int K>
__global__ void stream_loads(const float4* __restrict__ src, long long iters, long long wrap,
                                                         float* __restrict__ sink, long long* __restrict__ cycles) {
  const int threads = static_cast<int>(blockDim.x);
  const float4* base = src + static_cast<long long>(blockIdx.x) * (kBytesPerCta / 16) + threadIdx.x;
  long long off = 0;
  float acc = 0;
  __syncthreads();
  const long long t0 = clock64();
  // One iteration's K loads in flight at a time: the next iteration's
  // addresses depend on this one's data (acc * 0 is not folded for floats),
  // so the compiler cannot hoist them.
#pragma unroll 1
  for (long long it = 0; it < iters; ++it) {
    float4 v[K];
    const float4* p = base + off;
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = __ldcg(p + j * threads);
#pragma unroll
    for (int j = 0; j < K; ++j) acc += v[j].x + v[j].y + v[j].z + v[j].w;
    off += K * threads + static_cast<long long>(acc * 0.0f);
    if (wrap > 0 && off >= wrap) off = 0;
  }
  __syncthreads();
  const long long t1 = clock64();
  if (acc == 12345.f) sink[threadIdx.x] = acc;  // keeps the loads
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}


struct Run {
  double bytes_per_cycle;  // per SM, mean over the CTAs
  double cycles_per_iter;  // mean over the CTAs
};

template <int K>
Run run(const float4* src, long long region_offset, int ctas, int threads, bool resident, float* sink,
        long long* d_cycles) {
  long long iters = kBytesPerCta / (16ll * K * threads);
  long long wrap = 0;
  if (resident) {  // 4 MiB (a multiple of K x threads x 16 B) read 6 times: a warm-up launch, then the timed one
    wrap = (4ll << 20) / (16ll * K * threads) * K * threads;
    iters = 6 * wrap / (K * threads);
    stream_loads<K><<<ctas, threads>>>(src + region_offset / 16, iters, wrap, sink, d_cycles);
    CK(cudaGetLastError());
  }
  stream_loads<K><<<ctas, threads>>>(src + region_offset / 16, iters, wrap, sink, d_cycles);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<long long> cyc(static_cast<size_t>(ctas));
  CK(cudaMemcpy(cyc.data(), d_cycles, sizeof(long long) * ctas, cudaMemcpyDeviceToHost));
  double bpc = 0, cpi = 0;
  for (long long c : cyc) {
    bpc += static_cast<double>(iters * 16ll * K * threads) / static_cast<double>(c);
    cpi += static_cast<double>(c) / static_cast<double>(iters);
  }
  return {bpc / ctas, cpi / ctas};
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  // Regions: one CTA's 24 MiB for `one`, sms more for `all` (reused: the
  // flush before every launch evicts them), plus the flush buffer.
  const long long flush_bytes = 4ll * prop.l2CacheSize;
  const int ks[] = {1, 2, 4, 8, 16, 24, 32, 48};
  const int repeats = 3;
  const long long regions = 1 + sms;
  const long long total = regions * kBytesPerCta + flush_bytes;
  void* buf = nullptr;
  CK(cudaMalloc(&buf, total));
  CK(cudaMemset(buf, 1, total));
  float* sink = nullptr;
  long long* d_cycles = nullptr;
  CK(cudaMalloc(&sink, sizeof(float) * kMaxThreads));
  CK(cudaMalloc(&d_cycles, sizeof(long long) * sms));
  const float4* src = static_cast<const float4*>(buf);
  const float4* flush_src = reinterpret_cast<const float4*>(static_cast<char*>(buf) + regions * kBytesPerCta);
  std::printf("# device: %s, %d SMs, L2 %d B; 16 B ld.global.cg per load, 24 MiB per CTA\n", prop.name, sms,
              prop.l2CacheSize);
  std::printf("mode,ctas,threads,k,requested_in_flight_bytes,repeat,bytes_per_cycle_per_sm,cycles_per_iteration\n");
  for (int rep = 0; rep < repeats; ++rep)
    for (int mode = 0; mode < 3; ++mode)
      for (int threads : {128, 256, 512, 1024})
      for (int k : ks) {
        if (threads * k > 8192 || (mode == 1 && threads != 512)) continue;  // registers; `all` at 512 only
        const int ctas = mode == 1 ? sms : 1;
        const bool resident = mode == 2;
        flush_l2<<<2 * sms, 512>>>(flush_src, flush_bytes / 16, sink);
        CK(cudaGetLastError());
        const long long off = mode == 1 ? kBytesPerCta : 0;
        Run r{};
        switch (k) {
          case 1: r = run<1>(src, off, ctas, threads, resident, sink, d_cycles); break;
          case 2: r = run<2>(src, off, ctas, threads, resident, sink, d_cycles); break;
          case 4: r = run<4>(src, off, ctas, threads, resident, sink, d_cycles); break;
          case 8: r = run<8>(src, off, ctas, threads, resident, sink, d_cycles); break;
          case 16: r = run<16>(src, off, ctas, threads, resident, sink, d_cycles); break;
          case 24: r = run<24>(src, off, ctas, threads, resident, sink, d_cycles); break;
          case 48: r = run<48>(src, off, ctas, threads, resident, sink, d_cycles); break;
          case 32: r = run<32>(src, off, ctas, threads, resident, sink, d_cycles); break;
        }
        std::printf("%s,%d,%d,%d,%lld,%d,%.3f,%.1f\n", mode == 0 ? "one" : mode == 1 ? "all" : "one_l2", ctas, threads, k,
                    16ll * k * threads, rep,
                    r.bytes_per_cycle, r.cycles_per_iter);
      }
  CK(cudaFree(buf));
  CK(cudaFree(sink));
  CK(cudaFree(d_cycles));
  return 0;
}
