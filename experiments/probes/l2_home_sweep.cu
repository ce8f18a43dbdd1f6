// What the H200's L2 keeps of a working set, by where its lines live (their home half) and which
// half reads them (issue 9 item 3; follows experiments/probes/l2_shared_sweep.cu, which found
// lines read by SMs all over the GPU half-kept at 31.5 MiB and lines read by one SM at 46.2).
//
// 1. The halves. After a flush, a warp on SM X (the first SM id) reads 2048 lines (from DRAM), then
//    a warp on SM s reads each once, each load timed (fill_then_read). A near hit is ~290 cycles, a
//    far one ~460. If a line lives in a home half (by its address) and a reader of the other half
//    gets a copy in its own, s in X's half finds all lines near, s in the other half half of them.
// 2. The homes. The sweep buffer (2 x the L2), 16 MiB at a time: filled by SM X, read once by SM Y
//    of the other half: near = homed in Y's half.
// 3. Sweeps. A chain of lines per warp (each line's first word holds the next line's index), lane 0
//    chasing it: a cold pass, 3 warm passes, after a flush (512 MiB read three times over in half-L2
//    chunks); per working set the median over warps of cycles per load, median of 3 runs; the hit
//    fraction as calibrate's. Modes:
//      mixed   every line read by one warp, homes as they fall (calibrate's sweep);
//      own     every line read by one warp of its home half;
//      other   every line read by one warp of the other half;
//      cross   every line read by two warps, one in each half (rank r of half 0 and of half 1).
//    Lines of a mode are taken in address order from the lists of step 2 until the working set is
//    reached, split over the half's warps round-robin.
// Output (stdout, CSV): gpu,mode,working_set_mib,cold,warm,hit_fraction; stderr: the halves and
// the home counts.
//
// Build: nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 l2_home_sweep.cu -o l2_home_sweep
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "l2_sweep_common.h"

