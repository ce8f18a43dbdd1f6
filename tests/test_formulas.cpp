// The trace's byte counts, tensor FLOPs and steps per kernel must equal the
// hand-derived closed forms exactly, for every algorithm and pass, on ragged,
// causal (N_q != N_k), GQA and block-sparse shapes.
#define BOOST_TEST_MODULE formulas
#include <boost/test/unit_test.hpp>

#include "sim/count/formulas.h"
#include "sim/count/io_count.h"

#include <optional>

using namespace iosim;
using workload::Algorithm;
using workload::Pass;

namespace {

struct Shape {
  i64 seq_q, seq_k, heads, kv_heads, block_m, block_n;
};

workload::Problem make_problem(const Shape& s, bool causal, double density, workload::DType dt,
                               workload::Layout layout) {
  workload::Problem p;
  p.batch = 2;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.seq_q = s.seq_q;
  p.seq_k = s.seq_k;
  p.head_dim = 32;
  p.dtype = dt;
  p.causal = causal;
  p.layout = layout;
  if (density < 1.0) {
    p.sparsity.kind = workload::SparsitySpec::Kind::random_density;
    p.sparsity.density = density;
    p.sparsity.seed = 7;
  }
  return p;
}

void expect_trace_equals_formula(const workload::Problem& p, Algorithm a, Pass pass, const Shape& s,
                                 i64 sram_limit = 1 << 20, std::optional<i64> splits = {}) {
  trace::TraceOptions opt;
  opt.splits = splits;
  opt.algorithm = a;
  opt.pass = pass;
  opt.block_m = s.block_m;
  opt.block_n = s.block_n;
  opt.gemm = {32, 16, 8};
  opt.sram_limit_bytes = sram_limit;
  const auto run = trace::build_trace(p, opt);
  const auto counted = count::count_run(run);
  const auto formula = count::formula_for(run);
  BOOST_TEST_CONTEXT(workload::to_string(a) << " " << workload::to_string(pass) << " Nq=" << p.seq_q
                                         << " Nk=" << p.seq_k << " H=" << p.heads << "/" << p.kv_heads
                                         << " causal=" << p.causal << " blocks=" << s.block_m << "x"
                                         << s.block_n << " sparse=" << !p.sparsity.is_dense()
                                         << " splits=" << run.tiling.splits) {
    BOOST_TEST(counted.io.read_bytes == formula.read_bytes);
    BOOST_TEST(counted.io.write_bytes == formula.write_bytes);
    BOOST_TEST(counted.io.read_bytes > 0);
    BOOST_TEST(counted.io.tensor_flops == formula.tensor_flops);
    // Steps per kernel: what sizes a long run before it starts.
    const auto steps = count::kernel_steps(run);
    BOOST_TEST_REQUIRE(steps.size() == counted.kernels.size());
    for (size_t k = 0; k < steps.size(); ++k) BOOST_TEST(counted.kernels[k].io.steps == steps[k], counted.kernels[k].name);
  }
}

const Shape kShapes[] = {
    {256, 256, 2, 2, 64, 64},  // even
    {77, 45, 4, 2, 16, 32},    // ragged, N_q > N_k, GQA
    {33, 130, 4, 1, 32, 16},   // ragged, N_q < N_k, MQA
    {100, 37, 3, 3, 16, 16},   // N_q > N_k: fully masked causal rows
};

}  // namespace

BOOST_AUTO_TEST_CASE(trace_bytes_equal_closed_form_for_every_algorithm_and_pass) {
  for (const auto& s : kShapes)
    for (bool causal : {false, true})
      for (double density : {1.0, 0.4}) {
        const auto p = make_problem(s, causal, density, workload::DType::fp16, workload::Layout::bshd);
        for (Algorithm a : {Algorithm::standard, Algorithm::standard_eager, Algorithm::fa1, Algorithm::fa2})
          for (Pass pass : {Pass::fwd, Pass::bwd, Pass::fwdbwd}) expect_trace_equals_formula(p, a, pass, s);
        expect_trace_equals_formula(p, Algorithm::fa1_swapped, Pass::fwd, s);
      }
}

