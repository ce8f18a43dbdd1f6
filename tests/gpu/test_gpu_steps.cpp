// Each main kernel visits exactly the tiles its trace counts. The kernels
// record the steps their CTAs execute (schedule::StepLog: query block i, key
// block j, head in the GQA group g, masked run or not); the test derives the
// expected list of every CTA from the simulator's trace (the tile accesses
// sim/trace builds from the plan) and the masked flag from the element-mask
// rule, not from the iterator the kernels use, and compares them CTA by CTA,
// on causal, ragged, N_q != N_k, GQA and block-sparse problems.
#define BOOST_TEST_MODULE test_gpu_steps
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/common/attention_api.h"
#include "kernels/common/device_buffer.h"
#include "sim/trace/algorithms.h"

using iosim::i64;
using iosim::gputest::problem;
using iosim::gputest::requires_gpu;
using iosim::kernels::DeviceBuffer;
using iosim::workload::Algorithm;
using iosim::workload::DType;
using iosim::workload::Pass;
namespace schedule = iosim::schedule;
namespace trace = iosim::trace;

namespace {

struct StepRecord {
  i64 i, j, g;
  bool masked;
  bool operator==(const StepRecord&) const = default;
};
using CtaSteps = std::vector<std::vector<StepRecord>>;  // by linear CTA index, x fastest

std::string describe(const std::vector<StepRecord>& steps) {
  std::ostringstream o;
  for (const auto& s : steps) o << "(" << s.i << "," << s.j << "," << s.g << (s.masked ? ",m) " : ") ");
  return o.str();
}

// The tile steps of every CTA of the pass's main kernel, from its trace: a
// step that loads a query tile (FA1, FA2 backward) or a key tile (FA2
// forward) is a tile step; its (i, j) come from the tile rows; j of FA1's
// inner steps is the key block its outer step loaded.
CtaSteps expected_steps(const trace::AlgorithmTrace& run, const trace::KernelTrace& k) {
  const auto& p = run.problem;
  const i64 bm = run.tiling.block_m, bn = run.tiling.block_n;
  const schedule::AttentionTiles tiles = schedule::make_tiles(p, bm, bn, schedule::mask_view(run.mask.get()));
  const schedule::Dim3 grid = k.grid();
  const bool fa2_fwd = k.name() == "fa2_fwd";
  // splitkv logs g = its split; x = query block + m_blocks * split.
  const bool split_fwd = k.name() == "splitkv_fwd";
  // Only the backward kernels loop over the query heads of a GQA group inside
  // a CTA; a forward CTA owns one query head, and logs g = 0.
  const bool group_loop = k.name() == "fa1_bwd" || k.name() == "fa2_bwd_main";
  const i64 group = p.heads / p.kv_heads;
  CtaSteps out(static_cast<size_t>(grid.count()));
  for (i64 z = 0; z < grid.z; ++z)
    for (i64 y = 0; y < grid.y; ++y)
      for (i64 x = 0; x < grid.x; ++x) {
        auto& list = out[static_cast<size_t>(x + grid.x * (y + grid.y * z))];
        auto gen = k.cta_steps(x, y, z);
        i64 j_outer = -1;
        while (gen.next()) {
          const trace::Step& st = gen.value();
          i64 i = -1, j = -1, g = 0;
          for (int a = 0; a < st.load_count; ++a) {
            const trace::TileAccess& t = st.loads[static_cast<size_t>(a)];
            if (t.tensor == trace::TensorId::K) j = t.row0 / bn;
            if (t.tensor == trace::TensorId::Q) {
              i = t.row0 / bm;
              g = group_loop ? t.head % group : 0;
            }
          }
          if (fa2_fwd) {
            if (j >= 0) list.push_back({x, j, 0, tiles.needs_element_mask(x, j)});
            continue;
          }
          if (split_fwd) {
            const i64 mi = x % tiles.m_blocks();
            if (j >= 0) list.push_back({mi, j, x / tiles.m_blocks(), tiles.needs_element_mask(mi, j)});
            continue;
          }
          if (j >= 0 && i < 0) j_outer = j;  // FA1's outer step: K_j, V_j
          if (k.name() == "fa2_bwd_main") j_outer = x;
          if (i >= 0) list.push_back({i, j_outer, g, tiles.needs_element_mask(i, j_outer)});
        }
      }
  return out;
}

// Runs the pass with a step log on the device and returns what each CTA of
// its main kernel recorded.
CtaSteps recorded_steps(Algorithm algo, Pass pass, const iosim::workload::Problem& p, i64 bm, i64 bn,
                        const trace::AlgorithmTrace& run, i64 max_steps, i64 ctas) {
  namespace k = iosim::kernels;
  k::AttentionConfig c;
  c.problem = p;
  c.block_m = bm;
  c.block_n = bn;
  c.splits = run.tiling.splits;
  DeviceBuffer<std::uint8_t> d_mask(run.mask ? run.mask->active.size() : 1);
  if (run.mask) {
    d_mask.upload(run.mask->active);
    c.d_block_mask = d_mask.get();
  }
  DeviceBuffer<std::int32_t> entries(static_cast<size_t>(4 * ctas * max_steps)), counts(static_cast<size_t>(ctas));
  entries.fill_bytes(0xff);
  counts.fill_bytes(0xff);
  c.step_log = {entries.get(), counts.get(), max_steps};

  const i64 q_elems = p.batch * p.heads * p.seq_q * p.head_dim, kv_elems = p.batch * p.kv_heads * p.seq_k * p.head_dim;
  const i64 rows = p.batch * p.heads * p.seq_q;
  // Random (never zero) fp16 inputs; what matters here is the control flow.
  std::mt19937 rng(7);
  auto random_halves = [&](i64 n) {
    std::vector<std::uint16_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<std::uint16_t>(0x3000 + (rng() & 0x7ff));  // 0.125 .. 0.5
    return v;
  };
  DeviceBuffer<std::uint16_t> q(q_elems), kk(kv_elems), v(kv_elems), o(q_elems), d_o(q_elems), dq(q_elems),
      dk(kv_elems), dv(kv_elems);
  DeviceBuffer<float> lse(rows), l(rows), m(rows), dq_accum(q_elems), dvec(rows), o_accum(q_elems * c.splits),
      lse_accum(rows * c.splits);
  q.upload(random_halves(q_elems));
  kk.upload(random_halves(kv_elems));
  v.upload(random_halves(kv_elems));
  d_o.upload(random_halves(q_elems));
  iosim::kernels::CudaStream stream;
  if (pass == Pass::fwd) {
    k::ForwardBuffers b;
    b.q = q.get(), b.k = kk.get(), b.v = v.get(), b.o = o.get(), b.lse = lse.get(), b.l = l.get(), b.m = m.get();
    b.o_accum = o_accum.get(), b.lse_accum = lse_accum.get();
    (algo == Algorithm::fa2 ? k::fa2_forward : algo == Algorithm::splitkv ? k::splitkv_forward : k::fa1_forward)(
        c, b, stream.get());
  } else {
    // A forward pass first gives the backward pass its statistics.
    k::ForwardBuffers f;
    f.q = q.get(), f.k = kk.get(), f.v = v.get(), f.o = o.get(), f.lse = lse.get(), f.l = l.get(), f.m = m.get();
    k::AttentionConfig fc = c;
    fc.step_log = {};
    (algo == Algorithm::fa2 ? k::fa2_forward : k::fa1_forward)(fc, f, stream.get());
    k::BackwardBuffers b;
    b.q = q.get(), b.k = kk.get(), b.v = v.get(), b.o = o.get(), b.d_o = d_o.get(), b.lse = lse.get(), b.l = l.get(),
    b.m = m.get(), b.dq = dq.get(), b.dk = dk.get(), b.dv = dv.get(), b.dq_accum = dq_accum.get(), b.d = dvec.get();
    (algo == Algorithm::fa2 ? k::fa2_backward : k::fa1_backward)(c, b, stream.get());
  }
  stream.synchronize();
  const auto e_host = entries.download();
  const auto n_host = counts.download();
  CtaSteps out(static_cast<size_t>(ctas));
  for (i64 cta = 0; cta < ctas; ++cta) {
    const i64 n = n_host[static_cast<size_t>(cta)];
    BOOST_TEST_REQUIRE(n >= 0, "CTA " << cta << " recorded no step count");
    for (i64 s = 0; s < std::min(n, max_steps); ++s) {
      const std::int32_t* r = &e_host[static_cast<size_t>(4 * (cta * max_steps + s))];
      out[static_cast<size_t>(cta)].push_back({r[0], r[1], r[2], r[3] != 0});
    }
    if (n > max_steps) out[static_cast<size_t>(cta)].push_back({-1, -1, -1, false});  // more than planned
  }
  return out;
}

void expect_kernel_visits_planned_tiles(Algorithm algo, Pass pass, const iosim::workload::Problem& p, i64 bm, i64 bn,
                                        std::optional<i64> splits = {}) {
  trace::TraceOptions opt;
  opt.splits = splits;
  opt.algorithm = algo;
  opt.pass = pass;
  opt.block_m = bm;
  opt.block_n = bn;
  opt.sram_limit_bytes = 227 * 1024;
  const trace::AlgorithmTrace run = trace::build_trace(p, opt);
  const std::string main_name = algo == Algorithm::splitkv ? "splitkv_fwd"
                                : algo == Algorithm::fa2   ? (pass == Pass::fwd ? "fa2_fwd" : "fa2_bwd_main")
                                                           : (pass == Pass::fwd ? "fa1_fwd" : "fa1_bwd");
  const trace::KernelTrace* main = nullptr;
  for (const auto& e : run.kernels)
    if (e.kernel->name() == main_name) main = e.kernel.get();
  BOOST_TEST_REQUIRE(main != nullptr);
  const CtaSteps want = expected_steps(run, *main);
  i64 max_steps = 1, total = 0;
  for (const auto& l : want) {
    max_steps = std::max<i64>(max_steps, static_cast<i64>(l.size()));
    total += static_cast<i64>(l.size());
  }
  BOOST_TEST_REQUIRE(total > 0, "the trace of " << main_name << " has no tile step");
  const CtaSteps got = recorded_steps(algo, pass, p, bm, bn, run, max_steps, static_cast<i64>(want.size()));
  i64 mismatches = 0;
  for (size_t c = 0; c < want.size(); ++c) {
    if (got[c] == want[c]) continue;
    if (++mismatches <= 3)
      BOOST_ERROR(main_name << " CTA " << c << ": kernel visited " << describe(got[c]) << "; the trace counts "
                            << describe(want[c]));
  }
  BOOST_TEST(mismatches == 0, main_name << ": " << mismatches << " of " << want.size() << " CTAs differ");
}

iosim::workload::Problem sparse(iosim::workload::Problem p) {
  p.sparsity.kind = iosim::workload::SparsitySpec::Kind::random_density;
  p.sparsity.density = 0.5;
  p.sparsity.seed = 3;
  return p;
}

}  // namespace