namespace {

using l2probe::clock_cycles;
using l2probe::kLine;
using l2probe::kWarmPasses;
using l2probe::ld_cg;
using l2probe::median;

constexpr int kWords = kLine / 4;
constexpr int kRuns = 3;

__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// After a flush: a warp on SM `filler` reads lines [0, n) (from DRAM), then a warp on SM `reader`
// reads each once, each load timed: lat[i] = cycles of line i's load. One CTA per role claims it
// (claims[0], claims[1]); claims[2] is the filler's done flag, claims[3] a store target.
__global__ void fill_then_read(const std::uint32_t* buf, long long n, unsigned filler, unsigned reader, int* claims,
                               unsigned* lat) {
  if (threadIdx.x != 0) return;
  const unsigned me = smid();
  volatile int* done = claims + 2;
  if (me == filler && atomicCAS(claims, 0, 1) == 0) {
    std::uint32_t guard = 0;
    for (long long i = 0; i < n; ++i) guard ^= ld_cg(buf + i * kWords);
    claims[3] = static_cast<int>(guard);
    __threadfence();
    *done = 1;
    return;
  }
  if (me != reader || atomicCAS(claims + 1, 0, 1) != 0) return;
  while (*done == 0) {
  }
  std::uint32_t guard = 0;
  volatile int* hold = claims + 3;
  for (long long i = 0; i < n; ++i) {
    const unsigned long long t0 = clock_cycles();
    const std::uint32_t v = ld_cg(buf + i * kWords + guard);
    guard = v == 0x7FC01234u ? 1u : 0u;
    *hold = static_cast<int>(guard);  // the store waits for the load, the clock read for the store's issue
    const unsigned long long t1 = clock_cycles();
    lat[i] = static_cast<unsigned>(t1 - t0);
  }
}

__global__ void record_smid(unsigned* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = smid();
}

struct Chain {
  unsigned head = 0;
  unsigned length = 0;
};
using Rec = l2probe::ChaseRecord;

// Warp (by its SM's half h and its rank r among that half's warps, given by rank counters) chases
// chain chains[h][r]: chains[h * per_half + r].
__global__ void chase(const std::uint32_t* buf, const Chain* chains, int per_half, const unsigned char* half_of_sm,
                      unsigned* rank_counter, Rec* out, std::uint32_t* sink) {
  if ((threadIdx.x & 31) != 0) return;
  const int h = half_of_sm[smid()];
  const unsigned r = atomicAdd(rank_counter + h, 1u);
  if (r >= static_cast<unsigned>(per_half)) return;
  const Chain c = chains[h * per_half + r];
  if (c.length == 0) return;
  auto pass = [&]() {
    unsigned line = c.head;
    for (unsigned k = 0; k < c.length; ++k) line = ld_cg(buf + static_cast<long long>(line) * kWords);
    *sink = line;
  };
  const unsigned long long c0 = clock_cycles();
  pass();
  const unsigned long long c1 = clock_cycles();
  for (int p = 0; p < kWarmPasses; ++p) pass();
  const unsigned long long c2 = clock_cycles();
  Rec& o = out[h * per_half + r];
  o.cold = c1 - c0;
  o.warm = c2 - c1;
  o.accesses = c.length;
}



// Latencies of lines [0, n) of `buf` read by SM `reader` right after SM `filler` read them from
// DRAM (the L2 flushed first).
std::vector<unsigned> first_reads(std::uint32_t* buf, long long n, unsigned filler, unsigned reader, int sms,
                                  int* claims, unsigned* lat, const uint4* fbuf, long long l2,
                                  std::uint32_t* sink) {
  l2probe::flush(fbuf, l2, sms, sink);
  CK(cudaMemset(claims, 0, 4 * sizeof(int)));
  fill_then_read<<<sms * 2, 32>>>(buf, n, filler, reader, claims, lat);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<unsigned> out(static_cast<size_t>(n));
  CK(cudaMemcpy(out.data(), lat, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const long long l2 = prop.l2CacheSize;
  const long long buf_lines = 2 * l2 / kLine;
  std::fprintf(stderr, "%s: %d SMs, L2 %lld B\n", prop.name, sms, l2);
  std::uint32_t* buf = nullptr;
  CK(cudaMalloc(&buf, buf_lines * kLine));
  unsigned* lat = nullptr;
  CK(cudaMalloc(&lat, sizeof(unsigned) * (16ll << 20) / kLine));
  int* claims = nullptr;  // fill_then_read's claims, flag and store target
  CK(cudaMalloc(&claims, 4 * sizeof(int)));
  std::uint32_t* sink = nullptr;
  CK(cudaMalloc(&sink, 4));
  uint4* fbuf = nullptr;
  CK(cudaMalloc(&fbuf, l2probe::kFlushBytes));
  CK(cudaMemset(fbuf, 0, l2probe::kFlushBytes));
  CK(cudaMemset(buf, 0, buf_lines * kLine));
  auto timed = [&](long long first_line, long long n, unsigned filler, unsigned reader) {
    return first_reads(buf + first_line * kWords, n, filler, reader, sms, claims, lat, fbuf, l2, sink);
  };

  // The SM ids present (%smid may skip numbers).
  std::vector<unsigned> ids;
  {
    unsigned* d_ids = nullptr;
    const int n = sms * 8;
    CK(cudaMalloc(&d_ids, sizeof(unsigned) * n));
    record_smid<<<n, 32>>>(d_ids);
    CK(cudaGetLastError());
    std::vector<unsigned> h(static_cast<size_t>(n));
    CK(cudaMemcpy(h.data(), d_ids, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end());
    h.erase(std::unique(h.begin(), h.end()), h.end());
    ids = h;
    std::fprintf(stderr, "%zu SM ids seen, %u to %u\n", ids.size(), ids.front(), ids.back());
  }
  constexpr int kMaxSm = 256;

  // 1. The halves: SM X = the first id fills 2048 lines from DRAM, each other SM s reads them once.
  //    Under "a line lives in its home half, and a far reader gets a copy in its own half", s in X's
  //    half finds every line near (home or X's copy), s in the other half about half of them (those
  //    homed there).
  constexpr long long kProbe = 2048;
  const double threshold = 375;  // between the near (~290) and far (~460) latencies
  const unsigned X = ids[0];
  std::vector<unsigned char> half(kMaxSm, 0);
  int in_half[2] = {0, 0};
  std::vector<double> near_share(kMaxSm, 1.0);
  for (const unsigned s : ids) {
    if (s == X) {
      ++in_half[0];
      continue;
    }
    const std::vector<unsigned> l = timed(0, kProbe, X, s);
    long long near = 0;
    for (long long i = 0; i < kProbe; ++i) near += l[i] < threshold;
    near_share[s] = static_cast<double>(near) / kProbe;
    half[s] = near_share[s] > 0.75 ? 0 : 1;
    ++in_half[half[s]];
    std::fprintf(stderr, "sm %u: %.3f of the lines SM %u filled are near -> half %d\n", s, near_share[s], X, half[s]);
  }
  std::fprintf(stderr, "SMs per half: %d %d\n", in_half[0], in_half[1]);
  if (in_half[1] == 0) {
    std::fprintf(stderr, "no second half found\n");
    return 1;
  }

  // 2. The homes: SM X fills 16 MiB at a time, SM Y of the other half reads it: near = homed in Y's
  //    half (1), far = homed in X's half (0).
  unsigned Y = X;
  for (const unsigned s : ids)
    if (half[s] == 1) {
      Y = s;
      break;
    }
  std::vector<unsigned char> home(static_cast<size_t>(buf_lines), 0);
  const long long chunk = (16ll << 20) / kLine;
  long long homed_y = 0;
  std::vector<unsigned> lat_hist;
  for (long long base = 0; base < buf_lines; base += chunk) {
    const long long n = std::min(chunk, buf_lines - base);
    const std::vector<unsigned> l = timed(base, n, X, Y);
    for (long long i = 0; i < n; ++i) {
      home[base + i] = l[i] < threshold ? 1 : 0;
      homed_y += l[i] < threshold;
    }
    if (base == 0) lat_hist = l;
  }
  std::vector<unsigned> sorted = lat_hist;
  std::sort(sorted.begin(), sorted.end());
  std::fprintf(stderr, "homes: %lld of %lld lines near for SM %u (half 1) after SM %u filled them; its first-read "
               "latency percentiles 5/25/50/75/95: %u %u %u %u %u\n",
               homed_y, buf_lines, Y, X, sorted[sorted.size() / 20], sorted[sorted.size() / 4],
               sorted[sorted.size() / 2], sorted[sorted.size() * 3 / 4], sorted[sorted.size() * 19 / 20]);
  std::vector<long long> homed[2];
  for (long long i = 0; i < buf_lines; ++i) homed[home[i]].push_back(i);

  // 3. Sweeps.
  const int per_half = std::max(in_half[0], in_half[1]) * 32;  // warps per half (one CTA of 32 warps per SM)
  std::vector<std::uint32_t> host_buf(static_cast<size_t>(buf_lines) * kWords, 0);
  Chain* d_chains = nullptr;
  CK(cudaMalloc(&d_chains, sizeof(Chain) * 2 * per_half));
  unsigned char* d_half = nullptr;
  CK(cudaMalloc(&d_half, kMaxSm));
  CK(cudaMemcpy(d_half, half.data(), kMaxSm, cudaMemcpyHostToDevice));
  unsigned* d_rank = nullptr;
  CK(cudaMalloc(&d_rank, 2 * sizeof(unsigned)));
  Rec* d_rec = nullptr;
  CK(cudaMalloc(&d_rec, sizeof(Rec) * 2 * per_half));
  std::printf("gpu,mode,working_set_mib,cold,warm,hit_fraction\n");
  for (const std::string mode : {"mixed", "own", "other", "cross"}) {
    std::vector<std::pair<double, std::pair<double, double>>> points;
    for (int k = -16; k <= 8; ++k) {
      const long long ws_lines = static_cast<long long>(std::llround(static_cast<double>(l2) * std::pow(2.0, k / 8.0) / kLine));
      // Lines per half's warps: own/other split the working set by the halves' SM counts; mixed and
      // cross take lines of both homes in address order.
      std::vector<std::vector<long long>> lines_of(2);
      bool ok = true;
      if (mode == "mixed" || mode == "cross") {
        // The first ws_lines lines; mixed: half h's warps take every line whose position is in its share.
        for (long long i = 0; i < ws_lines; ++i) {
          if (mode == "cross") {
            lines_of[0].push_back(i);
            lines_of[1].push_back(i);
          } else {
            lines_of[(i % (in_half[0] + in_half[1])) < in_half[0] ? 0 : 1].push_back(i);
          }
        }
      } else {
        for (int h = 0; h < 2; ++h) {
          const long long want = ws_lines * in_half[h] / (in_half[0] + in_half[1]);
          const auto& src = homed[mode == "own" ? h : 1 - h];
          if (want > static_cast<long long>(src.size())) ok = false;
          for (long long i = 0; i < std::min<long long>(want, src.size()); ++i) lines_of[h].push_back(src[i]);
        }
      }
      if (!ok) continue;
      // Chains: half h's warp r takes lines r, r + W_h, ... of lines_of[h], in a cycle.
      std::vector<Chain> chains(static_cast<size_t>(2) * per_half);
      std::fill(host_buf.begin(), host_buf.end(), 0u);
      for (int h = 0; h < 2; ++h) {
        const int warps = in_half[h] * 32;
        const auto& L = lines_of[h];
        for (int r = 0; r < warps; ++r) {
          std::vector<long long> mine;
          for (long long i = r; i < static_cast<long long>(L.size()); i += warps) mine.push_back(L[i]);
          if (mine.empty()) continue;
          for (size_t j = 0; j < mine.size(); ++j)
            host_buf[static_cast<size_t>(mine[j]) * kWords] = static_cast<std::uint32_t>(mine[(j + 1) % mine.size()]);
          chains[h * per_half + r] = {static_cast<unsigned>(mine[0]), static_cast<unsigned>(mine.size())};
        }
      }
      CK(cudaMemcpy(buf, host_buf.data(), host_buf.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(d_chains, chains.data(), sizeof(Chain) * chains.size(), cudaMemcpyHostToDevice));
      std::vector<double> cold, warm;
      for (int run = 0; run < kRuns; ++run) {
        CK(cudaMemset(d_rank, 0, 2 * sizeof(unsigned)));
        CK(cudaMemset(d_rec, 0, sizeof(Rec) * 2 * per_half));
        l2probe::flush(fbuf, l2, sms, sink);
        chase<<<sms, 1024>>>(buf, d_chains, per_half, d_half, d_rank, d_rec, sink);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<Rec> rec(static_cast<size_t>(2) * per_half);
        CK(cudaMemcpy(rec.data(), d_rec, sizeof(Rec) * rec.size(), cudaMemcpyDeviceToHost));
        const auto [c, w] = l2probe::per_load_medians(rec);
        cold.push_back(c);
        warm.push_back(w);
      }
      points.push_back({static_cast<double>(ws_lines * kLine) / (1 << 20), {median(cold), median(warm)}});
    }
    l2probe::print_points((std::string(prop.name) + "," + mode).c_str(), points);
  }
  return 0;
}
