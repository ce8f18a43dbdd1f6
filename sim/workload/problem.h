// The attention problem being simulated: shapes, data type, masking and the
// memory layout of the tensors. Pure data, shared by the simulator and the
// kernel harness.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::workload {

enum class DType { fp16, bf16, fp32 };
enum class Layout { bshd, bhsd };  // bshd: FlashAttention's default (batch, seq, head, dim)
enum class Pass { fwd, bwd, fwdbwd };
// The attention algorithms iosim plans, traces, executes and launches.
// standard_eager: standard attention as eager PyTorch GPT-2 runs it in
// training, scaling, masking and dropout each a kernel over the N x N matrix.
// splitkv: split-KV forward (flash-decoding): the key range cut into splits,
// a partial O and log-sum-exp per split, then a combine kernel.
// fa3: FlashAttention-3's Hopper forward (kernels/fa3): FA2's tile walk with
// a warp-specialised CTA, at the kernel's one 128 x 128 tile; forward only.
enum class Algorithm { standard, fa1, fa2, fa1_swapped, standard_eager, splitkv, fa3 };
// Standard attention, plain or eager: S, P in global memory, GEMM tiles.
constexpr bool is_standard(Algorithm a) { return a == Algorithm::standard || a == Algorithm::standard_eager; }

i64 dtype_bytes(DType t);
std::string_view to_string(DType t);
std::string_view to_string(Layout l);
std::string_view to_string(Pass p);
std::string_view to_string(Algorithm a);
// Parsers throw InputError naming the valid choices.
DType parse_dtype(std::string_view s);
Layout parse_layout(std::string_view s);
Pass parse_pass(std::string_view s);
Algorithm parse_algorithm(std::string_view s);

// A block-sparsity mask over an algorithm's (block_m x block_n) tile grid.
struct BlockMask {
  i64 m_blocks = 0;
  i64 n_blocks = 0;
  std::vector<std::uint8_t> active;  // row-major, 1 = computed
  i64 nonzero() const;
  double density() const;
};

// How the block mask is specified; it is materialised per tiling, because a
// mask is defined on the tile grid the algorithm uses.
struct SparsitySpec {
  enum class Kind { dense, random_density, file } kind = Kind::dense;
  double density = 1.0;
  std::uint64_t seed = 0;
  std::string file;
  bool is_dense() const { return kind == Kind::dense; }
  // The mask on the (block_m x block_n) tile grid of an Nq x Nk problem. A
  // mask file has the grid's shape, or another granularity that divides
  // evenly: R rows and C columns cut Nq and Nk into whole blocks (R divides
  // Nq, C divides Nk) whose sizes are multiples or divisors of block_m and
  // block_n; a tile is then active when any mask block it overlaps is.
  // Throws InputError naming the tile grid otherwise.
  BlockMask materialise(i64 seq_q, i64 seq_k, i64 block_m, i64 block_n) const;
  // On a grid known only by its shape: a file must have that shape.
  BlockMask materialise(i64 m_blocks, i64 n_blocks) const;
};

struct Problem {
  i64 batch = 1;
  i64 heads = 1;
  i64 kv_heads = 1;
  i64 seq_q = 1024;
  i64 seq_k = 1024;
  i64 head_dim = 64;
  DType dtype = DType::fp16;
  bool causal = false;
  SparsitySpec sparsity;
  Layout layout = Layout::bshd;

  i64 elem_bytes() const { return dtype_bytes(dtype); }
  // Throws InputError for non-positive sizes, heads % kv_heads != 0, or
  // B H Nq Nk d above 2^kMaxProblemLog2 (counts must fit 64 bits).
  void validate() const;
  static constexpr int kMaxProblemLog2 = 58;
};

}  // namespace iosim::workload
