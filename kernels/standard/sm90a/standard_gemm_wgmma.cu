// Standard attention's batched GEMM on Hopper's asynchronous units (issue 11):
// the mma.sync kernel (standard_gemm.cu) tops out near 340 TFLOP/s; cuBLAS
// uses wgmma. Compiled for sm_90a alone (kernels/CMakeLists.txt, object
// library iosim_standard_sm90a), as kernels/fa3 is.
//
// Same schedule, same bytes: the grid and each CTA's output tiles are
// GemmSchedule's (cta(): tiles_per_cta consecutive n tiles in turn); per
// tile, per k group g, per 64-deep chunk, A's and B's chunk are read once by
// TMA (the box is the chunk; parts outside the operand are zero-filled by the
// TMA unit without being read); C is written once in the data type.
//
// CTA: 288 threads = two consumer warpgroups (threads 0-255; warpgroup w owns
// rows 64w..64w+63 of the 128-row tile) and one producer warp (one thread
// issues the TMA loads). Three stages of A and B chunks (32 KB each) on
// full/empty mbarriers: two CTAs fit on an SM (96 KB of shared memory, at
// most 112 registers), so one CTA's prologue and epilogue overlap the other's
// products; that matters for the one-chunk products (S = Q K^T at d = 64).
//
// Operand layouts in shared memory (128-byte swizzle, 1024-byte-aligned):
//   k-contiguous A or B: [128 rows][64 k], one TMA box {64, 128}; K-major
//     descriptors, +32 bytes per k16 step (fa3_forward.cuh's Q and K);
//   n-contiguous B / m-contiguous A: [64 k][64 outer] twice (two boxes
//     {64, 64}, the 64-column halves 8 KB apart); MN-major descriptors with
//     LBO = 8 KB, +2048 bytes per k16 step (FA3's V), imm-trans = 1.
// C: straight from the accumulators; the four lanes of a row exchange
// columns (three shuffles per 16 bytes) so that each holds 8 consecutive
// ones and they cover 64 contiguous bytes in one 16-byte-per-lane store:
// whole sectors, one store instruction each, no staging buffer (the stages
// take the shared memory that two CTAs per SM leave).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_info.h"
#include "kernels/common/dispatch.h"
#include "kernels/common/tma_encode.h"
#include "kernels/fa3/fa3_hopper.cuh"
#include "kernels/fa3/fa3_wgmma.cuh"
#include "kernels/standard/launch_util.h"
#include "kernels/standard/standard_gemm_wgmma.h"
#include "kernels/standard/tile_mma.cuh"

