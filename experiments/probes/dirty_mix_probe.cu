// Dirty-mix probe: how much of an output written during a kernel is still
// dirty in L2 at its end, when the kernel also reads. FlashAttention's
// forward writes O a tile at a time while K and V stream through the L2;
// on both GPUs it ends with 8-14 MB of O dirty where iosim's L2 keeps
// 13-21 MB (experiments/validation/*/grid.csv, FA2/FA3 forward rows). The
// write-back probe wrote alone (nothing read): up to 24 MiB stays dirty at
// any pace. Here every CTA alternates: read its next chunk of `in`, write its
// next chunk of `out`, so W bytes are written evenly over the kernel while R
// bytes are read. Reads are either fresh (a stream from DRAM: new lines
// allocated in L2) or hot (the same H bytes over and over: L2 hits, nothing
// allocated after the first pass).
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/dirty_mix_probe.cu -o dirty_mix_probe
//   ncu --clock-control none --cache-control all -k regex:write_while_reading \
//       --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum --csv --page raw \
//       ./dirty_mix_probe W_MIB R_MIB MODE [STEPS [ORDER]]
//
// MODE fresh: R MiB read once, a new line every time; MODE hot: R MiB read in
// total from a hot set of 8 MiB (read once by the kernel before, in its first
// pass, so its lines are resident). One wave: 4 CTAs of 256 threads per SM.
// Each thread moves 16 B per load or store; a CTA's chunk per step is
// contiguous whole lines, and the CTAs' chunks of one step are adjacent (a
// stream). 16 steps by default. ORDER mixed (default): each step reads its
// chunk, then writes its chunk; reads-first: all the reads, then all the
// writes; writes-first: the writes, then the reads.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "probe_check.h"

namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kHotBytes = 8 * kMiB;

// read_per_step, write_per_step: 16-byte vectors a CTA reads and writes per
// step (whole 128-byte lines).
__global__ void __launch_bounds__(kThreads) write_while_reading(const uint4* __restrict__ in,
                                                                std::size_t read_per_step, bool hot,
                                                                uint4* __restrict__ out,
                                                                std::size_t write_per_step, int steps, int order,
                                                                unsigned* __restrict__ sink) {
  const std::size_t ctas = gridDim.x;
  unsigned acc = 0;
  if (hot) {  // bring the hot set in: every CTA its share
    const std::size_t hot_vecs = kHotBytes / sizeof(uint4), share = hot_vecs / ctas;
    for (std::size_t i = threadIdx.x; i < share; i += kThreads) acc ^= __ldcg(in + blockIdx.x * share + i).x;
  }
  // order 0: each step reads, then writes; 1: every step's reads, then every
  // step's writes; 2: the writes first, then the reads.
  for (int phase = 0; phase < (order == 0 ? 1 : 2); ++phase)
    for (int s = 0; s < steps; ++s) {
      const std::size_t chunk = static_cast<std::size_t>(s) * ctas + blockIdx.x;
      const bool reads = order == 0 || (order == 1) == (phase == 0);
      const bool writes = order == 0 || !reads;
      if (reads)
        for (std::size_t i = threadIdx.x; i < read_per_step; i += kThreads) {
          std::size_t v = chunk * read_per_step + i;
          if (hot) v %= kHotBytes / sizeof(uint4);
          const uint4 x = __ldcg(in + v);
          acc ^= x.x ^ x.y ^ x.z ^ x.w;
        }
      if (writes)
        for (std::size_t i = threadIdx.x; i < write_per_step; i += kThreads)
          __stcg(out + chunk * write_per_step + i, make_uint4(acc, s, static_cast<unsigned>(i), blockIdx.x));
    }
  if (acc == 0x9e3779b9u) sink[0] = acc;  // keeps the loads
}

// Reads `vecs` 16-byte vectors (PREP_MIB): run before each launch, it fills the
// L2 with clean lines, so that whatever was dirty there is written back first.
__global__ void __launch_bounds__(kThreads) prep_read(const uint4* __restrict__ p, std::size_t vecs,
                                                      unsigned* __restrict__ sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < vecs;
       i += static_cast<std::size_t>(gridDim.x) * kThreads)
    acc ^= __ldcg(p + i).x;
  if (acc == 0x9e3779b9u) sink[1] = acc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || (std::strcmp(argv[3], "fresh") != 0 && std::strcmp(argv[3], "hot") != 0)) {
    std::fprintf(stderr, "usage: %s W_MIB R_MIB fresh|hot [STEPS [mixed|reads-first|writes-first]]\n", argv[0]);
    return 2;
  }
  const std::size_t w = std::strtoull(argv[1], nullptr, 10) * kMiB, r = std::strtoull(argv[2], nullptr, 10) * kMiB;
  const bool hot = std::strcmp(argv[3], "hot") == 0;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 16;
  const char* order_name = argc > 5 ? argv[5] : "mixed";
  const int order = std::strcmp(order_name, "reads-first") == 0 ? 1 : std::strcmp(order_name, "writes-first") == 0 ? 2 : 0;
  if (order == 0 && std::strcmp(order_name, "mixed") != 0) {
    std::fprintf(stderr, "order '%s': mixed, reads-first or writes-first\n", order_name);
    return 2;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int ctas = 4 * sms;
  // Per CTA and step, whole lines (8 vectors); what is moved in all is printed.
  const std::size_t slots = static_cast<std::size_t>(ctas) * steps;
  const std::size_t read_per_step = r / sizeof(uint4) / slots / 8 * 8, write_per_step = w / sizeof(uint4) / slots / 8 * 8;
  const std::size_t in_bytes = hot ? kHotBytes : std::max<std::size_t>(r, 16);
  uint4 *in = nullptr, *out = nullptr;
  unsigned* sink = nullptr;
  CK(cudaMalloc(&in, in_bytes));
  CK(cudaMalloc(&out, w));
  CK(cudaMalloc(&sink, 64));
  // NO_INIT=1: the buffers are not written before the launches (so no line of
  // them is dirty from a memset when the kernel starts).
  if (std::getenv("NO_INIT") == nullptr) {
    CK(cudaMemset(in, 1, in_bytes));
    CK(cudaMemset(out, 0, w));
  }
  // PREP_MIB=M: before each launch, read M MiB of a scratch buffer (ncu
  // --cache-control none then measures the kernel after an L2 of clean lines).
  const std::size_t prep = std::getenv("PREP_MIB") ? std::strtoull(std::getenv("PREP_MIB"), nullptr, 10) * kMiB : 0;
  uint4* scratch = nullptr;
  if (prep > 0) CK(cudaMalloc(&scratch, prep));
  // One warm-up launch (the profiled one is the second: ncu --launch-skip 1).
  for (int k = 0; k < 2; ++k) {
    if (prep > 0) {
      prep_read<<<4 * sms, kThreads>>>(scratch, prep / sizeof(uint4), sink);
      CK(cudaGetLastError());
    }
    write_while_reading<<<ctas, kThreads>>>(in, read_per_step, hot, out, write_per_step, steps, order, sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  std::printf("written %zu read %zu mode %s steps %d ctas %d order %s\n", slots * write_per_step * sizeof(uint4),
              slots * read_per_step * sizeof(uint4), hot ? "hot" : "fresh", steps, ctas, order_name);
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(sink));
  if (scratch != nullptr) CK(cudaFree(scratch));
  return 0;
}
