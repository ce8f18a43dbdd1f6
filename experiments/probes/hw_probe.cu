// Hardware probe for the hw_profiles: device properties, shared-memory / L2
// near+far / DRAM latency (single thread, per-access clock64), DRAM read and
// copy bandwidth, L2 read bandwidth, effective SM clock under load.
// Build: nvcc -O2 -arch=sm_90 hw_probe.cu -o hw_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "probe_check.h"

__device__ __forceinline__ unsigned ld_cg(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long clk() {
  unsigned long long c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
  return c;
}
__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long c;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(c)::"memory");
  return c;
}
__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// Shared-memory chase: plain (total/N) and instrumented (per access), to get
// the instrumentation overhead.
__global__ void smem_chase(unsigned* out_plain, unsigned* out_instr, int n) {
  extern __shared__ unsigned s[];
  __shared__ unsigned sink[1];
  const int len = 1024;
  for (int i = 0; i < len; ++i) s[i] = (i * 97 + 13) % len;  // one cycle (97 coprime to 1024)
  __syncthreads();
  unsigned j = 0;
  unsigned long long t0 = clk();
  for (int i = 0; i < n; ++i) j = s[j];
  unsigned long long t1 = clk();
  out_plain[0] = unsigned((t1 - t0) / n);
  out_plain[1] = j;
  // instrumented: same pattern as the global chase below
  volatile unsigned* vs = sink;
  unsigned long long acc = 0;
  for (int i = 0; i < n; ++i) {
    unsigned long long a = clk();
    j = s[j];
    vs[0] = j;
    unsigned long long b = clk();
    acc += b - a;
  }
  out_instr[0] = unsigned(acc / n);
  out_instr[1] = j;
}

// Global chase over `lines` 128-byte lines (chain[] holds next index in
// 32-bit words); three passes, each access timed. lat[pass*lines + i].
__global__ void global_chase(const unsigned* chain, int lines, unsigned* lat, unsigned* info) {
  __shared__ unsigned sink[1];
  volatile unsigned* vs = sink;
  unsigned j = 0;
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < lines; ++i) {
      unsigned long long a = clk();
      j = ld_cg(chain + j);
      vs[0] = j;
      unsigned long long b = clk();
      lat[pass * lines + i] = unsigned(b - a);
    }
  }
  info[0] = smid();
  info[1] = j;
}

// Like global_chase, but only one thread on SM `target` runs it (other blocks
// exit); `passes` timed passes. info[0] = 1 when the target SM was found.
__global__ void targeted_chase(const unsigned* chain, int lines, int passes, unsigned target,
                               unsigned* lat, unsigned* info) {
  __shared__ unsigned sink[1];
  if (threadIdx.x != 0 || smid() != target) return;
  if (atomicCAS(info, 0u, 1u) != 0u) return;
  volatile unsigned* vs = sink;
  unsigned j = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (int i = 0; i < lines; ++i) {
      unsigned long long a = clk();
      j = ld_cg(chain + j);
      vs[0] = j;
      unsigned long long b = clk();
      lat[pass * lines + i] = unsigned(b - a);
    }
  }
  info[1] = j;
}

__global__ void flush_kernel(uint4* buf, size_t n16) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i < n16; i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = buf[i];
    v.x += 1;
    buf[i] = v;
  }
}

__global__ void read_bw(const uint4* __restrict__ buf, size_t n16, unsigned* sink) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (; i < n16; i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}

__global__ void copy_bw(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n16) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i < n16; i += size_t(gridDim.x) * blockDim.x) dst[i] = src[i];
}

// Re-reads a working set `iters` times with .cg loads; records clock and
// globaltimer of block 0 to estimate the SM clock under load.
__global__ void l2_bw(const uint4* __restrict__ buf, size_t n16, int iters, unsigned* sink,
                      unsigned long long* clocks) {
  unsigned long long c0 = clk(), g0 = gtimer();
  unsigned acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (int it = 0; it < iters; ++it) {
    // rotate the start so each CTA sweeps different lines each iteration
    size_t start = (blockIdx.x * size_t(blockDim.x) + threadIdx.x + it * size_t(blockDim.x) * 7) % stride;
    for (size_t i = start; i < n16; i += stride) {
      uint4 v;
      asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(buf + i));
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == 0x12345678u) sink[0] = acc;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    clocks[0] = clk() - c0;
    clocks[1] = gtimer() - g0;
  }
}

static float time_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