namespace iosim::kernels::detail {
namespace {

namespace hw = hopper;

constexpr int kTM = static_cast<int>(kWgmmaTileM), kTN = static_cast<int>(kWgmmaTileN);
constexpr int kTK = static_cast<int>(kWgmmaTileK);
// The shape the plan launches and the simulator times (schedule::WgmmaGemmShape).
using Shape = schedule::WgmmaGemmShape;
constexpr int kStages = static_cast<int>(Shape::kStages);
constexpr int kConsumerWarps = static_cast<int>(Shape::kConsumerWarps);
constexpr int kConsumerThreads = 32 * kConsumerWarps, kThreads = static_cast<int>(Shape::kThreads);
constexpr int kHalfBytes = 64 * 64 * 2;             // one [64][64] swizzled box
constexpr int kABytes = kTM * kTK * 2, kBBytes = kTN * kTK * 2;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kBarrierBytes = 2 * kStages * 8;
// The dynamic shared memory: the stages, the barriers, and 1 KB of slack to
// align the stages to the swizzle's 1024-byte period.
constexpr int kSmemBytes = kStages * kStageBytes + kBarrierBytes + 1024;
static_assert(kSmemBytes == Shape::kSmemBytes && kStageBytes == Shape::kStageBytes, "the plan's shared memory");
static_assert(kThreads == kConsumerThreads + 32, "one producer warp");
static_assert(kTK * 2 == 128, "a chunk row is one 128-byte swizzle row");
static_assert(kTM == 128 && kTN == 128, "two m64n128 warpgroups per 128 x 128 tile");
static_assert(kABytes == 2 * kHalfBytes && kBBytes == 2 * kHalfBytes, "MN-major chunks are two 64-column halves");

struct WgmmaGemmParams {
  CUtensorMap map_a, map_b;  // 4-D {contiguous, other, head, batch}
  schedule::GemmSchedule s;
  int z_heads;
  int a_head_mul, a_head_div, b_head_mul, b_head_div;
  GemmOutput c;
};

struct Barriers {
  std::uint64_t full[kStages];
  std::uint64_t empty[kStages];
};

// The producer thread: every step's A and B chunks, in the consumers' order.
template <bool A_KC, bool B_KC>
__device__ __forceinline__ void produce(const WgmmaGemmParams& p, std::uint8_t* smem, Barriers* bars, int bz,
                                        int hz, int m_tile, int n_tile, int tiles) {
  hw::tma_prefetch_descriptor(&p.map_a);
  hw::tma_prefetch_descriptor(&p.map_b);
  const int chunks = static_cast<int>(p.s.k_chunks()), groups = static_cast<int>(p.s.k_groups);
  const int m0 = m_tile * kTM;
  // An MN-major chunk's second 64-wide half that lies wholly past the
  // operand's extent (n = d = 64 against the 128-wide tile) is not loaded:
  // Nsight Compute counted its zero fill as crossbar bytes (1.40x the
  // trace's reads at d = 64). The stale half only feeds C's rows or columns
  // past the extent, which are never stored.
  const bool a_second_half = A_KC || m0 + 64 < p.s.m;
  int stage = 0;
  std::uint32_t phase = 0;
  for (int t = 0; t < tiles; ++t) {
    const int n0 = (n_tile + t) * kTN;
    const bool b_second_half = B_KC || n0 + 64 < p.s.n;
    const std::uint32_t bytes = kStageBytes - (a_second_half ? 0 : kHalfBytes) - (b_second_half ? 0 : kHalfBytes);
    for (int g = 0; g < groups; ++g) {
      const int ha = (hz * p.a_head_mul + g) / p.a_head_div, hb = (hz * p.b_head_mul + g) / p.b_head_div;
      for (int kc = 0; kc < chunks; ++kc) {
        const int k0 = kc * kTK;
        hw::mbar_wait(&bars->empty[stage], phase ^ 1);
        std::uint64_t* full = &bars->full[stage];
        hw::mbar_arrive_expect_tx(full, bytes);  // out-of-bounds parts of a loaded box count too
        std::uint8_t* sa = smem + stage * kStageBytes;
        std::uint8_t* sb = sa + kABytes;
        if constexpr (A_KC) {
          hw::tma_load_4d(sa, &p.map_a, full, k0, m0, ha, bz);
        } else {
          hw::tma_load_4d(sa, &p.map_a, full, m0, k0, ha, bz);
          if (a_second_half) hw::tma_load_4d(sa + kHalfBytes, &p.map_a, full, m0 + 64, k0, ha, bz);
        }
        if constexpr (B_KC) {
          hw::tma_load_4d(sb, &p.map_b, full, k0, n0, hb, bz);
        } else {
          hw::tma_load_4d(sb, &p.map_b, full, n0, k0, hb, bz);
          if (b_second_half) hw::tma_load_4d(sb + kHalfBytes, &p.map_b, full, n0 + 64, k0, hb, bz);
        }
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
  }
}

// One chunk's products for warpgroup wg: four m64n128k16 wgmmas, one group.
template <bool BF16, bool A_KC, bool B_KC>
__device__ __forceinline__ void chunk_mma(float (&acc)[64], std::uint32_t sa, std::uint32_t sb, int wg, bool first) {
  hw::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kTK / 16; ++kk) {
    const std::uint64_t da = A_KC ? hw::desc_sw128(sa + wg * 64 * 128 + kk * 32, 0)
                                  : hw::desc_sw128(sa + wg * kHalfBytes + kk * 16 * 128, kHalfBytes);
    const std::uint64_t db =
        B_KC ? hw::desc_sw128(sb + kk * 32, 0) : hw::desc_sw128(sb + kk * 16 * 128, kHalfBytes);
    hw::wgmma_ss_m64n128k16<BF16, A_KC ? 0 : 1, B_KC ? 0 : 1>(acc, da, db, first && kk == 0 ? 0 : 1);
  }
  hw::wgmma_commit();
}

template <class T>
__device__ __forceinline__ std::uint32_t pack2(float a, float b) {
  return static_cast<std::uint32_t>(DTypeOps<T>::from_float(a)) |
         (static_cast<std::uint32_t>(DTypeOps<T>::from_float(b)) << 16);
}

// Warpgroup wg's 64 x 128 accumulator into C (gc: the tile's first element;
// rows, cols: the tile's valid extent). Accumulator layout (fa3_wgmma.cuh):
// warp w4 holds rows 16 w4 + g and + 8 (g = lane / 4), and for each n8 chunk
// j, columns 8j + 2c, + 1 (c = lane % 4) in acc[4j..4j+1] (row g) and
// acc[4j+2..4j+3] (row g + 8). Two lane exchanges per 32 columns (xor 1:
// 4-column runs; xor 2: 8-column runs) leave lane c with columns 8c..8c+7 of
// them: one 16-byte store per lane, the row's 64 bytes in one instruction.
template <class T>
__device__ __forceinline__ void store_c(const float (&acc)[64], std::uint16_t* gc, i64 ldc, int rows, int cols, int wg,
                                        int lane, int warp_in_wg) {
  const bool odd = (lane & 1) != 0, high = (lane & 2) != 0;
  const int row0 = wg * 64 + warp_in_wg * 16 + (lane >> 2);
  // Columns 4-run of chunk pair (j, j + 1) after the xor-1 exchange: even
  // lanes hold 2c..2c+3 of chunk j, odd lanes 2(c - 1)..+3 of chunk j + 1.
  const auto run4 = [&](int j, int h) {
    const std::uint32_t x0 = pack2<T>(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    const std::uint32_t x1 = pack2<T>(acc[4 * j + 4 + 2 * h], acc[4 * j + 5 + 2 * h]);
    const std::uint32_t recv = __shfl_xor_sync(0xffffffffu, odd ? x0 : x1, 1);
    return odd ? make_uint2(recv, x1) : make_uint2(x0, recv);
  };
#pragma unroll
  for (int j = 0; j < 16; j += 4) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint2 a = run4(j, h), b = run4(j + 2, h);
      // Lanes 0, 1 keep a (columns 0-3, 8-11) and take lanes 2, 3's a
      // (4-7, 12-15); lanes 2, 3 take lanes 0, 1's b (16-19, 24-27) and keep
      // b (20-23, 28-31).
      const uint2 send = high ? a : b;
      const uint2 recv = make_uint2(__shfl_xor_sync(0xffffffffu, send.x, 2), __shfl_xor_sync(0xffffffffu, send.y, 2));
      const uint4 v = high ? make_uint4(recv.x, recv.y, b.x, b.y) : make_uint4(a.x, a.y, recv.x, recv.y);
      const int r = row0 + 8 * h, col = 8 * j + 8 * (lane & 3);
      if (r >= rows || col >= cols) continue;
      std::uint16_t* dst = gc + static_cast<i64>(r) * ldc + col;
      if (col + 8 <= cols) {
        __stcs(reinterpret_cast<uint4*>(dst), v);
      } else {
        // 1..7 columns left (constant indices: no local-memory array)
        const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 7; ++e)
          if (col + e < cols) dst[e] = static_cast<std::uint16_t>(w[e / 2] >> (16 * (e % 2)));
      }
    }
  }
}

template <class T, bool A_KC, bool B_KC>
__device__ __forceinline__ void consume(const WgmmaGemmParams& p, std::uint8_t* smem, Barriers* bars, int bz, int hz,
                                        int m_tile, int n_tile, int tiles) {
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128, lane = tid % 32, warp_in_wg = (tid / 32) % 4;
  const int steps = static_cast<int>(p.s.steps_per_tile());
  const int rows = static_cast<int>(p.s.rows_in(m_tile));
  const std::uint32_t base = hw::smem_addr(smem);
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;
  int stage = 0;
  std::uint32_t phase = 0;
  for (int t = 0; t < tiles; ++t) {
    // Chunk step's wgmmas are issued before step - 1's are waited for (one
    // group in flight across the barrier wait); a stage is released once the
    // group that read it is done: one arrival per warp.
    int prev = -1;
    for (int step = 0; step < steps; ++step) {
      hw::mbar_wait(&bars->full[stage], phase);
      const std::uint32_t sa = base + static_cast<std::uint32_t>(stage * kStageBytes);
      chunk_mma<kBf16, A_KC, B_KC>(acc, sa, sa + kABytes, wg, step == 0);
      hw::wgmma_wait<1>();
      if (prev >= 0) {
        __syncwarp();
        if (lane == 0) hw::mbar_arrive(&bars->empty[prev]);
      }
      prev = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    hw::wgmma_wait<0>();
    hw::fence_operands(acc);
    __syncwarp();
    if (lane == 0) hw::mbar_arrive(&bars->empty[prev]);
    const int nt = n_tile + t;
    std::uint16_t* gc = static_cast<std::uint16_t*>(p.c.ptr) + bz * p.c.batch_stride + hz * p.c.head_stride +
                        static_cast<i64>(m_tile) * kTM * p.c.row_stride + static_cast<i64>(nt) * kTN;
    store_c<T>(acc, gc, p.c.row_stride, rows, static_cast<int>(p.s.cols_in(nt)), wg, lane, warp_in_wg);
  }
}

template <class T, bool A_KC, bool B_KC>
__global__ void __launch_bounds__(kThreads, Shape::kMinCtasPerSm) wgmma_gemm_kernel(const __grid_constant__ WgmmaGemmParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) std::uint8_t wgmma_smem_raw[];
  std::uint8_t* smem = wgmma_smem_raw + ((1024 - (hw::smem_addr(wgmma_smem_raw) & 1023)) & 1023);
  auto* bars = reinterpret_cast<Barriers*>(smem + kStages * kStageBytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      hw::mbar_init(&bars->full[s], 1);
      hw::mbar_init(&bars->empty[s], kConsumerWarps);
    }
    hw::mbar_init_fence();
  }
  __syncthreads();
  const auto cta = p.s.cta(blockIdx.x, blockIdx.y, blockIdx.z);
  const int bz = static_cast<int>(cta.batch / p.z_heads), hz = static_cast<int>(cta.batch % p.z_heads);
  const int m_tile = static_cast<int>(cta.m_tile), n_tile = static_cast<int>(cta.n_tile);
  const int tiles = static_cast<int>(cta.tiles);
  if (threadIdx.x >= kConsumerThreads) {
    if (threadIdx.x == kConsumerThreads) produce<A_KC, B_KC>(p, smem, bars, bz, hz, m_tile, n_tile, tiles);
    return;
  }
  consume<T, A_KC, B_KC>(p, smem, bars, bz, hz, m_tile, n_tile, tiles);
#endif
}