// fa3's closed form is FA2 forward's at the kernel's 128 x 128 tile (the same
// tiles per CTA, only the CTAs' order differs): its trace equals it, and
// equals FA2's trace at that tile, on even, ragged, GQA/MQA and causal shapes
// (N_q > N_k: fully masked query blocks), at both head dims and data types.
BOOST_AUTO_TEST_CASE(fa3_trace_bytes_equal_fa2_forward_closed_form_at_its_tile) {
  const Shape shapes[] = {{256, 256, 2, 2, 128, 128}, {300, 200, 4, 2, 128, 128},
                          {200, 263, 4, 1, 128, 128}, {520, 130, 3, 3, 128, 128}};
  for (const auto& s : shapes)
    for (bool causal : {false, true})
      for (const i64 d : {64, 128})
        for (const auto dt : {workload::DType::fp16, workload::DType::bf16}) {
          auto p = make_problem(s, causal, 1.0, dt, workload::Layout::bshd);
          p.head_dim = d;
          expect_trace_equals_formula(p, Algorithm::fa3, Pass::fwd, s);
          trace::TraceOptions opt;
          opt.block_m = s.block_m;
          opt.block_n = s.block_n;
          opt.sram_limit_bytes = 1 << 20;
          opt.algorithm = Algorithm::fa3;
          const auto fa3 = count::count_run(trace::build_trace(p, opt));
          opt.algorithm = Algorithm::fa2;
          const auto fa2 = count::count_run(trace::build_trace(p, opt));
          BOOST_TEST(fa3.io.read_bytes == fa2.io.read_bytes);
          BOOST_TEST(fa3.io.write_bytes == fa2.io.write_bytes);
          BOOST_TEST(fa3.io.tensor_flops == fa2.io.tensor_flops);
        }
}

// The row softmax takes a warp per row and 4 rows per CTA up to 1024 columns,
// a CTA per row beyond; a CTA whose rows' staging does not fit reads them twice.
BOOST_AUTO_TEST_CASE(softmax_rows_per_cta_and_two_pass_reads_follow_the_closed_form) {
  const schedule::RowSoftmaxSchedule warp_rows{1023, 1024, {2, 3, 3}, {}, 1 << 20, 1};
  BOOST_TEST(warp_rows.rows_per_cta() == 4);
  BOOST_TEST(warp_rows.grid().x == 256);  // ceil(1023 / 4): the last CTA has 3 rows
  BOOST_TEST(warp_rows.rows_in(255) == 3);
  const schedule::RowSoftmaxSchedule cta_rows{1023, 1025, {2, 3, 3}, {}, 1 << 20, 1};
  BOOST_TEST(cta_rows.rows_per_cta() == 1);
  BOOST_TEST(cta_rows.threads_per_row() == 128);
  BOOST_TEST(cta_rows.grid().x == 1023);
  // Limits between one row's and four rows' staging (fwd 4 KiB/row, bwd 8 KiB/row
  // at 1024 columns), and below one long row's.
  for (const i64 limit : {i64{6} << 10, i64{20} << 10, i64{40} << 10})
    for (const auto& s : {Shape{77, 1024, 2, 2, 64, 64}, Shape{45, 1500, 2, 1, 64, 64}})
      for (bool causal : {false, true}) {
        const auto p = make_problem(s, causal, 1.0, workload::DType::fp16, workload::Layout::bshd);
        expect_trace_equals_formula(p, Algorithm::standard, Pass::fwdbwd, s, limit);
      }
}

BOOST_AUTO_TEST_CASE(closed_form_holds_for_fp32_and_bhsd) {
  const Shape s{77, 45, 4, 2, 16, 32};
  const auto p = make_problem(s, true, 1.0, workload::DType::fp32, workload::Layout::bhsd);
  for (Algorithm a : {Algorithm::standard, Algorithm::standard_eager, Algorithm::fa1, Algorithm::fa2})
    expect_trace_equals_formula(p, a, Pass::fwdbwd, s);
}

