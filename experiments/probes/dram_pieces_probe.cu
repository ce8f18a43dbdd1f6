// DRAM pieces probe: the bandwidth DRAM gives reads of short contiguous pieces
// far apart, against a stream.
//
// Why (issue 9): the long-K products of standard attention read P (N x N) in
// tile_k-deep chunks: 64 bytes of each of 128 rows 10 KB apart per step, the
// next 64 bytes of the same rows a step later. They run at 0.65-0.70 of the
// model's time, which charges every DRAM byte at the streaming rate. FA2's
// row kernels read and write 128-byte rows of O, dO and dQ 2 KiB apart (bshd
// layout) and reach 2-3.5 TB/s where a copy reaches 3.9. If DRAM serves
// short scattered pieces slower than a stream, the model needs that rate.
//
// Every SM runs 2 CTAs of 1024 threads; a thread has 4 independent 16-byte
// loads in flight (a grid-stride loop unrolled by 4), so a stream reaches
// DRAM's rate. The grid reads 16 bytes at a time of the pieces: element i (16 B) is byte (i * 16) % PIECE of piece
// (i * 16) / PIECE, at piece * STRIDE. Pieces are visited in order, so
// consecutive lanes read consecutive bytes of a piece, then the next piece.
// Each launch reads 1 GiB of pieces that no launch before touched since a
// flush of 4x the L2, so every byte comes from DRAM once. Time by CUDA events
// (median of 5 launches): bytes / time. Writes (`store`) likewise.
//
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/dram_pieces_probe.cu -o dram_pieces_probe
//   ./dram_pieces_probe > pieces.csv
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "probe_check.h"
#include "probe_flush.cuh"

namespace {

constexpr int kThreads = 1024;
constexpr int kUnroll = 4;  // independent loads in flight per thread
constexpr long long kBytes = 1ll << 30;  // per launch

__device__ __forceinline__ long long piece_offset(long long i, int piece, long long stride) {
  const long long byte = i * 16;
  return byte / piece * stride + byte % piece;
}

__global__ void __launch_bounds__(kThreads) read_pieces(const char* __restrict__ base, long long elems, int piece,
                                                         long long stride, float* __restrict__ sink) {
  float acc = 0;
  const long long step = static_cast<long long>(gridDim.x) * kThreads;
  for (long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; i < elems; i += kUnroll * step) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      v[u] = i + u * step < elems ? __ldcg(reinterpret_cast<const float4*>(base + piece_offset(i + u * step, piece, stride)))
                                  : make_float4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += v[u].x + v[u].w;
  }
  if (acc == 12345.f) sink[0] = acc;
}

__global__ void __launch_bounds__(kThreads) write_pieces(char* __restrict__ base, long long elems, int piece,
                                                          long long stride) {
  for (long long i = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x; i < elems;
       i += static_cast<long long>(gridDim.x) * kThreads)
    __stcg(reinterpret_cast<float4*>(base + piece_offset(i, piece, stride)), make_float4(1, 2, 3, 4));
}


}  // namespace

int main() {
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const long long flush_bytes = 4ll * prop.l2CacheSize;
  // The largest span: 1 GiB of 32-byte pieces 16 KiB apart = 512 GiB: too much. Spans are capped by
  // choosing, per (piece, stride), how many launches' worth fits: each launch reads its own pieces.
  const long long span_cap = 24ll << 30;  // bytes of address span a launch may cover
  char* buf = nullptr;
  CK(cudaMalloc(&buf, span_cap + flush_bytes));
  CK(cudaMemset(buf, 0, span_cap + flush_bytes));
  float* sink = nullptr;
  CK(cudaMalloc(&sink, sizeof(float)));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  std::printf("# device: %s, %d SMs, L2 %d B; 2 CTAs x %d threads per SM, 16 B per access, %d reads in flight per thread, %lld B per launch\n",
              prop.name, sms, prop.l2CacheSize, kThreads, kUnroll, kBytes);
  std::printf("op,piece_bytes,stride_bytes,bytes,median_ms,gb_per_s\n");
  const int pieces[] = {32, 64, 128, 256, 512, 2048, 8192};
  const long long strides[] = {2048, 10240};
  const int grid = 2 * sms;
  // Median of 5 timed launches, each after a flush: reads (op 0) or writes of
  // `bytes` in pieces of `piece` bytes `stride` apart.
  auto median_ms = [&](int op, long long bytes, int piece, long long stride) {
    std::vector<float> ms;
    for (int rep = 0; rep < 5; ++rep) {
      flush_l2<<<grid, 512>>>(reinterpret_cast<const float4*>(buf + span_cap), flush_bytes / 16, sink);
      CK(cudaGetLastError());
      CK(cudaEventRecord(t0));
      if (op == 0)
        read_pieces<<<grid, kThreads>>>(buf, bytes / 16, piece, stride, sink);
      else
        write_pieces<<<grid, kThreads>>>(buf, bytes / 16, piece, stride);
      CK(cudaGetLastError());
      CK(cudaEventRecord(t1));
      CK(cudaEventSynchronize(t1));
      float m = 0;
      CK(cudaEventElapsedTime(&m, t0, t1));
      ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    return static_cast<double>(ms[ms.size() / 2]);
  };
  for (int op = 0; op < 2; ++op)
    for (long long stride : strides)
      for (int piece : pieces) {
        if (piece > stride) continue;
        long long bytes = kBytes;
        while (bytes / piece * stride > span_cap) bytes /= 2;
        const double med = median_ms(op, bytes, piece, stride);
        std::printf("%s,%d,%lld,%lld,%.4f,%.1f\n", op == 0 ? "read" : "write", piece, stride, bytes, med,
                    static_cast<double>(bytes) / (med * 1e-3) / 1e9);
      }
  // The stream: pieces = stride (contiguous), for reference.
  for (int op = 0; op < 2; ++op) {
    const double med = median_ms(op, kBytes, 4096, 4096);
    std::printf("%s,stream,stream,%lld,%.4f,%.1f\n", op == 0 ? "read" : "write", kBytes, med,
                static_cast<double>(kBytes) / (med * 1e-3) / 1e9);
  }
  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  CK(cudaFree(buf));
  CK(cudaFree(sink));
  return 0;
}