// ---------------------------------------------------------------------------
// Host side.

// The number of heads an operand's head index reaches: (hz * mul + g) / div
// for hz < z_heads, g < k_groups.
i64 operand_heads(const GemmOperand& o, i64 z_heads, i64 k_groups) {
  return ((z_heads - 1) * o.head_mul + (k_groups - 1)) / o.head_div + 1;
}

bool tma_strides_ok(const GemmOperand& o, i64 heads, i64 batch) {
  const auto ok = [](i64 stride, i64 extent) { return extent == 1 || (stride > 0 && stride % 8 == 0); };
  return reinterpret_cast<std::uintptr_t>(o.ptr) % 16 == 0 && o.outer_stride > 0 && o.outer_stride % 8 == 0 &&
         ok(o.head_stride, heads) && ok(o.batch_stride, batch);
}

// A 4-D map {contiguous, other, head, batch} over operand o (outer extent
// `outer`: m for A, n for B), read in boxes of one chunk: {64 k, 128 outer}
// when k is contiguous, else {64 outer, 64 k}.
CUtensorMap operand_map(PFN_cuTensorMapEncodeTiled_v12000 encode, const GemmOperand& o, i64 outer, i64 k, i64 heads,
                        i64 batch, workload::DType t, const char* what) {
  // A dimension of extent 1 is never stepped; any legal stride will do.
  const auto stride = [](i64 s, i64 extent, i64 fallback) { return extent == 1 ? fallback : s; };
  const i64 row_bytes = o.outer_stride * 2;
  const i64 head_bytes = stride(o.head_stride * 2, heads, row_bytes);
  const i64 batch_bytes = stride(o.batch_stride * 2, batch, head_bytes);
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(o.k_contiguous ? k : outer),
                              static_cast<cuuint64_t>(o.k_contiguous ? outer : k), static_cast<cuuint64_t>(heads),
                              static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(row_bytes), static_cast<cuuint64_t>(head_bytes),
                                 static_cast<cuuint64_t>(batch_bytes)};
  const cuuint32_t box[4] = {64, o.k_contiguous ? 128u : 64u, 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult r = encode(&map, t == workload::DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                            4, const_cast<void*>(o.ptr), dims, strides, box, elem_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string("standard GEMM (wgmma): cuTensorMapEncodeTiled failed for ") + what +
                             " (CUresult " + std::to_string(static_cast<int>(r)) + ")");
  return map;
}

