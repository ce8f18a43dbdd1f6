// Merge probe: how close in time two SMs' reads of the same L2 line must be
// for the L2 to look the line up once. iosim merges an identical tile read
// that arrives within `l2.merge_window` cycles of a read lookup of it (no tag
// lookup: Nsight Compute's lts__t_sectors_srcunit_tex_op_read does not count
// it); the profiles' 32 cycles is an assumption. Here pairs of CTAs (one CTA
// per SM, so the two are on different SMs) read the same 128 B line, the
// second `delta` SM cycles after the first; Nsight Compute counts the L2
// lookups. Merged fraction = 1 - lookups / (2 x reads x 4 sectors).
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/merge_probe.cu -o merge_probe
//   ncu --clock-control none --cache-control all -k regex:pair_reads --launch-skip 1 \
//       --metrics lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,\
//   lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,gpu__time_duration.sum --csv --page raw ./merge_probe CONFIG...
//
// A CONFIG is delta:warm (cycles; warm 1 = the lines are read into L2 first by
// the pair's first CTA alone, well before the timed reads, so the timed reads
// hit; 0 = they miss and the pair meets a line still being filled). Start:
// the first CTA to arrive publishes a %globaltimer instant 20 us ahead; every
// CTA waits for it, and round r starts 10 us x r later. In each round the
// pair's first CTA reads line (r, pair) at once, the second after spinning
// `delta` clock64 cycles. One warp per CTA; each lane loads 4 B of the line
// with ld.global.cg, so one request of 4 sectors per read.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_check.h"

// The kernel, shared with iosim calibrate's merge probe.
#include "../../kernels/calibrate/merge_pairs_kernel.cuh"

namespace {

using iosim::merge_pairs::kRounds;
using iosim::merge_pairs::pair_reads;

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int pairs = prop.multiProcessorCount / 2;
  const std::size_t floats = static_cast<std::size_t>(kRounds) * pairs * 32;
  float* lines = nullptr;
  float* sink = nullptr;
  unsigned long long* start = nullptr;
  CK(cudaMalloc(&lines, floats * sizeof(float)));
  CK(cudaMalloc(&sink, 32 * sizeof(float)));
  CK(cudaMalloc(&start, sizeof(unsigned long long)));
  CK(cudaMemset(lines, 0, floats * sizeof(float)));
  std::printf("index,delta,warm,pairs,rounds,reads,sectors_if_unmerged\n");
  auto launch = [&](long long delta, int warm) {
    CK(cudaMemset(start, 0, sizeof(unsigned long long)));
    pair_reads<<<2 * pairs, 32>>>(lines, pairs, delta, warm, start, sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  };
  launch(0, 0);  // module load; ncu skips it
  for (int i = 1; i < argc; ++i) {
    long long delta = 0;
    int warm = 0;
    if (std::sscanf(argv[i], "%lld:%d", &delta, &warm) != 2 || delta < 0 || (warm != 0 && warm != 1)) {
      std::fprintf(stderr, "merge_probe: bad config '%s' (want delta:warm, delta >= 0 cycles, warm 0 or 1)\n", argv[i]);
      return 2;
    }
    launch(delta, warm);
    const long long reads = 2LL * pairs * kRounds;
    std::printf("%d,%lld,%d,%d,%d,%lld,%lld\n", i - 1, delta, warm, pairs, kRounds, reads, reads * 4);
  }
  CK(cudaFree(lines));
  CK(cudaFree(sink));
  CK(cudaFree(start));
  return 0;
}
