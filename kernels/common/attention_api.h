// Host-side API of the CUDA attention kernels. Every launcher takes its grid,
// CTA-to-tile mapping and shared-memory size from the schedule structs in
// sim/schedule/kernel_schedules.h (the same ones the simulator's trace walks).
//
// Tensors are addressed with element strides so both layouts work:
//   BSHD: batch_stride = S*H*d, row_stride = H*d, head_stride = d
//   BHSD: batch_stride = H*S*d, head_stride = S*d, row_stride = d
// Statistics (l, m, L = m + log l, D) are fp32 [batch][heads][seq_q].
// The dQ accumulator is fp32 [batch][heads][seq_q][d] (BHSD, contiguous).
// Standard attention's S/P/dP/dS are [batch][heads][seq_q][pitch] in the data type, rows padded to
// schedule::score_row_pitch(seq_k) elements (sim/schedule/score_layout.h; allocate score_matrix_elems per head).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/gemm_impl.h"
#include "sim/schedule/kernel_schedules.h"
#include "sim/schedule/plan.h"
#include "sim/workload/problem.h"

namespace iosim::kernels {

struct Strides {
  i64 batch = 0, head = 0, row = 0;  // in elements; the column stride is 1
};
Strides strides_for(const workload::Problem& p, i64 heads, i64 seq);

// What one launch needs to know besides pointers.
struct AttentionConfig {
  workload::Problem problem;        // shapes, dtype (fp16/bf16), causal, layout
  i64 block_m = 128;                // B_r
  i64 block_n = 64;                 // B_c
  schedule::GemmSchedule gemm_tiles{};  // standard attention only: tile_m/n/k used
  GemmImpl gemm_impl = GemmImpl::mma;   // standard attention only
  const std::uint8_t* d_block_mask = nullptr;  // device copy of the (m_blocks x n_blocks) mask, or null
  float softmax_scale = 0;          // 0 = 1/sqrt(d)
  double dropout_p = 0;             // standard-eager: attention dropout probability, in [0, 1)
  std::uint64_t dropout_seed = 0;   // standard-eager: the Philox key (sim/common/philox.h)
  schedule::StepLog step_log{};     // tests: where the main kernel records its CTAs' steps
  // Standard attention: called after each kernel of the plan is launched (the
  // harness records a CUDA event there to time the kernels one by one).
  std::function<void(const schedule::KernelPlan&)> after_launch;
  i64 splits = 1;                   // splitkv: key-range splits per query block
  // The tile grid the schedules iterate, with d_block_mask as its mask.
  schedule::AttentionTiles tiles() const;
  // The pass's plan (sim/schedule/plan.h) with the device mask: the kernels
  // to launch, in order, with their schedules. `sram_limit_bytes` is the row
  // softmax's on-chip budget (standard attention only).
  schedule::Plan plan(workload::Algorithm algorithm, workload::Pass pass, i64 sram_limit_bytes = 48 * 1024) const;
  schedule::HeadShape shape() const;
  float scale() const;
};

struct ForwardBuffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // FA2: L = m + log(l)
  float* l = nullptr;    // FA1: row sums
  float* m = nullptr;    // FA1: row maxima
  void* s = nullptr;     // standard: S = Q K^T
  void* p = nullptr;     // standard: P = softmax(scale * S)
  void* pd = nullptr;    // standard-eager: P after dropout
  std::uint8_t* z = nullptr;           // standard-eager: dropout's keep mask, 1 byte per element
  const std::uint8_t* mask = nullptr;  // standard-eager: [seq_q][pitch] visibility (standard_eager_fill_mask)
  float* o_accum = nullptr;    // splitkv scratch: [batch][heads][splits * seq_q][d] fp32 partial O
  float* lse_accum = nullptr;  // splitkv scratch: [batch][heads][splits * seq_q] partial LSE
};

struct BackwardBuffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* d_o = nullptr;
  const float* lse = nullptr;  // FA2
  const float* l = nullptr;    // FA1
  const float* m = nullptr;    // FA1
  const void* p = nullptr;     // standard (saved by the forward pass)
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  float* dq_accum = nullptr;   // FA1/FA2 scratch
  float* d = nullptr;          // FA2 scratch: D = rowsum(dO * O)
  void* dp = nullptr;          // standard scratch
  void* ds = nullptr;          // standard scratch
  const void* pd = nullptr;    // standard-eager (saved by the forward pass)
  const std::uint8_t* z = nullptr;     // standard-eager (saved by the forward pass)
  const std::uint8_t* mask = nullptr;  // standard-eager, as in ForwardBuffers
};

// Thrown when a (head_dim, block_m, block_n, dtype) combination has no
// compiled instantiation; the message lists the compiled ones.
struct NotCompiled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each algorithm's launch functions (defined in kernels/<algo>/*.cu).
void fa2_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream);
void fa2_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream);
void fa1_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream);
void fa1_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream);
void standard_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream);
void standard_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream);
// standard-eager: GPT-2's eager attention (schedule::make_plan's standard-eager
// plan): scale, mask (when causal or block-sparse), softmax and dropout as
// kernels of their own over the N x N matrices, the GEMMs of standard.
void standard_eager_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream);
void standard_eager_backward(const AttentionConfig& c, const BackwardBuffers& b, cudaStream_t stream);
// Builds standard-eager's mask buffer ([seq_q][pitch] bytes, 1 where the causal
// rule and c's block mask let row r see key c), as a model does once.
void standard_eager_fill_mask(const AttentionConfig& c, std::uint8_t* mask, cudaStream_t stream);
// FlashAttention-3 forward (Hopper, sm_90a; kernels/fa3): O and L (lse);
// its own 128 x 128 tile (c.block_m/block_n must say so), no block mask.
void fa3_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream);
// Split-KV forward (flash-decoding): O and L (lse) through the o_accum/lse_accum partials.
void splitkv_forward(const AttentionConfig& c, const ForwardBuffers& b, cudaStream_t stream);

// "d=64 Br=128 Bc=128 fp16, ..." for error messages and --help.
std::vector<std::string> compiled_menu(const std::string& algorithm);

// --- Added for the launchers and the harness (kernels/common/attention_api.cpp).
// Each algorithm's own menu, defined beside its kernels (kernels/<algo>/);
// compiled_menu("fa2") returns fa2_compiled_menu(), and so on.
std::vector<std::string> fa2_compiled_menu();
std::vector<std::string> fa1_compiled_menu();
std::vector<std::string> standard_compiled_menu();
std::vector<std::string> splitkv_compiled_menu();
std::vector<std::string> fa3_compiled_menu();

// Checks shared by every launcher, throwing iosim::InputError naming the
// field and the valid values: the problem itself (Problem::validate), dtype
// fp16 or bf16, head_dim a multiple of 8 (16-byte rows), block sizes >= 1.
void validate_config(const AttentionConfig& c, const std::string& algorithm);

// One menu entry, formatted the same way by every algorithm:
// "d=64 Br=128 Bc=128 fp16".
std::string menu_entry(i64 head_dim, i64 block_m, i64 block_n, workload::DType dtype);

}  // namespace iosim::kernels
