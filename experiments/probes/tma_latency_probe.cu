// TMA latency probe: how long a TMA box load takes from issue to its
// mbarrier's completion, alone and under load, for the boxes the wgmma GEMM
// (kernels/standard/sm90a) and FA3 load. Why: with at most one CTA per SM the
// wgmma GEMM's dV / dK run 1.6x longer than the model says (about 950 cycles
// per chunk against 520), its consumers waiting on the next stage's data
// (experiments/validation/README.md, "The wgmma GEMM's grid"); the model's
// loads take the latency calibrate measures for ld.global. Each of K CTAs
// (one per SM: the shared memory request leaves room for one) has one thread
// that keeps S box loads in flight, a ring of S stages: it waits for box i
// and issues box i + S into its stage at once. Per CTA, clock64 cycles per box
// T; with S in flight the latency one box sees is S x T while the loads, not
// the bandwidth, bound the ring.
//
// Two patterns, fp16 boxes of 64 columns (128 B) x 128 rows (16 KB):
//   contiguous: a [rows][64] tensor: each box is 16 KB of consecutive bytes
//               (FA3's K / V of one head at d = 64 in bhsd; a k-contiguous
//               GEMM chunk of 128 rows);
//   strided:    a [rows][5000] tensor (rows 10,000 B apart): each box row is a
//               128-byte piece, CTA c walking down column strip c mod 78, as
//               dV = P^T dO reads P at N = 5000 (experiments/validation/grid-wgmma.txt).
// Every box is read once (no L2 reuse: the L2 is flushed by a 512 MiB read
// first, and the boxes of a launch are distinct).
//
//   nvcc -O3 -std=c++17 -I. -gencode arch=compute_90a,code=sm_90a experiments/probes/tma_latency_probe.cu -o tma_latency_probe
//   ./tma_latency_probe > tma.csv        (CTAS="1 40 80 132" STAGES="1 2 3 4 8" to choose the rows)
//
// Output (CSV): pattern, ctas, stages, boxes per CTA, mean cycles per box per
// CTA, implied latency (stages x that), bytes per cycle per SM, total TB/s
// (bytes over the launch's %globaltimer span), SM clock MHz (clock64 over
// %globaltimer, CTA 0).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/probes/probe_check.h"
#include "kernels/common/tma_encode.h"
#include "kernels/fa3/fa3_hopper.cuh"

namespace {

namespace hw = iosim::kernels::hopper;

constexpr int kMaxStages = 8;
constexpr int kBoxCols = 64, kBoxRows = 128;
constexpr int kBoxBytes = kBoxCols * kBoxRows * 2;
constexpr int kBoxes = 256;          // per CTA
constexpr int kStridedCols = 5000;   // elements per row of the strided tensor
constexpr int kStrips = kStridedCols / kBoxCols;  // 78 whole column strips
// Enough shared memory that one CTA fits on an SM (the H200's opt-in maximum is 227 KB).
constexpr int kSmemBytes = 200 * 1024;

struct Out {
  long long cycles;
  unsigned long long start_ns, end_ns;
};

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Box i of CTA c: contiguous, rows (c + ctas i) x 128 (neighbouring CTAs read
// neighbouring boxes, as the GEMM's CTAs do); strided, column strip c mod 78
// from row block (c / 78) x kBoxes + i.
__device__ void box_of(bool strided, int c, int ctas, int i, int& col, int& row) {
  if (strided) {
    col = (c % kStrips) * kBoxCols;
    row = ((c / kStrips) * kBoxes + i) * kBoxRows;
  } else {
    col = 0;
    row = (c + ctas * i) * kBoxRows;
  }
}

__global__ void tma_ring(const __grid_constant__ CUtensorMap map, bool strided, int stages, Out* out) {
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  std::uint8_t* smem = smem_raw + ((1024 - (hw::smem_addr(smem_raw) & 1023)) & 1023);
  auto* full = reinterpret_cast<std::uint64_t*>(smem + kMaxStages * kBoxBytes);
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) hw::mbar_init(&full[s], 1);
  hw::mbar_init_fence();
  const int c = static_cast<int>(blockIdx.x), ctas = static_cast<int>(gridDim.x);
  auto issue = [&](int i) {
    const int s = i % stages;
    int col, row;
    box_of(strided, c, ctas, i, col, row);
    hw::mbar_arrive_expect_tx(&full[s], kBoxBytes);
    hw::tma_load_4d(smem + s * kBoxBytes, &map, &full[s], col, row, 0, 0);
  };
  const unsigned long long t0_ns = global_ns();
  const long long t0 = clock64();
  for (int i = 0; i < stages && i < kBoxes; ++i) issue(i);
  for (int i = 0; i < kBoxes; ++i) {
    hw::mbar_wait(&full[i % stages], static_cast<std::uint32_t>((i / stages) & 1));
    if (i + stages < kBoxes) issue(i + stages);
  }
  const long long t1 = clock64();
  out[c] = {t1 - t0, t0_ns, global_ns()};
}

__global__ void flush_l2(const int4* buf, std::size_t n, int* sink) {
  int acc = 0;
  for (std::size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) acc ^= buf[k].x;
  if (acc == 0x7fffffff) *sink = acc;
}

CUtensorMap make_map(void* base, std::uint64_t rows, std::uint64_t cols) {
  const cuuint64_t dims[4] = {cols, rows, 1, 1};
  const cuuint64_t strides[3] = {cols * 2, cols * 2 * rows, cols * 2 * rows};
  const cuuint32_t box[4] = {kBoxCols, kBoxRows, 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult r = iosim::kernels::encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, base, dims, strides, box,
                                                     elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d)\n", static_cast<int>(r));
    std::exit(1);
  }
  return map;
}

