// Runs the CUDA attention kernels on generated inputs: `check` compares one
// configuration with the double-precision reference (sim/numerics/reference.h),
// `bench` times it with CUDA events. Used by the iosim-kernels CLI and by the
// GPU tests (tests/gpu/), so both exercise the same buffers and launch path.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/gemm_impl.h"
#include "sim/common/hd.h"
#include "sim/numerics/reference.h"
#include "sim/trace/algorithms.h"
#include "sim/workload/problem.h"

namespace iosim::harness {

// The kernels the harness can run: "standard", "standard-eager", "fa1", "fa2", "splitkv", "fa3".
const std::vector<std::string>& kernel_algorithms();

struct RunSpec {
  workload::Problem problem;
  std::string algorithm = "fa2";
  i64 block_m = 0;  // 0: default_blocks()
  i64 block_n = 0;
  trace::GemmTiles gemm;  // standard attention's GEMM tiles
  kernels::GemmImpl gemm_impl = kernels::GemmImpl::mma;  // standard attention's GEMM kernel
  i64 splits = 0;         // splitkv's key-range splits; 0: schedule::default_splits for the device's SMs
  // An explicit block mask on the (block_m x block_n) grid; when absent,
  // problem.sparsity is materialised on that grid (dense by default).
  std::optional<workload::BlockMask> mask;
  std::uint64_t data_seed = 1;
  // Inputs are uniform in [-1, 1]; Q is multiplied by q_scale (large logits).
  double q_scale = 1.0;
  // standard-eager: attention dropout probability (GPT-2's attn_pdrop); its
  // Philox seed is data_seed, so each run's mask is reproducible.
  double dropout = 0.1;
};

struct Blocks {
  i64 m = 0, n = 0;
};
// fa2: forward d64 128x128 and d128 128x64, backward d64 128x128 and d128
// 64x128 (FlashAttention-2's choices); 64x64 for fa1; 16x64 for splitkv (the
// simulator's default); the GEMM tile for standard (its block mask is defined
// on the GEMM tile grid).
Blocks default_blocks(const RunSpec& s, workload::Pass pass);
// The tiling of the forward run that feeds a backward pass: the backward's own
// (pass_blocks) when masked or when blocks were given, else the forward default.
Blocks forward_blocks(const RunSpec& s, workload::Pass pass, Blocks pass_blocks, bool masked);

struct TensorError {
  std::string tensor;  // "O", "L", "dQ", "dK", "dV", "Z"
  numerics::ErrorNorms norms;
};
// splitkv's splits for a run (1 for the other algorithms): RunSpec::splits,
// or the default rule for the current device's SM count.
i64 run_splits(const RunSpec& s, Blocks b);

struct CheckResult {
  Blocks blocks;
  i64 splits = 1;
  std::vector<TensorError> errors;
  std::optional<double> keep_fraction;  // standard-eager: the fraction of Z's elements kept
  double max_relative() const;
};
// Forward: O (and L where the algorithm produces it) against the reference.
// standard-eager also checks its keep mask Z against the dropout rule
// element by element ("Z": 0 when equal, >= 1 otherwise).
// Backward: runs the algorithm's own forward, then dQ, dK, dV. Outputs are
// poisoned with NaN bytes before each launch, so an unwritten element shows
// up as an infinite error.
CheckResult check(const RunSpec& s, workload::Pass pass);

struct BenchOptions {
  int warmup = 5;
  int iters = 30;
  double l2_multiple = 4.0;  // rotate input sets until they exceed this many L2s
  int max_sets = 64;
  // Standard attention: also time each kernel of the plan (a CUDA event
  // after every launch).
  bool per_kernel = false;
};
// One kernel of a per-kernel bench: its time (median and minimum over the
// timed runs) beside what its trace counts (sim/count), the bytes between
// shared and global memory and the tensor-core FLOPs.
struct KernelTiming {
  std::string name;
  double median_ms = 0, min_ms = 0;
  i64 read_bytes = 0, write_bytes = 0, tensor_flops = 0;
};
struct BenchResult {
  Blocks blocks;
  i64 splits = 1;
  std::string device;
  int sets = 0;
  i64 set_bytes = 0;
  std::vector<double> ms;  // one per timed run
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double flops = 0;  // counted FLOPs (see attention_flops)
  double tflops = 0; // flops / median
  std::vector<KernelTiming> kernels;  // per_kernel only, in launch order
};
// 4 B H Nq Nk d forward (halved when causal), 2.5x that for backward.
double attention_flops(const workload::Problem& p, workload::Pass pass);
// fwd, bwd (its forward runs untimed first), or fwdbwd (both, timed together).
BenchResult bench(const RunSpec& s, workload::Pass pass, const BenchOptions& o);

}  // namespace iosim::harness