// standard-eager is standard attention plus elementwise kernels that each read
// and write whole N_q x N_k matrices: e bytes per element of S, P, Pd, dP, dS
// and 1 byte of the dropout keep mask Z and of the mask buffer. Counted from
// the trace per kernel, independently of the closed form.
BOOST_AUTO_TEST_CASE(standard_eager_adds_elementwise_kernels_over_the_whole_matrix) {
  for (bool causal : {false, true}) {
    const Shape s{77, 45, 4, 2, 16, 32};
    const auto p = make_problem(s, causal, 1.0, workload::DType::fp16, workload::Layout::bshd);
    const i64 nn = p.batch * p.heads * p.seq_q * p.seq_k, e = 2;
    auto counted = [&](Algorithm a) {
      trace::TraceOptions opt;
      opt.algorithm = a;
      opt.pass = Pass::fwdbwd;
      opt.block_m = s.block_m;
      opt.block_n = s.block_n;
      return count::count_run(trace::build_trace(p, opt));
    };
    const auto plain = counted(Algorithm::standard), eager = counted(Algorithm::standard_eager);
    i64 elementwise = 0;
    for (const auto& k : eager.kernels) {
      if (k.name.rfind("eager_", 0) != 0) continue;
      const i64 in = k.name.find("mask") != std::string::npos || k.name == "eager_bwd_dropout" ? e + 1 : e;
      const i64 out = k.name == "eager_fwd_dropout" ? e + 1 : e;
      BOOST_TEST(k.io.read_bytes == in * nn, k.name);
      BOOST_TEST(k.io.write_bytes == out * nn, k.name);
      elementwise += k.io.read_bytes + k.io.write_bytes;
    }
    BOOST_TEST(eager.kernels.size() == plain.kernels.size() + (causal ? 6 : 4));
    BOOST_TEST(eager.io.total_bytes() == plain.io.total_bytes() + elementwise);
    BOOST_TEST(eager.io.tensor_flops == plain.io.tensor_flops);
  }
}

BOOST_AUTO_TEST_CASE(fa1_forward_matches_paper_expression_when_blocks_divide_n) {
  // With N divisible by both blocks, Bc = M/4d exactly and one-byte elements,
  // Algorithm 1's count is 12N^2d^2/M + 16N^2d/M + 3Nd plus the 2N of
  // initialising l and m, with l and m counted as 4-byte values: check the
  // matrix terms, which carry the paper's N^2d^2/M scaling.
  workload::Problem p;
  p.batch = 1;
  p.heads = 1;
  p.kv_heads = 1;
  p.seq_q = p.seq_k = 1024;
  p.head_dim = 64;
  p.dtype = workload::DType::fp16;
  trace::TraceOptions opt;
  opt.algorithm = Algorithm::fa1;
  opt.pass = Pass::fwd;
  opt.sram_limit_bytes = 65536;  // M = 32768 elements -> Bc = 128, Br = 64
  const auto run = trace::build_trace(p, opt);
  BOOST_TEST(run.tiling.block_n == 128);
  BOOST_TEST(run.tiling.block_m == 64);
  const auto c = count::count_run(run).io;
  const i64 N = 1024, d = 64, M = 32768, e = 2;
  using trace::TensorId;
  auto rw = [&](TensorId t) {
    return c.by_tensor[static_cast<int>(t)].read_bytes + c.by_tensor[static_cast<int>(t)].write_bytes;
  };
  // Q, O traffic (3 N d T_c with T_c = 4Nd/M) + K, V (2Nd) + O init (Nd).
  BOOST_TEST(rw(TensorId::Q) + rw(TensorId::O) + rw(TensorId::K) + rw(TensorId::V) ==
             e * (12 * N * N * d * d / M + 3 * N * d));
  // l, m: 4 accesses per row per outer step (16N^2d/M) + init (2N), 4 bytes each.
  BOOST_TEST(rw(TensorId::l) + rw(TensorId::m) == 4 * (16 * N * N * d / M + 2 * N));
}

BOOST_AUTO_TEST_CASE(causal_fa2_forward_visits_lower_triangle_only) {
  workload::Problem p;
  p.seq_q = p.seq_k = 512;
  p.head_dim = 64;
  p.causal = true;
  trace::TraceOptions opt;
  opt.block_m = opt.block_n = 64;
  opt.sram_limit_bytes = 1 << 20;
  const auto run = trace::build_trace(p, opt);
  const auto c = count::count_run(run).io;
  const i64 T = 8, tiles = T * (T + 1) / 2;
  BOOST_TEST(c.by_tensor[static_cast<int>(trace::TensorId::K)].read_bytes == tiles * 64 * 64 * 2);
  BOOST_TEST(c.tensor_flops == tiles * 4 * 64 * 64 * 64);
}