std::vector<int> list_from_env(const char* name, std::vector<int> fallback) {
  const char* v = std::getenv(name);
  if (!v) return fallback;
  std::vector<int> out;
  std::istringstream in(v);
  for (int x; in >> x;) out.push_back(x);
  return out;
}

}  // namespace

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaFuncSetAttribute(tma_ring, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  // Contiguous: up to 132 x 256 boxes of 16 KB (553 MB); strided: 2 row blocks of
  // 256 x 128 rows of 10,000 B (655 MB).
  const std::uint64_t contig_rows = static_cast<std::uint64_t>(sms) * kBoxes * kBoxRows;
  const std::uint64_t strided_rows = 2ull * kBoxes * kBoxRows;
  void *contig = nullptr, *strided = nullptr;
  CK(cudaMalloc(&contig, contig_rows * kBoxCols * 2));
  CK(cudaMalloc(&strided, strided_rows * kStridedCols * 2));
  CK(cudaMemset(contig, 1, contig_rows * kBoxCols * 2));
  CK(cudaMemset(strided, 1, strided_rows * kStridedCols * 2));
  const std::size_t flush_bytes = 512u << 20;
  int4* flush = nullptr;
  int* sink = nullptr;
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&sink, sizeof(int)));
  CK(cudaMemset(flush, 0, flush_bytes));
  Out* d_out = nullptr;
  CK(cudaMalloc(&d_out, sizeof(Out) * sms));
  const CUtensorMap map_contig = make_map(contig, contig_rows, kBoxCols);
  const CUtensorMap map_strided = make_map(strided, strided_rows, kStridedCols);
  std::printf("# %s, %d SMs\n", prop.name, sms);
  std::printf("pattern,ctas,stages,boxes,cycles_per_box,implied_latency_cycles,bytes_per_cycle_per_sm,total_tbps,clock_mhz\n");
  for (const bool is_strided : {false, true})
    for (const int ctas : list_from_env("CTAS", {1, 8, 40, 80, 132}))
      for (const int stages : list_from_env("STAGES", {1, 2, 3, 4, 8})) {
        if (ctas > sms || stages > kMaxStages || (is_strided && ctas > 2 * kStrips)) continue;
        std::vector<Out> h(static_cast<std::size_t>(ctas));
        for (int rep = 0; rep < 2; ++rep) {  // the second launch is reported
          flush_l2<<<sms * 4, 256>>>(flush, flush_bytes / sizeof(int4), sink);
          CK(cudaGetLastError());
          tma_ring<<<ctas, 32, kSmemBytes>>>(is_strided ? map_strided : map_contig, is_strided, stages, d_out);
          CK(cudaGetLastError());
          CK(cudaDeviceSynchronize());
        }
        CK(cudaMemcpy(h.data(), d_out, sizeof(Out) * ctas, cudaMemcpyDeviceToHost));
        double cycles = 0;
        unsigned long long start = ~0ull, end = 0;
        for (const Out& o : h) {
          cycles += static_cast<double>(o.cycles);
          start = std::min(start, o.start_ns);
          end = std::max(end, o.end_ns);
        }
        const double per_box = cycles / ctas / kBoxes;
        const double bytes = static_cast<double>(ctas) * kBoxes * kBoxBytes;
        const double mhz = static_cast<double>(h[0].cycles) / static_cast<double>(h[0].end_ns - h[0].start_ns) * 1e3;
        std::printf("%s,%d,%d,%d,%.1f,%.0f,%.2f,%.3f,%.0f\n", is_strided ? "strided" : "contiguous", ctas, stages,
                    kBoxes, per_box, per_box * stages, kBoxBytes / per_box, bytes / static_cast<double>(end - start) / 1e3,
                    mhz);
      }
  return 0;
}
