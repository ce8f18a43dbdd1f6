// standard-eager's elementwise kernels (elementwise.h). A CTA of 128 threads
// takes the RowElementwiseSchedule's rows (4 rows up to 1024 columns, else
// 1): rows * seq_k elements per tensor, numbered as one span and placed in
// rows of schedule::score_row_pitch elements (the padding is never touched;
// where pitch != seq_k a precomputed multiply-shift division finds each
// element's row). With seq_k % 8 == 0 each thread moves 8 elements at a time
// (16 bytes of the data type, 8 of a byte tensor; rows start on 32-byte
// sectors), four such vectors loaded before any is used (in-place kernels
// alias input and output, so the compiler would not batch the loads itself);
// other widths take one element at a time. Each element is read once per
// input and written once per output: the trace's bytes. Dropout draws by the
// element's unpadded index, as the reference does.
#include "kernels/standard/elementwise.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/common/cuda_check.h"
#include "kernels/common/dispatch.h"
#include "kernels/standard/launch_util.h"
#include "kernels/standard/tile_mma.cuh"
#include "sim/schedule/score_layout.h"

namespace iosim::kernels::detail {
namespace {

using schedule::ElementwiseOp;
using u16 = std::uint16_t;
using u8 = std::uint8_t;

constexpr int kThreads = static_cast<int>(schedule::RowElementwiseSchedule::kThreads);
constexpr int kVec = 8;     // elements per vector
constexpr int kUnroll = 4;  // vectors in flight per thread

// n / d and n % d for 0 <= n, d < 2^31 by a multiply and a shift (the
// divisor's magic number computed once on the host; CUTLASS's FastDivmod
// rule): a vector's row costs two IMADs and a shift, not a division.
struct U32Divmod {
  std::uint32_t d = 1, mul = 0, shift = 0;
  static U32Divmod of(std::uint32_t d) {
    U32Divmod r;
    r.d = d;
    std::uint32_t log2 = 0;
    while ((std::uint64_t{1} << log2) < d) ++log2;
    const std::uint64_t p = 31 + log2;
    r.mul = static_cast<std::uint32_t>(((std::uint64_t{1} << p) + d - 1) / d);
    r.shift = static_cast<std::uint32_t>(p - 32);
    return r;
  }
  __device__ __forceinline__ std::uint32_t div(std::uint32_t n) const {
    return d == 1 ? n : __umulhi(n, mul) >> shift;
  }
};

struct ElementwiseParams {
  schedule::RowElementwiseSchedule s;
  i64 pitch;                // schedule::score_row_pitch(seq_k)
  bool padded;              // pitch != seq_k
  U32Divmod units_per_row;  // vectors (vector path) or elements per row, where padded
  const u16* in0;
  const u8* in1;  // Mask (one copy for all heads) or Z; null when the op has one input
  u16* out0;
  u8* out1;  // Z (dropout)
  float scale;
  float keep_scale;
  std::uint32_t threshold;
  std::uint64_t seed;
  bool vec;  // seq_k % 8 == 0 and 16-byte aligned tensors
};

constexpr bool reads_byte_tensor(ElementwiseOp op) {
  return op != ElementwiseOp::scale && op != ElementwiseOp::dropout;
}

// One element: x (in0's bits), m (in1's byte), keep (dropout's draw) -> out0's bits.
template <class T, ElementwiseOp OP>
__device__ __forceinline__ u16 apply(u16 x, u8 m, bool keep, const ElementwiseParams& p) {
  using Ops = DTypeOps<T>;
  if constexpr (OP == ElementwiseOp::scale) return Ops::from_float(p.scale * Ops::to_float(x));
  if constexpr (OP == ElementwiseOp::mask_fill) return m ? x : Ops::from_float(-INFINITY);
  if constexpr (OP == ElementwiseOp::mask_zero) return m ? x : u16{0};
  if constexpr (OP == ElementwiseOp::dropout) return keep ? Ops::from_float(p.keep_scale * Ops::to_float(x)) : u16{0};
  if constexpr (OP == ElementwiseOp::dropout_bwd) return m ? Ops::from_float(p.keep_scale * Ops::to_float(x)) : u16{0};
  return x;
}

// Dropout's draws of elements e0 .. e0 + 7 (e0 % 8 == 0): two Philox calls.
__device__ __forceinline__ void keep8(std::int64_t e0, const ElementwiseParams& p, bool (&keep)[kVec]) {
  const Philox4 a = philox4x32_10(static_cast<std::uint64_t>(e0) / 4, p.seed);
  const Philox4 b = philox4x32_10(static_cast<std::uint64_t>(e0) / 4 + 1, p.seed);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    keep[j] = DropoutRule::kept(a.v[j], p.threshold);
    keep[4 + j] = DropoutRule::kept(b.v[j], p.threshold);
  }
}

// Where unit i (an element, or a vector of `per_unit` elements) of the CTA's
// span lies in its padded rows, in elements from the CTA's first row.
__device__ __forceinline__ i64 placed(const ElementwiseParams& p, i64 i, int per_unit) {
  if (!p.padded) return i * per_unit;
  const std::uint32_t row = p.units_per_row.div(static_cast<std::uint32_t>(i));
  return static_cast<i64>(row) * p.pitch + (i - static_cast<i64>(row) * p.units_per_row.d) * per_unit;
}

template <class T, ElementwiseOp OP>
__global__ void __launch_bounds__(kThreads) elementwise_kernel(const ElementwiseParams p) {
  const auto& s = p.s;
  const i64 r0 = s.first_row(blockIdx.x), count = s.rows_in(blockIdx.x) * s.seq_k;
  const i64 head_row0 = (static_cast<i64>(blockIdx.z) * s.shape.heads + blockIdx.y) * s.seq_q + r0;
  const i64 base = head_row0 * s.seq_k;  // unpadded index of the CTA's first element: dropout's draws
  const i64 at = head_row0 * p.pitch;    // where it lies
  const u16* in0 = p.in0 + at;
  const u8* in1 = p.in1 == nullptr ? nullptr : p.in1 + (OP == ElementwiseOp::dropout_bwd ? at : r0 * p.pitch);
  u16* out0 = p.out0 + at;
  u8* out1 = p.out1 == nullptr ? nullptr : p.out1 + at;
  const int tid = static_cast<int>(threadIdx.x);

  if (!p.vec) {
    for (i64 i = tid; i < count; i += kThreads) {
      bool keep = false;
      if constexpr (OP == ElementwiseOp::dropout) {
        const std::uint64_t e = static_cast<std::uint64_t>(base + i);
        keep = DropoutRule::kept(philox4x32_10(e / 4, p.seed).v[e % 4], p.threshold);
      }
      const i64 o = placed(p, i, 1);
      out0[o] = apply<T, OP>(in0[o], reads_byte_tensor(OP) ? in1[o] : u8{1}, keep, p);
      if constexpr (OP == ElementwiseOp::dropout) out1[o] = keep;
    }
    return;
  }
  const i64 vectors = count / kVec;
  for (i64 v0 = tid; v0 < vectors; v0 += kUnroll * kThreads) {
    uint4 x[kUnroll];
    uint2 m[kUnroll];
    i64 o[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 v = v0 + u * kThreads;
      if (v < vectors) {
        o[u] = placed(p, v, kVec);
        x[u] = *reinterpret_cast<const uint4*>(in0 + o[u]);
        if constexpr (reads_byte_tensor(OP)) m[u] = *reinterpret_cast<const uint2*>(in1 + o[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 v = v0 + u * kThreads;
      if (v >= vectors) break;
      u16 xs[kVec];
      u8 ms[kVec];
      bool keep[kVec] = {};
      *reinterpret_cast<uint4*>(xs) = x[u];
      if constexpr (reads_byte_tensor(OP)) *reinterpret_cast<uint2*>(ms) = m[u];
      if constexpr (OP == ElementwiseOp::dropout) keep8(base + v * kVec, p, keep);
#pragma unroll
      for (int j = 0; j < kVec; ++j) xs[j] = apply<T, OP>(xs[j], reads_byte_tensor(OP) ? ms[j] : u8{1}, keep[j], p);
      *reinterpret_cast<uint4*>(out0 + o[u]) = *reinterpret_cast<const uint4*>(xs);
      if constexpr (OP == ElementwiseOp::dropout) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) ms[j] = keep[j];
        *reinterpret_cast<uint2*>(out1 + o[u]) = *reinterpret_cast<const uint2*>(ms);
      }
    }
  }
}

template <class T, ElementwiseOp OP>
void run(const ElementwiseParams& p, workload::DType dtype, const std::string& name, cudaStream_t stream) {
  auto kernel = elementwise_kernel<T, OP>;
  prepare_launch(kernel, 0, p.s.grid(), dtype, name);
  kernel<<<to_dim3(p.s.grid()), kThreads, 0, stream>>>(p);
  IOSIM_CUDA_CHECK_LAUNCH();
}

template <class T>
void run_op(const ElementwiseParams& p, ElementwiseOp op, workload::DType dtype, cudaStream_t stream) {
  const std::string name = "standard-eager elementwise";
  switch (op) {
    case ElementwiseOp::scale:
      return run<T, ElementwiseOp::scale>(p, dtype, name, stream);
    case ElementwiseOp::mask_fill:
      return run<T, ElementwiseOp::mask_fill>(p, dtype, name, stream);
    case ElementwiseOp::mask_zero:
      return run<T, ElementwiseOp::mask_zero>(p, dtype, name, stream);
    case ElementwiseOp::dropout:
      return run<T, ElementwiseOp::dropout>(p, dtype, name, stream);
    case ElementwiseOp::dropout_bwd:
      return run<T, ElementwiseOp::dropout_bwd>(p, dtype, name, stream);
  }
}

__global__ void visibility_kernel(const schedule::AttentionTiles t, u8* mask) {
  const i64 n = t.seq_q * t.seq_k, pitch = schedule::score_row_pitch(t.seq_k);
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 r = i / t.seq_k, c = i % t.seq_k;
    mask[r * pitch + c] =
        c < t.key_end_for_row(r) && (t.mask.active == nullptr || t.mask_allows(r / t.block_m, c / t.block_n));
  }
}

}  // namespace

