// Standard attention, forward and backward, as eager PyTorch runs it: each
// product is its own GEMM launch (standard_gemm.cu) with S, P, dP, dS in
// global memory in the data type, and a row-softmax kernel between them.
// Every launch takes its grid and shared memory from the schedules the
// simulator's trace walks (GemmSchedule, RowSoftmaxSchedule).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/cuda_check.h"
#include "kernels/common/dispatch.h"
#include "kernels/standard/elementwise.h"
#include "kernels/standard/launch_util.h"
#include "kernels/standard/standard.h"
#include "kernels/standard/standard_gemm.h"
#include "kernels/standard/standard_gemm_wgmma.h"
#include "kernels/standard/tensor_map.h"
#include "kernels/standard/tile_mma.cuh"
#include "sim/schedule/softmax_path.h"

namespace iosim::kernels {
namespace {

using detail::DTypeOps;
using detail::GemmLaunch;
using detail::TensorMap;
using u16 = std::uint16_t;

constexpr int kSoftmaxThreads = static_cast<int>(schedule::RowSoftmaxSchedule::kThreads);

// ---------------------------------------------------------------------------
// Row softmax kernels: kPerRow = threads_per_row() threads per row (a warp
// per row for short rows, the whole CTA for long ones), a compile-time column
// step so that the column loops unroll and keep several loads in flight. A
// thread reads back only the staged elements it wrote itself, so staging
// needs no barrier; a warp past the last row leaves (warp mode only: there
// the reductions never cross warps).

struct SoftmaxParams {
  schedule::RowSoftmaxSchedule s;
  schedule::AttentionTiles tiles;  // causal rule and block mask
  const void* in0;                 // forward: S; backward: P
  const void* in1;                 // backward: dP
  void* out;                       // forward: P; backward: dS
  float scale;
};

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// The row a thread works on, its offset in a [batch][heads][seq_q][pitch]
// matrix (schedule::score_row_pitch), the thread's first column and column step, and the row's staging
// area (operands x seq_k floats) in shared memory.
struct ThreadRow {
  i64 r = 0, offset = 0;
  int first = 0;
  float* stage = nullptr;
};

template <int kPerRow>
__device__ __forceinline__ ThreadRow thread_row(const schedule::RowSoftmaxSchedule& s, unsigned char* smem) {
  const int row_in_cta = static_cast<int>(threadIdx.x) / kPerRow;
  ThreadRow t;
  t.r = s.first_row(blockIdx.x) + row_in_cta;
  t.offset = ((static_cast<i64>(blockIdx.z) * s.shape.heads + blockIdx.y) * s.seq_q + t.r) * schedule::score_row_pitch(s.seq_k);
  t.first = static_cast<int>(threadIdx.x) % kPerRow;
  t.stage = reinterpret_cast<float*>(smem) + static_cast<i64>(row_in_cta) * s.operands * s.seq_k;
  return t;
}

// Reduces v over the threads of one row: a warp, or the whole CTA.
template <int kPerRow, class Op>
__device__ float row_reduce(float v, Op op, float* scratch) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  if constexpr (kPerRow == 32) return v;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) r = op(r, scratch[w]);
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

// Whether row r may attend to key column c (causal rule, then the block mask;
// the 64-bit divisions only when there is a mask).
__device__ __forceinline__ bool visible(const schedule::AttentionTiles& t, i64 r, i64 c, i64 key_end) {
  return c < key_end && (t.mask.active == nullptr || t.mask_allows(r / t.block_m, c / t.block_n));
}

// The 16-byte paths (rows that fit on chip, lengths a multiple of 8): a thread
// owns 16-byte chunks j = first, first + kPerRow, ... (8 columns each) and
// loads four of them before using any, so that four 16-byte loads are in
// flight (scalar 2-byte loads, each followed by its visibility test, kept one
// in flight: 0.40-0.44 of the copy bandwidth on the H100). Per element the
// work is what the arithmetic needs and no more: the softmax forward with
// every chunk's element tests and accurate expf ran at 56 thread instructions
// per element, issue-bound at 3.4 warp instructions per SM cycle and 0.7 of
// the copy bandwidth (Nsight Compute, H100, N = 2048). Column indices within
// a row are 32-bit (seq_k / 8 < 2^31).
constexpr int kVecChunksInFlight = 4;

template <class T>
__device__ __forceinline__ void unpack8(const uint4& raw, float (&x)[8]) {
  const std::uint32_t word[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = DTypeOps<T>::to_float(static_cast<u16>(word[k / 2] >> (16 * (k % 2))));
}

template <class T>
__device__ __forceinline__ uint4 pack8(const float4& a, const float4& b, float f) {
  return make_uint4(detail::pack2<T>(a.x * f, a.y * f), detail::pack2<T>(a.z * f, a.w * f),
                    detail::pack2<T>(b.x * f, b.y * f), detail::pack2<T>(b.z * f, b.w * f));
}

// The forward: t = log2(e) scale S, staged in shared memory as fp32 (two
// 16-byte stores per chunk) with its row maximum m; then 2^(t - m), summed;
// then P scaled by the sum's inverse, packed and written as 16-byte chunks.
// Only a chunk that a causal or ragged end, or a masked-out block, touches
// tests its elements (block_n is a multiple of 8: a chunk never straddles two
// mask blocks).
template <class T, int kPerRow>
__device__ __forceinline__ void softmax_row_vec16(const SoftmaxParams& p, const ThreadRow& w, i64 r, i64 key_end,
                                                  const u16* __restrict__ gS, u16* __restrict__ gP, float* scratch) {
  const float kNegInf = -INFINITY;
  const int chunks = static_cast<int>(p.s.seq_k / 8);
  const int end = static_cast<int>(key_end);  // key_end <= seq_k
  const float c = p.scale * 1.4426950408889634f;  // log2(e) scale
  // The staged row in two planes, each chunk's first four values in sLo4 and
  // its last four in sHi4: consecutive lanes touch consecutive 16-byte slots
  // (4 wavefronts per warp access). Interleaved (a chunk's 32 bytes
  // together), each access took 8 (Nsight Compute, 2026-11-27, H200:
  // experiments/results/2026-11-27-h200-source-counters).
  float4* sLo4 = reinterpret_cast<float4*>(w.stage);
  float4* sHi4 = sLo4 + chunks;
  const bool has_mask = p.tiles.mask.active != nullptr;
  const i64 row_block = has_mask ? r / p.tiles.block_m : 0;
  float mx = kNegInf;
  for (int j0 = w.first; j0 < chunks; j0 += kVecChunksInFlight * kPerRow) {
    uint4 raw[kVecChunksInFlight];
#pragma unroll
    for (int u = 0; u < kVecChunksInFlight; ++u) {
      const int j = j0 + u * kPerRow;
      raw[u] = j < chunks ? *reinterpret_cast<const uint4*>(gS + 8 * static_cast<i64>(j)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kVecChunksInFlight; ++u) {
      const int j = j0 + u * kPerRow;
      if (j >= chunks) break;
      float x[8];
      unpack8<T>(raw[u], x);
      const bool chunk_on = !has_mask || p.tiles.mask_allows(row_block, 8 * static_cast<i64>(j) / p.tiles.block_n);
      if (chunk_on && 8 * j + 8 <= end) {
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] *= c;
      } else {
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = chunk_on && 8 * j + k < end ? x[k] * c : kNegInf;
      }
#pragma unroll
      for (int k = 0; k < 8; ++k) mx = fmaxf(mx, x[k]);
      sLo4[j] = make_float4(x[0], x[1], x[2], x[3]);
      sHi4[j] = make_float4(x[4], x[5], x[6], x[7]);
    }
  }
  mx = row_reduce<kPerRow>(mx, MaxOp{}, scratch);
  const float m = mx == kNegInf ? 0.f : mx;  // a row with nothing visible: 2^-inf = 0 everywhere
  float sum = 0.f;
  for (int j0 = 0; j0 < chunks; j0 += kPerRow) {  // trip count uniform over the row's threads (see below)
    const int j = j0 + w.first;
    if (j >= chunks) break;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float4* plane = h == 0 ? sLo4 : sHi4;
      float4 v = plane[j];
      v = make_float4(dev::exp2_approx(v.x - m), dev::exp2_approx(v.y - m), dev::exp2_approx(v.z - m),
                      dev::exp2_approx(v.w - m));
      sum += (v.x + v.y) + (v.z + v.w);
      plane[j] = v;
    }
  }
  sum = row_reduce<kPerRow>(sum, SumOp{}, scratch);
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  // The loop's trip count is the same for every thread of the row: with
  // `j = first; j < chunks` the compiler unrolled it by 4 with a remainder
  // loop, and where chunks % kPerRow != 0 the threads past the row's last
  // chunk stored their part of each 512-byte block in separate instructions:
  // one sector in 16 written twice (N 1000: 7 store instructions and 66
  // sectors per row instead of 4 and 63, Nsight Compute, H100).
  for (int j0 = 0; j0 < chunks; j0 += kPerRow) {
    const int j = j0 + w.first;
    if (j < chunks) *reinterpret_cast<uint4*>(gP + 8 * static_cast<i64>(j)) = pack8<T>(sLo4[j], sHi4[j], inv);
  }
}

// The backward: P and dP chunks loaded four pairs at a time, dot = rowsum(P o
// dP), both staged in shared memory as they came (16 bytes each per chunk, in
// the fp32 staging area's first half); then dS = scale P (dP - dot) packed and
// written as 16-byte chunks.
template <class T, int kPerRow>
__device__ __forceinline__ void softmax_backward_row_vec16(const SoftmaxParams& p, const ThreadRow& w,
                                                           const u16* __restrict__ gP, const u16* __restrict__ gdP,
                                                           u16* __restrict__ gdS, float* scratch) {
  const int chunks = static_cast<int>(p.s.seq_k / 8);
  uint4* sP4 = reinterpret_cast<uint4*>(w.stage);
  uint4* sdP4 = sP4 + chunks;
  float dot = 0.f;
  for (int j0 = w.first; j0 < chunks; j0 += kVecChunksInFlight * kPerRow) {
    uint4 rp[kVecChunksInFlight], rd[kVecChunksInFlight];
#pragma unroll
    for (int u = 0; u < kVecChunksInFlight; ++u) {
      const int j = j0 + u * kPerRow;
      const bool in = j < chunks;
      rp[u] = in ? *reinterpret_cast<const uint4*>(gP + 8 * static_cast<i64>(j)) : make_uint4(0, 0, 0, 0);
      rd[u] = in ? *reinterpret_cast<const uint4*>(gdP + 8 * static_cast<i64>(j)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kVecChunksInFlight; ++u) {
      const int j = j0 + u * kPerRow;
      if (j >= chunks) break;
      float a[8], b[8];
      unpack8<T>(rp[u], a);
      unpack8<T>(rd[u], b);
#pragma unroll
      for (int k = 0; k < 8; ++k) dot = fmaf(a[k], b[k], dot);
      sP4[j] = rp[u];
      sdP4[j] = rd[u];
    }
  }
  dot = row_reduce<kPerRow>(dot, SumOp{}, scratch);
  for (int j0 = 0; j0 < chunks; j0 += kPerRow) {  // uniform trip count, as softmax_row_vec16's stores
    const int j = j0 + w.first;
    if (j < chunks) {
      float a[8], b[8];
      unpack8<T>(sP4[j], a);
      unpack8<T>(sdP4[j], b);
#pragma unroll
      for (int k = 0; k < 8; ++k) a[k] = p.scale * a[k] * (b[k] - dot);
      *reinterpret_cast<uint4*>(gdS + 8 * static_cast<i64>(j)) =
          pack8<T>(make_float4(a[0], a[1], a[2], a[3]), make_float4(a[4], a[5], a[6], a[7]), 1.f);
    }
  }
}

// P = softmax(scale * S) over the visible columns; 0 elsewhere and on rows with none.
template <class T, int kPerRow>
__global__ void __launch_bounds__(kSoftmaxThreads) softmax_forward_kernel(const SoftmaxParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ float scratch[kSoftmaxThreads / 32];
  const ThreadRow w = thread_row<kPerRow>(p.s, smem_raw);
  if (w.r >= p.s.seq_q) return;
  const i64 r = w.r, n = p.s.seq_k, key_end = p.tiles.key_end_for_row(r);
  const u16* __restrict__ gS = static_cast<const u16*>(p.in0) + w.offset;
  u16* __restrict__ gP = static_cast<u16*>(p.out) + w.offset;
  float* sRow = w.stage;
  const float kNegInf = -INFINITY;
  auto logit = [&](i64 c) {
    return visible(p.tiles, r, c, key_end) ? p.scale * DTypeOps<T>::to_float(gS[c]) : kNegInf;
  };

  if (schedule::softmax_forward_vectorised(p.s, p.tiles)) {  // 16-byte chunks, four in flight per thread
    softmax_row_vec16<T, kPerRow>(p, w, r, key_end, gS, gP, scratch);
    return;
  }
  if (p.s.row_fits_on_chip()) {  // one read of the row, staged in shared memory
    float mx = kNegInf;
    for (i64 c = w.first; c < n; c += kPerRow) {
      sRow[c] = logit(c);
      mx = fmaxf(mx, sRow[c]);
    }
    mx = row_reduce<kPerRow>(mx, MaxOp{}, scratch);
    float sum = 0.f;
    for (i64 c = w.first; c < n; c += kPerRow) {
      const float e = mx == kNegInf ? 0.f : expf(sRow[c] - mx);
      sRow[c] = e;
      sum += e;
    }
    sum = row_reduce<kPerRow>(sum, SumOp{}, scratch);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    for (i64 c = w.first; c < n; c += kPerRow) gP[c] = DTypeOps<T>::from_float(sRow[c] * inv);
    return;
  }
  // Statistics pass (online max and sum per lane, then combined), then output pass.
  float mx = kNegInf, sum = 0.f;
  for (i64 c = w.first; c < n; c += kPerRow) {
    const float x = logit(c);
    if (x == kNegInf) continue;
    if (x > mx) {
      sum = sum * expf(mx - x) + 1.f;  // exp(-inf) = 0 on the first visible column
      mx = x;
    } else {
      sum += expf(x - mx);
    }
  }
  const float row_max = row_reduce<kPerRow>(mx, MaxOp{}, scratch);
  const float row_sum = row_reduce<kPerRow>(mx == kNegInf ? 0.f : sum * expf(mx - row_max), SumOp{}, scratch);
  const float inv = row_sum > 0.f ? 1.f / row_sum : 0.f;
  for (i64 c = w.first; c < n; c += kPerRow) {
    const float x = logit(c);
    gP[c] = DTypeOps<T>::from_float(x == kNegInf ? 0.f : expf(x - row_max) * inv);
  }
}

// dS = scale * P o (dP - rowsum(dP o P)).
template <class T, int kPerRow>
__global__ void __launch_bounds__(kSoftmaxThreads) softmax_backward_kernel(const SoftmaxParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ float scratch[kSoftmaxThreads / 32];
  const ThreadRow w = thread_row<kPerRow>(p.s, smem_raw);
  if (w.r >= p.s.seq_q) return;
  const i64 n = p.s.seq_k;
  const u16* __restrict__ gP = static_cast<const u16*>(p.in0) + w.offset;
  const u16* __restrict__ gdP = static_cast<const u16*>(p.in1) + w.offset;
  u16* __restrict__ gdS = static_cast<u16*>(p.out) + w.offset;
  if (schedule::softmax_backward_vectorised(p.s)) {  // 16-byte chunks, four pairs in flight per thread
    softmax_backward_row_vec16<T, kPerRow>(p, w, gP, gdP, gdS, scratch);
    return;
  }
  const bool on_chip = p.s.row_fits_on_chip();
  float* sP = w.stage;
  float* sdP = sP + n;

  float dot = 0.f;
  for (i64 c = w.first; c < n; c += kPerRow) {
    const float pv = DTypeOps<T>::to_float(gP[c]), dpv = DTypeOps<T>::to_float(gdP[c]);
    if (on_chip) {
      sP[c] = pv;
      sdP[c] = dpv;
    }
    dot += pv * dpv;
  }
  dot = row_reduce<kPerRow>(dot, SumOp{}, scratch);
  for (i64 c = w.first; c < n; c += kPerRow) {
    const float pv = on_chip ? sP[c] : DTypeOps<T>::to_float(gP[c]);
    const float dpv = on_chip ? sdP[c] : DTypeOps<T>::to_float(gdP[c]);
    gdS[c] = DTypeOps<T>::from_float(p.scale * pv * (dpv - dot));
  }
}

template <class T, int kPerRow>
void run_softmax(const SoftmaxParams& p, bool backward, cudaStream_t stream) {
  const long long smem = p.s.sram_bytes();
  auto kernel = backward ? softmax_backward_kernel<T, kPerRow> : softmax_forward_kernel<T, kPerRow>;
  constexpr auto dtype = std::is_same_v<T, __half> ? workload::DType::fp16 : workload::DType::bf16;
  detail::prepare_launch(kernel, smem, p.s.grid(), dtype, backward ? "standard softmax backward" : "standard softmax");
  kernel<<<detail::to_dim3(p.s.grid()), kSoftmaxThreads, smem, stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

// The compiled row widths: a warp per row, or the whole CTA (threads_per_row()).
using RowWidths = dispatch::List<dispatch::Int<32>, dispatch::Int<kSoftmaxThreads>>;

void launch_softmax(const SoftmaxParams& p, workload::DType dtype, bool backward, cudaStream_t stream) {
  if (p.s.seq_q <= 0 || p.s.seq_k <= 0) return;
  const bool launched = dispatch::find(std::array<i64, 1>{p.s.threads_per_row()}, RowWidths{}, [&](auto per_row) {
    using PerRow = decltype(per_row);
    dispatch::element_type(dtype, [&](auto elem) { run_softmax<decltype(elem), PerRow::value>(p, backward, stream); });
  });
  if (!launched)
    throw std::logic_error("standard softmax: no kernel for " + std::to_string(p.s.threads_per_row()) +
                           " threads per row");
}

// Launches the plan's kernels in order: each GEMM with its operands, each
// row softmax with its schedule and mask, each elementwise kernel
// (standard-eager) with its tensors.
void run_plan(const AttentionConfig& c, const schedule::Plan& plan, const TensorMap& tensors, cudaStream_t stream) {
  using schedule::KernelKind;
  using schedule::TensorId;
  const auto ptr = [&](TensorId t) { return tensors.at(t); };
  for (const schedule::KernelPlan& k : plan.kernels) {
    switch (k.kind) {
      case KernelKind::gemm:
      case KernelKind::gemm_wgmma: {  // the plan names the kernel (GemmImpl::wgmma where TMA reads the rows)
        const auto& g = k.as<schedule::GemmPlan>();
        detail::launch_gemm(GemmLaunch{g.s, g.z_heads, tensors.operand(g.a), tensors.operand(g.b), tensors.output(g.c),
                                       c.problem.dtype,
                                       k.kind == KernelKind::gemm_wgmma ? GemmImpl::wgmma : GemmImpl::mma},
                            stream);
        break;
      }
      case KernelKind::softmax_fwd:
      case KernelKind::softmax_bwd: {
        const auto& sp = k.as<schedule::SoftmaxPlan>();
        const bool backward = k.kind == KernelKind::softmax_bwd;
        launch_softmax(
            {sp.s, sp.tiles, ptr(backward ? TensorId::P : TensorId::S), backward ? ptr(TensorId::dP) : nullptr,
             const_cast<void*>(ptr(backward ? TensorId::dS : TensorId::P)), sp.applies_scale ? c.scale() : 1.f},
            c.problem.dtype, backward, stream);
        break;
      }
      case KernelKind::elementwise: {
        const auto& e = k.as<schedule::ElementwisePlan>();
        detail::ElementwiseLaunch l{e, {}, {}, c.scale(), DropoutRule{c.dropout_p, c.dropout_seed}, c.problem.dtype};
        for (int i = 0; i < e.inputs; ++i) l.in[static_cast<size_t>(i)] = ptr(e.in[static_cast<size_t>(i)]);
        for (int i = 0; i < e.outputs; ++i)
          l.out[static_cast<size_t>(i)] = const_cast<void*>(ptr(e.out[static_cast<size_t>(i)]));
        detail::launch_elementwise(l, stream);
        break;
      }
      default: throw std::logic_error("standard attention: unexpected kernel " + k.name);
    }
    if (c.after_launch) c.after_launch(k);
  }
}

void validate(const AttentionConfig& c, const std::string& algo) {
  validate_config(c, algo);
  const auto& t = c.gemm_tiles;
  if (c.gemm_impl == GemmImpl::wgmma) {
    // The wgmma kernel is compiled in every menu (the mma.sync tile list does
    // not bound it); a GEMM it cannot read falls back to mma.sync, which then
    // needs this tile in the mma menu (the full menu has it).
    if (t.tile_m != detail::kWgmmaTileM || t.tile_n != detail::kWgmmaTileN || t.tile_k != detail::kWgmmaTileK)
      throw InputError(algo + ": --gemm-impl wgmma has GEMM tile 128x128x64 only (got " + std::to_string(t.tile_m) +
                       "x" + std::to_string(t.tile_n) + "x" + std::to_string(t.tile_k) + "); use --gemm-impl mma");
    if (const int cc = launch_limits().compute_capability; cc != 90)
      throw InputError(algo + ": --gemm-impl wgmma needs an sm_90 (Hopper) GPU; this device is sm_" +
                       std::to_string(cc) + " (valid here: --gemm-impl mma)");
  } else if (!detail::gemm_tiles_compiled(t.tile_m, t.tile_n, t.tile_k)) {
    throw NotCompiled(algo + ": GEMM tile " + std::to_string(t.tile_m) + "x" + std::to_string(t.tile_n) + "x" +
                      std::to_string(t.tile_k) +
                      " is not compiled; compiled: " + detail::join(standard_compiled_menu()));
  }
  if (c.d_block_mask != nullptr && (c.block_m <= 0 || c.block_n <= 0))
    throw InputError(algo + ": a block mask needs positive block_m/block_n (its block grid)");
}

i64 device_sram_limit() { return launch_limits().smem_per_block_optin; }

}  // namespace

std::vector<std::string> standard_compiled_menu() {
  std::vector<std::string> out;
  for (const auto& tile : detail::gemm_tile_menu())
    for (const char* dt : {"fp16", "bf16"}) out.push_back("tile " + tile + " " + dt);
  return out;
}

namespace {

using schedule::TensorId;

bool eager_masked(const AttentionConfig& c) { return c.problem.causal || c.d_block_mask != nullptr; }

using NamedTensors = std::vector<std::pair<TensorId, const void*>>;

// A pass's tensors, each checked non-null; standard-eager adds Pd, Z and,
// when causal or block-sparse, the mask buffer.
TensorMap checked_tensors(const AttentionConfig& c, NamedTensors named, bool eager, const void* pd, const void* z,
                          const void* mask, const std::string& algo) {
  if (eager) named.insert(named.end(), {{TensorId::Pd, pd}, {TensorId::Z, z}});
  if (eager && eager_masked(c)) named.emplace_back(TensorId::Mask, mask);
  TensorMap t = detail::tensor_map(c.problem);
  for (const auto& [id, ptr] : named) {
    detail::require_pointer(ptr, algo, std::string(schedule::tensor_name(id)));
    t.set(id, ptr);
  }
  return t;
}

TensorMap forward_tensors(const AttentionConfig& c, const ForwardBuffers& b, bool eager, const std::string& algo) {
  return checked_tensors(c,
                         {{TensorId::Q, b.q},
                          {TensorId::K, b.k},
                          {TensorId::V, b.v},
                          {TensorId::O, b.o},
                          {TensorId::S, b.s},
                          {TensorId::P, b.p}},
                         eager, b.pd, b.z, b.mask, algo);
}

TensorMap backward_tensors(const AttentionConfig& c, const BackwardBuffers& b, bool eager, const std::string& algo) {
  return checked_tensors(c,
                         {{TensorId::Q, b.q}, {TensorId::K, b.k}, {TensorId::V, b.v}, {TensorId::dO, b.d_o},
                          {TensorId::P, b.p}, {TensorId::dQ, b.dq}, {TensorId::dK, b.dk}, {TensorId::dV, b.dv},
                          {TensorId::dP, b.dp}, {TensorId::dS, b.ds}},
                         eager, b.pd, b.z, b.mask, algo);
}

void validate_eager(const AttentionConfig& c, const std::string& algo) {
  validate(c, algo);
  if (!(c.dropout_p >= 0.0 && c.dropout_p < 1.0))
    throw InputError(algo + ": dropout probability " + std::to_string(c.dropout_p) + " is outside [0, 1)");
}

}  // namespace

void standard_forward_with_limit(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream,
                                 i64 softmax_sram_limit_bytes) {
  const std::string algo = "standard forward";
  validate(c, algo);
  run_plan(c, c.plan(workload::Algorithm::standard, workload::Pass::fwd, softmax_sram_limit_bytes),
           forward_tensors(c, b, false, algo), stream);
}

void standard_backward_with_limit(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream,
                                  i64 softmax_sram_limit_bytes) {
  const std::string algo = "standard backward";
  validate(c, algo);
  run_plan(c, c.plan(workload::Algorithm::standard, workload::Pass::bwd, softmax_sram_limit_bytes),
           backward_tensors(c, b, false, algo), stream);
}

// Input checks come before the device query, so a bad configuration is
// reported as such even where no device is usable.
void standard_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream) {
  validate(c, "standard forward");
  standard_forward_with_limit(c, b, stream, device_sram_limit());
}

void standard_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream) {
  validate(c, "standard backward");
  standard_backward_with_limit(c, b, stream, device_sram_limit());
}

void standard_eager_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream) {
  const std::string algo = "standard-eager forward";
  validate_eager(c, algo);
  const TensorMap tensors = forward_tensors(c, b, true, algo);
  run_plan(c, c.plan(workload::Algorithm::standard_eager, workload::Pass::fwd, device_sram_limit()), tensors, stream);
}

void standard_eager_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream) {
  const std::string algo = "standard-eager backward";
  validate_eager(c, algo);
  const TensorMap tensors = backward_tensors(c, b, true, algo);
  run_plan(c, c.plan(workload::Algorithm::standard_eager, workload::Pass::bwd, device_sram_limit()), tensors, stream);
}

void standard_eager_fill_mask(const AttentionConfig& c, std::uint8_t* mask, cudaStream_t stream) {
  validate(c, "standard-eager mask");
  detail::require_pointer(mask, "standard-eager mask", "mask");
  detail::fill_visibility_mask(c.tiles(), mask, stream);
}

}  // namespace iosim::kernels