// splitkv: Q once per non-empty split, K/V once per active tile, every
// split's fp32 partials written and read back. Split counts from 1 to every
// key block: one where the last split holds the ragged key block, and ones
// above a causal query block's key blocks (empty splits). Decode shapes
// (N_q of 1, 3, 16 against longer N_k) and prefill-like ones.
BOOST_AUTO_TEST_CASE(splitkv_trace_bytes_equal_closed_form_for_every_split_count) {
  const Shape shapes[] = {
      {1, 1000, 4, 1, 16, 64},   // decode, MQA
      {3, 4097, 4, 2, 16, 64},   // ragged last key block (1 key), GQA
      {16, 777, 2, 2, 16, 32},   // one full query block
      {77, 45, 4, 2, 16, 32},    // N_q > N_k: fully masked causal rows
      {33, 130, 4, 1, 32, 16},   // ragged, several query blocks
  };
  for (const auto& s : shapes)
    for (bool causal : {false, true}) {
      const auto p = make_problem(s, causal, 1.0, workload::DType::fp16, workload::Layout::bshd);
      const i64 blocks = (s.seq_k + s.block_n - 1) / s.block_n;
      for (const i64 splits : {i64{1}, i64{2}, i64{3}, i64{7}, blocks})
        if (splits <= blocks) expect_trace_equals_formula(p, Algorithm::splitkv, Pass::fwd, s, 1 << 20, splits);
      expect_trace_equals_formula(p, Algorithm::splitkv, Pass::fwd, s);  // the default rule (no SM count: 1)
    }
  const Shape s{3, 4097, 4, 2, 16, 64};
  const auto bhsd = make_problem(s, true, 1.0, workload::DType::bf16, workload::Layout::bhsd);
  expect_trace_equals_formula(bhsd, Algorithm::splitkv, Pass::fwd, s, 1 << 20, 5);
}

// Splitting changes only Q (once per non-empty split) and the partials: K/V
// bytes and FLOPs equal FA2 forward's on the same tiling, counted per tensor
// from the two traces.
BOOST_AUTO_TEST_CASE(splitkv_reads_the_same_kv_and_computes_the_same_flops_as_fa2) {
  const Shape s{3, 4097, 4, 2, 16, 64};
  for (bool causal : {false, true}) {
    const auto p = make_problem(s, causal, 1.0, workload::DType::fp16, workload::Layout::bshd);
    auto counted = [&](Algorithm a, std::optional<i64> splits) {
      trace::TraceOptions opt;
      opt.algorithm = a;
      opt.block_m = s.block_m;
      opt.block_n = s.block_n;
      opt.splits = splits;
      return count::count_run(trace::build_trace(p, opt));
    };
    const auto fa2 = counted(Algorithm::fa2, {});
    const auto split = counted(Algorithm::splitkv, 7);
    auto bytes = [](const count::RunCount& c, trace::TensorId t) {
      return c.io.by_tensor[static_cast<size_t>(t)].read_bytes;
    };
    BOOST_TEST(bytes(split, trace::TensorId::K) == bytes(fa2, trace::TensorId::K));
    BOOST_TEST(bytes(split, trace::TensorId::V) == bytes(fa2, trace::TensorId::V));
    BOOST_TEST(bytes(split, trace::TensorId::Q) == 7 * bytes(fa2, trace::TensorId::Q));  // 65 key blocks >= 7 splits
    BOOST_TEST(split.io.tensor_flops == fa2.io.tensor_flops);
    const i64 partial_rows = p.batch * p.heads * 7 * p.seq_q;
    BOOST_TEST(split.io.by_tensor[static_cast<size_t>(trace::TensorId::Oaccum)].write_bytes ==
               partial_rows * p.head_dim * 4);
    BOOST_TEST(split.io.by_tensor[static_cast<size_t>(trace::TensorId::LSEaccum)].read_bytes == partial_rows * 4);
  }
}