void launch_elementwise(const ElementwiseLaunch& l, cudaStream_t stream) {
  const auto& s = l.e.s;
  if (s.seq_q <= 0 || s.seq_k <= 0) return;
  if (!(l.dropout.p >= 0.0 && l.dropout.p < 1.0))
    throw InputError("standard-eager: dropout probability " + std::to_string(l.dropout.p) + " is outside [0, 1)");
  const bool byte_in = l.e.inputs > 1, byte_out = l.e.outputs > 1;
  ElementwiseParams p{s,
                      schedule::score_row_pitch(s.seq_k),
                      schedule::score_row_pitch(s.seq_k) != s.seq_k,
                      {},
                      static_cast<const u16*>(l.in[0]),
                      byte_in ? static_cast<const u8*>(l.in[1]) : nullptr,
                      static_cast<u16*>(l.out[0]),
                      byte_out ? static_cast<u8*>(l.out[1]) : nullptr,
                      l.scale,
                      l.dropout.keep_scale(),
                      l.dropout.threshold(),
                      l.dropout.seed,
                      false};
  p.vec = s.seq_k % kVec == 0 && aligned16(p.in0) && aligned16(p.out0) && (!byte_in || aligned16(p.in1)) &&
          (!byte_out || aligned16(p.out1));
  if (s.seq_k >= (i64{1} << 31))
    throw InputError("standard-eager: " + std::to_string(s.seq_k) + " keys per row; the elementwise kernels take < 2^31");
  if (p.padded) p.units_per_row = U32Divmod::of(static_cast<std::uint32_t>(p.vec ? s.seq_k / kVec : s.seq_k));
  dispatch::element_type(l.dtype, [&](auto elem) { run_op<decltype(elem)>(p, l.e.op, l.dtype, stream); });
}

void fill_visibility_mask(const schedule::AttentionTiles& tiles, std::uint8_t* mask, cudaStream_t stream) {
  const i64 n = tiles.seq_q * tiles.seq_k;
  if (n <= 0) return;
  const int blocks = static_cast<int>(std::min<i64>(4096, ceil_div(n, 256)));
  visibility_kernel<<<blocks, 256, 0, stream>>>(tiles, mask);
  IOSIM_CUDA_CHECK_LAUNCH();
}

}  // namespace iosim::kernels::detail