// FA2's CI-menu tiles: forward d64 128x128, d128 128x64 / 64x128; backward
// d64 128x128, d128 64x128.
BOOST_AUTO_TEST_CASE(fa2_forward_visits_the_planned_key_blocks, *requires_gpu()) {
  expect_kernel_visits_planned_tiles(Algorithm::fa2, Pass::fwd, problem(2, 4, 2, 700, 1000, 64, DType::fp16, true), 128, 128);
  expect_kernel_visits_planned_tiles(Algorithm::fa2, Pass::fwd, problem(1, 4, 4, 1000, 700, 128, DType::fp16, true), 128, 64);
  expect_kernel_visits_planned_tiles(Algorithm::fa2, Pass::fwd, problem(2, 2, 2, 777, 777, 128, DType::fp16), 64, 128);
  expect_kernel_visits_planned_tiles(Algorithm::fa2, Pass::fwd, sparse(problem(2, 2, 1, 900, 1100, 64, DType::fp16, true)), 128, 128);
}

BOOST_AUTO_TEST_CASE(fa2_backward_visits_the_planned_query_blocks, *requires_gpu()) {
  expect_kernel_visits_planned_tiles(Algorithm::fa2, Pass::bwd, problem(2, 4, 2, 700, 1000, 64, DType::fp16, true), 128, 128);
  expect_kernel_visits_planned_tiles(Algorithm::fa2, Pass::bwd, problem(1, 4, 1, 1000, 700, 128, DType::fp16, true), 64, 128);
  expect_kernel_visits_planned_tiles(Algorithm::fa2, Pass::bwd, sparse(problem(2, 2, 2, 900, 1100, 128, DType::fp16)), 64, 128);
}

