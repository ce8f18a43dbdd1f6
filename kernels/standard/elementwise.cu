// standard-eager's elementwise kernels (elementwise.h). A CTA of 128 threads
// takes the RowElementwiseSchedule's rows (4 rows up to 1024 columns, else
// 1), adjacent in memory: one span of rows * seq_k elements per tensor. With
// seq_k % 8 == 0 every span starts on a 16-byte boundary and each thread
// moves 8 elements at a time (16 bytes of the data type, 8 of a byte
// tensor), four such vectors loaded before any is used (in-place kernels
// alias input and output, so the compiler would not batch the loads itself);
// other widths take one element at a time. Each element is read once per
// input and written once per output: the trace's bytes.
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

namespace iosim::kernels::detail {
namespace {

using schedule::ElementwiseOp;
using u16 = std::uint16_t;
using u8 = std::uint8_t;

constexpr int kThreads = static_cast<int>(schedule::RowElementwiseSchedule::kThreads);
constexpr int kVec = 8;     // elements per vector
constexpr int kUnroll = 4;  // vectors in flight per thread

struct ElementwiseParams {
  schedule::RowElementwiseSchedule s;
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

template <class T, ElementwiseOp OP>
__global__ void __launch_bounds__(kThreads) elementwise_kernel(const ElementwiseParams p) {
  const auto& s = p.s;
  const i64 r0 = s.first_row(blockIdx.x), count = s.rows_in(blockIdx.x) * s.seq_k;
  // Element index of the CTA's first element in [batch][heads][seq_q][seq_k].
  const i64 base = ((static_cast<i64>(blockIdx.z) * s.shape.heads + blockIdx.y) * s.seq_q + r0) * s.seq_k;
  const u16* in0 = p.in0 + base;
  const u8* in1 = p.in1 == nullptr ? nullptr : p.in1 + (OP == ElementwiseOp::dropout_bwd ? base : r0 * s.seq_k);
  u16* out0 = p.out0 + base;
  u8* out1 = p.out1 == nullptr ? nullptr : p.out1 + base;
  const int tid = static_cast<int>(threadIdx.x);

  if (!p.vec) {
    for (i64 i = tid; i < count; i += kThreads) {
      bool keep = false;
      if constexpr (OP == ElementwiseOp::dropout) {
        const std::uint64_t e = static_cast<std::uint64_t>(base + i);
        keep = DropoutRule::kept(philox4x32_10(e / 4, p.seed).v[e % 4], p.threshold);
      }
      out0[i] = apply<T, OP>(in0[i], reads_byte_tensor(OP) ? in1[i] : u8{1}, keep, p);
      if constexpr (OP == ElementwiseOp::dropout) out1[i] = keep;
    }
    return;
  }
  const i64 vectors = count / kVec;
  for (i64 v0 = tid; v0 < vectors; v0 += kUnroll * kThreads) {
    uint4 x[kUnroll];
    uint2 m[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 v = v0 + u * kThreads;
      if (v < vectors) {
        x[u] = *reinterpret_cast<const uint4*>(in0 + v * kVec);
        if constexpr (reads_byte_tensor(OP)) m[u] = *reinterpret_cast<const uint2*>(in1 + v * kVec);
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
      *reinterpret_cast<uint4*>(out0 + v * kVec) = *reinterpret_cast<const uint4*>(xs);
      if constexpr (OP == ElementwiseOp::dropout) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) ms[j] = keep[j];
        *reinterpret_cast<uint2*>(out1 + v * kVec) = *reinterpret_cast<const uint2*>(ms);
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
  const i64 n = t.seq_q * t.seq_k;
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 r = i / t.seq_k, c = i % t.seq_k;
    mask[i] = c < t.key_end_for_row(r) && (t.mask.active == nullptr || t.mask_allows(r / t.block_m, c / t.block_n));
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