template <class T, bool A_KC, bool B_KC>
void run(const WgmmaGemmParams& p, cudaStream_t stream) {
  auto* kernel = &wgmma_gemm_kernel<T, A_KC, B_KC>;
  constexpr auto dtype = std::is_same_v<T, __half> ? workload::DType::fp16 : workload::DType::bf16;
  prepare_launch(kernel, kSmemBytes, p.s.grid(), dtype, "standard GEMM (wgmma) 128x128x64");
  kernel<<<to_dim3(p.s.grid()), kThreads, kSmemBytes, stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

template <bool A_KC, bool B_KC>
struct Orientation {
  static constexpr bool a_kc = A_KC, b_kc = B_KC;
  static constexpr std::array<i64, 2> key{A_KC, B_KC};
};
// The plan's three orientations (standard_gemm.cu's Orientations).
using Orientations = dispatch::List<Orientation<true, true>, Orientation<true, false>, Orientation<false, false>>;

}  // namespace

std::string wgmma_gemm_unsupported(const GemmLaunch& g) {
  const auto& s = g.s;
  if (s.tile_m != kWgmmaTileM || s.tile_n != kWgmmaTileN || s.tile_k != kWgmmaTileK)
    return "tile " + std::to_string(s.tile_m) + "x" + std::to_string(s.tile_n) + "x" + std::to_string(s.tile_k) +
           " (the wgmma kernel has 128x128x64 only)";
  if (!g.a.k_contiguous && g.b.k_contiguous) return "orientation A m-contiguous, B k-contiguous is not compiled";
  if (s.m >= (i64{1} << 31) || s.n >= (i64{1} << 31) || s.k >= (i64{1} << 31)) return "extents of 2^31 or more";
  const i64 batch = s.batches / g.z_heads;
  if (!tma_strides_ok(g.a, operand_heads(g.a, g.z_heads, s.k_groups), batch))
    return "operand A is not 16-byte aligned (TMA)";
  if (!tma_strides_ok(g.b, operand_heads(g.b, g.z_heads, s.k_groups), batch))
    return "operand B is not 16-byte aligned (TMA)";
  if (!aligned16(g.c.ptr) || g.c.batch_stride % 8 != 0 || g.c.head_stride % 8 != 0 || g.c.row_stride % 8 != 0)
    return "C rows are not 16-byte aligned";
  return {};
}