BOOST_AUTO_TEST_CASE(fa1_visits_the_planned_tiles, *requires_gpu()) {
  for (const Pass pass : {Pass::fwd, Pass::bwd}) {
    expect_kernel_visits_planned_tiles(Algorithm::fa1, pass, problem(1, 2, 1, 300, 500, 64, DType::fp16, true), 64, 64);
    expect_kernel_visits_planned_tiles(Algorithm::fa1, pass, sparse(problem(1, 2, 2, 333, 333, 64, DType::fp16, true)), 64, 64);
  }
}

// splitkv's CI-menu tiles (d64 and d128, 16x64): every CTA visits its split's
// run of key blocks, on decode shapes with a ragged last block (the last
// split partial), causal N_q < N_k, GQA, more query blocks than one, and as
// many splits as key blocks.
BOOST_AUTO_TEST_CASE(splitkv_forward_visits_each_splits_planned_key_blocks, *requires_gpu()) {
  expect_kernel_visits_planned_tiles(Algorithm::splitkv, Pass::fwd, problem(2, 4, 2, 1, 4097, 64, DType::fp16), 16, 64, 7);
  expect_kernel_visits_planned_tiles(Algorithm::splitkv, Pass::fwd, problem(1, 4, 1, 16, 1000, 128, DType::fp16, true), 16, 64, 3);
  expect_kernel_visits_planned_tiles(Algorithm::splitkv, Pass::fwd, problem(1, 2, 2, 40, 300, 64, DType::fp16, true), 16, 64, 5);
  expect_kernel_visits_planned_tiles(Algorithm::splitkv, Pass::fwd, problem(1, 2, 2, 3, 1000, 128, DType::fp16, true), 16, 64, 16);
}