static void summarize(const char* label, std::vector<unsigned> v) {
  std::sort(v.begin(), v.end());
  auto q = [&](double f) { return v[std::min(v.size() - 1, size_t(f * v.size()))]; };
  double mean = 0;
  for (unsigned x : v) mean += x;
  mean /= v.size();
  std::printf("%s: mean=%.1f n=%zu min=%u p10=%u p25=%u p50=%u p75=%u p90=%u max=%u\n", label, mean, v.size(),
              v.front(), q(0.10), q(0.25), q(0.5), q(0.75), q(0.9), v.back());
  // coarse histogram, 20-cycle bins between p1 and p99
  unsigned lo = q(0.01), hi = q(0.99);
  const unsigned bin = 20;
  std::printf("  hist(%u-cycle bins):", bin);
  for (unsigned b = lo / bin * bin; b <= hi; b += bin) {
    size_t c = std::count_if(v.begin(), v.end(), [&](unsigned x) { return x >= b && x < b + bin; });
    if (c * 200 >= v.size()) std::printf(" [%u:%zu]", b, c);
  }
  std::printf("\n");
}

int main() {
  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, dev));
  int clock_khz = 0, mem_khz = 0, bus = 0, l2 = 0, smem_sm = 0, smem_optin = 0, maxblk = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  CK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev));
  CK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  CK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CK(cudaDeviceGetAttribute(&maxblk, cudaDevAttrMaxBlocksPerMultiprocessor, dev));
  std::printf("name=%s cc=%d.%d sms=%d\n", p.name, p.major, p.minor, p.multiProcessorCount);
  std::printf("l2_bytes=%d persisting_l2_max=%d smem_per_sm=%d smem_optin_per_block=%d "
              "smem_per_block_default=%zu regs_per_sm=%d regs_per_block=%d\n",
              l2, p.persistingL2CacheMaxSize, smem_sm, smem_optin, p.sharedMemPerBlock,
              p.regsPerMultiprocessor, p.regsPerBlock);
  std::printf("max_threads_per_sm=%d max_blocks_per_sm=%d warp=%d total_global_mem=%zu\n",
              p.maxThreadsPerMultiProcessor, maxblk, p.warpSize, p.totalGlobalMem);
  std::printf("sm_clock_khz=%d mem_clock_khz=%d bus_bits=%d -> peak %.4f TB/s (DDR)\n", clock_khz,
              mem_khz, bus, 2.0 * mem_khz * 1e3 * bus / 8 / 1e12);

  // --- shared-memory latency and instrumentation overhead
  unsigned *d_plain, *d_instr;
  CK(cudaMalloc(&d_plain, 8));
  CK(cudaMalloc(&d_instr, 8));
  smem_chase<<<1, 1, 4096>>>(d_plain, d_instr, 8192);
  CK(cudaGetLastError());
  smem_chase<<<1, 1, 4096>>>(d_plain, d_instr, 8192);
  CK(cudaDeviceSynchronize());
  unsigned h_plain[2], h_instr[2];
  CK(cudaMemcpy(h_plain, d_plain, 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h_instr, d_instr, 8, cudaMemcpyDeviceToHost));
  const int overhead = int(h_instr[0]) - int(h_plain[0]);
  std::printf("smem_chase: plain %u cycles/load, instrumented %u -> overhead %d cycles\n",
              h_plain[0], h_instr[0], overhead);

  // --- global chase: 1 MiB region = 8192 lines of 128 B, random cyclic order
  const int lines = 8192;
  const size_t words_per_line = 32;
  std::vector<unsigned> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(12345);
  std::shuffle(order.begin() + 1, order.end(), rng);
  std::vector<unsigned> chain(lines * words_per_line, 0);
  for (int i = 0; i < lines; ++i)
    chain[order[i] * words_per_line] = order[(i + 1) % lines] * words_per_line;
  unsigned* d_chain;
  CK(cudaMalloc(&d_chain, chain.size() * 4));
  CK(cudaMemcpy(d_chain, chain.data(), chain.size() * 4, cudaMemcpyHostToDevice));
  const size_t flush_bytes = size_t(1) << 29;  // 512 MiB, ~10x L2
  uint4* d_flush;
  CK(cudaMalloc(&d_flush, flush_bytes));
  CK(cudaMemset(d_flush, 1, flush_bytes));
  unsigned *d_lat, *d_info;
  CK(cudaMalloc(&d_lat, 3 * lines * 4));
  CK(cudaMalloc(&d_info, 8));
  for (int rep = 0; rep < 2; ++rep) {
    flush_kernel<<<p.multiProcessorCount * 4, 512>>>(d_flush, flush_bytes / 16);
    CK(cudaGetLastError());
    global_chase<<<1, 1>>>(d_chain, lines, d_lat, d_info);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> lat(3 * lines);
    unsigned info[2];
    CK(cudaMemcpy(lat.data(), d_lat, lat.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(info, d_info, 8, cudaMemcpyDeviceToHost));
    std::printf("global_chase rep %d on SM %u (raw, includes %d-cycle overhead):\n", rep, info[0],
                overhead);
    const char* names[3] = {"  pass1 (after flush: DRAM)", "  pass2 (L2, first hit)",
                            "  pass3 (L2, second hit)"};
    for (int pass = 0; pass < 3; ++pass)
      summarize(names[pass], std::vector<unsigned>(lat.begin() + pass * lines,
                                                   lat.begin() + (pass + 1) * lines));
  }

  // --- far hits: fill from SM 0, first and second hit from SM k
  {
    const int nsm = p.multiProcessorCount;
    std::printf("cross_sm: fill on SM 0, then 2 passes on SM k (raw cycles; mean / p10 / p50 / p90)\n");
    for (int k = 0; k < nsm; k += 3) {
      flush_kernel<<<nsm * 4, 512>>>(d_flush, flush_bytes / 16);
      CK(cudaMemset(d_info, 0, 8));
      targeted_chase<<<nsm * 4, 32>>>(d_chain, lines, 1, 0, d_lat, d_info);
      CK(cudaMemset(d_info, 0, 8));
      targeted_chase<<<nsm * 4, 32>>>(d_chain, lines, 2, unsigned(k), d_lat, d_info);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      unsigned info[2];
      CK(cudaMemcpy(info, d_info, 8, cudaMemcpyDeviceToHost));
      if (!info[0]) { std::printf("  SM %3d: not reached\n", k); continue; }
      std::vector<unsigned> lat(2 * lines);
      CK(cudaMemcpy(lat.data(), d_lat, lat.size() * 4, cudaMemcpyDeviceToHost));
      std::printf("  SM %3d:", k);
      for (int pass = 0; pass < 2; ++pass) {
        std::vector<unsigned> v(lat.begin() + pass * lines, lat.begin() + (pass + 1) * lines);
        std::sort(v.begin(), v.end());
        double mean = 0;
        for (unsigned x : v) mean += x;
        mean /= v.size();
        size_t slow = std::count_if(v.begin(), v.end(), [](unsigned x) { return x >= 400; });
        std::printf("  hit%d %.0f / %u / %u / %u (>=400: %.0f%%)", pass + 1, mean, v[lines / 10],
                    v[lines / 2], v[lines * 9 / 10], 100.0 * slow / lines);
      }
      std::printf("\n");
    }
  }

  // --- bandwidths
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  unsigned* d_sink;
  CK(cudaMalloc(&d_sink, 4));
  const size_t big = size_t(2) << 30;  // 2 GiB
  uint4 *d_a, *d_b;
  CK(cudaMalloc(&d_a, big));
  CK(cudaMalloc(&d_b, big));
  CK(cudaMemset(d_a, 3, big));
  CK(cudaMemset(d_b, 0, big));
  const int grid = p.multiProcessorCount * 8, block = 512;
  std::vector<float> rd, cp;
  for (int r = 0; r < 7; ++r) {
    CK(cudaEventRecord(e0));
    read_bw<<<grid, block>>>(d_a, big / 16, d_sink);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    rd.push_back(time_ms(e0, e1));
    CK(cudaEventRecord(e0));
    copy_bw<<<grid, block>>>(d_a, d_b, big / 16);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    cp.push_back(time_ms(e0, e1));
  }
  CK(cudaGetLastError());
  std::sort(rd.begin(), rd.end());
  std::sort(cp.begin(), cp.end());
  std::printf("dram_read 2 GiB: median %.3f ms -> %.3f TB/s (best %.3f)\n", rd[3],
              big / (rd[3] * 1e-3) / 1e12, big / (rd[0] * 1e-3) / 1e12);
  std::printf("dram_copy 2 GiB: median %.3f ms -> %.3f TB/s read+write (best %.3f)\n", cp[3],
              2.0 * big / (cp[3] * 1e-3) / 1e12, 2.0 * big / (cp[0] * 1e-3) / 1e12);

  unsigned long long* d_clocks;
  CK(cudaMalloc(&d_clocks, 16));
  const size_t mib = size_t(1) << 20;
  for (size_t ws : {4 * mib, 8 * mib, 16 * mib, 24 * mib, 32 * mib, 40 * mib, 48 * mib,
                    64 * mib, 128 * mib}) {
    const int iters = int(std::max<size_t>(4, (size_t(4) << 30) / ws));  // ~4 GiB read
    l2_bw<<<grid, block>>>(d_a, ws / 16, 1, d_sink, d_clocks);  // warm
    std::vector<float> t;
    unsigned long long clocks[2] = {0, 0};
    for (int r = 0; r < 3; ++r) {
      CK(cudaEventRecord(e0));
      l2_bw<<<grid, block>>>(d_a, ws / 16, iters, d_sink, d_clocks);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      t.push_back(time_ms(e0, e1));
    }
    CK(cudaGetLastError());
    CK(cudaMemcpy(clocks, d_clocks, 16, cudaMemcpyDeviceToHost));
    std::sort(t.begin(), t.end());
    std::printf("l2_read ws=%3zu MiB: median %.3f ms -> %.3f TB/s; block0 clock %.0f MHz\n",
                ws / mib, t[1], double(ws) * iters / (t[1] * 1e-3) / 1e12,
                clocks[1] ? double(clocks[0]) / double(clocks[1]) * 1e3 : 0.0);
  }
  std::printf("done\n");
  return 0;
}