void launch_gemm_wgmma(const GemmLaunch& g, cudaStream_t stream) {
  if (const std::string why = wgmma_gemm_unsupported(g); !why.empty())
    throw std::logic_error("standard GEMM (wgmma): " + why);
  const auto& s = g.s;
  const i64 batch = s.batches / g.z_heads;
  const auto encode = encode_tiled();
  WgmmaGemmParams p{};
  p.map_a = operand_map(encode, g.a, s.m, s.k, operand_heads(g.a, g.z_heads, s.k_groups), batch, g.dtype, "A");
  p.map_b = operand_map(encode, g.b, s.n, s.k, operand_heads(g.b, g.z_heads, s.k_groups), batch, g.dtype, "B");
  p.s = s;
  p.z_heads = static_cast<int>(g.z_heads);
  p.a_head_mul = static_cast<int>(g.a.head_mul);
  p.a_head_div = static_cast<int>(g.a.head_div);
  p.b_head_mul = static_cast<int>(g.b.head_mul);
  p.b_head_div = static_cast<int>(g.b.head_div);
  p.c = g.c;
  const bool found = dispatch::find(std::array<i64, 2>{g.a.k_contiguous, g.b.k_contiguous}, Orientations{}, [&](auto o) {
    using O = decltype(o);
    dispatch::element_type(g.dtype, [&](auto elem) { run<decltype(elem), O::a_kc, O::b_kc>(p, stream); });
  });
  if (!found) throw std::logic_error("standard GEMM (wgmma): orientation not compiled");
}

}  // namespace iosim::kernels::detail
