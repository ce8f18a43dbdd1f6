// The trace file format: what is written is what is read, replaying a file
// gives the same result as simulating the trace directly, hand-written files
// run, and malformed files are rejected with the file and line.
#define BOOST_TEST_MODULE trace_file
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/common/error.h"
#include "sim/engine/engine.h"
#include "sim/schedule/score_layout.h"
#include "sim/trace/trace_file.h"

using namespace iosim;
using trace::RangeStep;
using workload::Pass;

namespace {

profile::HardwareProfile a100() { return profile::find_profile("a100-sxm4-40gb", profile::default_profile_dir()); }

trace::AlgorithmTrace build(workload::Algorithm a, Pass pass, i64 batch, i64 heads, i64 kv_heads, i64 n, i64 d,
                            bool causal, workload::DType dtype = workload::DType::fp16) {
  workload::Problem prob;
  prob.batch = batch;
  prob.heads = heads;
  prob.kv_heads = kv_heads;
  prob.seq_q = prob.seq_k = n;
  prob.head_dim = d;
  prob.causal = causal;
  prob.dtype = dtype;
  trace::TraceOptions o;
  o.algorithm = a;
  o.pass = pass;
  o.sram_limit_bytes = a100().smem_per_block_bytes;
  return trace::build_trace(prob, o);
}

std::string to_text(const trace::AlgorithmTrace& run) {
  std::ostringstream out;
  trace::write_trace_file(out, run);
  return out.str();
}

trace::TraceFileReader reader_of(const std::string& text) {
  return trace::TraceFileReader(std::make_unique<std::istringstream>(text), "mem.trace");
}

void check_same(const engine::SimulationResult& x, const engine::SimulationResult& y) {
  BOOST_REQUIRE_EQUAL(x.kernels.size(), y.kernels.size());
  for (size_t i = 0; i < x.kernels.size(); ++i) {
    const auto& a = x.kernels[i];
    const auto& b = y.kernels[i];
    BOOST_TEST(a.name == b.name);
    BOOST_TEST((a.pass == b.pass));
    BOOST_TEST(a.occupancy.ctas_per_sm == b.occupancy.ctas_per_sm);
    BOOST_TEST(a.occupancy.waves == b.occupancy.waves);
    BOOST_TEST(a.request_read_bytes() == b.request_read_bytes());
    BOOST_TEST(a.request_write_bytes() == b.request_write_bytes());
    BOOST_TEST(a.request_reduce_bytes() == b.request_reduce_bytes());
    BOOST_TEST(a.l2.total().hit_sectors == b.l2.total().hit_sectors);
    BOOST_TEST(a.l2.total().miss_sectors == b.l2.total().miss_sectors);
    BOOST_TEST(a.l2.total().lookup_sectors == b.l2.total().lookup_sectors);
    BOOST_TEST(a.dram_read_bytes == b.dram_read_bytes);
    BOOST_TEST(a.dram_write_bytes == b.dram_write_bytes);
    BOOST_TEST(a.dirty_left_bytes == b.dirty_left_bytes);
    BOOST_TEST(a.compute.tensor_flops == b.compute.tensor_flops);
    BOOST_TEST(a.compute.sfu_ops == b.compute.sfu_ops);
    BOOST_TEST(a.cycles == b.cycles);
    BOOST_TEST(a.bound == b.bound);
  }
  BOOST_TEST(x.total.seconds == y.total.seconds);
  BOOST_TEST(x.tensor_names == y.tensor_names);
}

}  // namespace

BOOST_AUTO_TEST_CASE(replaying_a_written_trace_equals_simulating_it_directly) {
  const auto p = a100();
  using A = workload::Algorithm;
  const trace::AlgorithmTrace runs[] = {build(A::fa2, Pass::fwdbwd, 2, 4, 2, 512, 64, true),
                                        build(A::fa1, Pass::fwdbwd, 1, 3, 3, 384, 64, false),
                                        build(A::standard, Pass::fwdbwd, 1, 2, 2, 256, 64, true, workload::DType::bf16)};
  for (const auto& run : runs) {
    const auto direct = engine::simulate(run, p, {});
    auto reader = reader_of(to_text(run));
    check_same(engine::simulate(reader, p, {}), direct);
  }
  // The same through a file on disk.
  const std::string path = "test_trace_file.trace";
  trace::write_trace_file(path, runs[0]);
  check_same(engine::replay_trace_file(path, p, {}), engine::simulate(runs[0], p, {}));
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(written_file_holds_every_access_of_every_cta_in_order) {
  const auto run = build(workload::Algorithm::fa2, Pass::fwdbwd, 1, 2, 1, 300, 64, true);
  trace::AlgorithmKernelSource direct(run);
  auto reader = reader_of(to_text(run));
  BOOST_TEST((reader.dtype() == workload::DType::fp16));
  i64 accesses = 0;
  while (const trace::RangeKernel* a = direct.next_kernel()) {
    const trace::RangeKernel* b = reader.next_kernel();
    BOOST_REQUIRE(b != nullptr);
    BOOST_TEST(a->name() == b->name());
    BOOST_TEST(a->grid().count() == b->grid().count());
    BOOST_TEST(a->resources().smem_bytes == b->resources().smem_bytes);
    BOOST_TEST(a->resources().threads == b->resources().threads);
    BOOST_TEST(a->pipeline_stages() == b->pipeline_stages());
    const auto g = a->grid();
    for (i64 z = 0; z < g.z; ++z)
      for (i64 y = 0; y < g.y; ++y)
        for (i64 x = 0; x < g.x; ++x) {
          auto ca = a->open_cta(x, y, z);
          auto cb = b->open_cta(x, y, z);
          RangeStep sa, sb;
          while (ca->next(sa)) {
            BOOST_REQUIRE(cb->next(sb));
            BOOST_REQUIRE(sa.loads == sb.loads);
            BOOST_REQUIRE(sa.stores == sb.stores);
            BOOST_REQUIRE_EQUAL(sa.compute.tensor_flops, sb.compute.tensor_flops);
            BOOST_REQUIRE_EQUAL(sa.compute.fp32_ops, sb.compute.fp32_ops);
            BOOST_REQUIRE_EQUAL(sa.compute.sfu_ops, sb.compute.sfu_ops);
            accesses += static_cast<i64>(sa.loads.size() + sa.stores.size());
          }
          BOOST_TEST(!cb->next(sb));
        }
  }
  BOOST_TEST(reader.next_kernel() == nullptr);
  BOOST_TEST(accesses > 0);
  // Compact: an access takes one short line (the kernels' warp programs,
  // written once per kernel, aside).
  std::istringstream lines(to_text(run));
  i64 step_bytes = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("i ", 0) != 0 && line.rfind("program", 0) != 0) step_bytes += static_cast<i64>(line.size()) + 1;
  BOOST_TEST(static_cast<double>(step_bytes) / static_cast<double>(accesses) < 40.0);
}

BOOST_AUTO_TEST_CASE(hand_written_trace_of_a_users_own_kernel_runs) {
  // Two CTAs read the same 64 KiB (the second one's lines are L2 hits), then
  // reduce into a 4 KiB accumulator; a second kernel copies it out.
  const std::string text =
      "iosim-trace 2\n"
      "# a user's own algorithm\n"
      "dtype bf16\n"
      "tensor 0 X 40000000 65536\n"
      "tensor 5 acc 80000000 4096\n"
      "tensor 7 out 90000000 6144\n"
      "kernel mine pass=fwd grid=2,1,1 threads=256 smem=65536 regs=64 stages=2\n"
      "cta 0 0 0\n"
      "s 1000000 2000 300\n"
      "r 0 40000000 65536\n"
      "a 5 80000000 128 32 128\n"
      "cta 1 0 0\n"
      "s 1000000 2000 300\n"
      "r 0 40000000 65536\n"
      "a 5 80000000 128 32 128\n"
      "end\n"
      "kernel out pass=bwd grid=1,1,1 threads=128 smem=4096 regs=32 stages=1\n"
      "cta 0 0 0\n"
      "s 0 1024 0\n"
      "r 5 80000000 4096\n"
      "w 7 90000000 2048 2 4096\n"
      "end\n";
  auto reader = reader_of(text);
  BOOST_TEST((reader.dtype() == workload::DType::bf16));
  const auto r = engine::simulate(reader, a100(), {});
  BOOST_REQUIRE_EQUAL(r.kernels.size(), 2u);
  const auto& k = r.kernels[0];
  BOOST_TEST(k.request_read_bytes() == 2 * 65536);
  BOOST_TEST(k.request_reduce_bytes() == 2 * 4096);
  BOOST_TEST(k.dram_read_bytes == 65536 + 4096);  // X once; the accumulator's first reduction fetches it
  BOOST_TEST(k.compute.tensor_flops == 2000000);
  BOOST_TEST((r.kernels[1].pass == Pass::bwd));
  BOOST_TEST(r.kernels[1].request_write_bytes() == 4096);
  BOOST_TEST(r.kernels[1].dram_read_bytes == 0);  // the accumulator is still in L2
  BOOST_TEST(r.tensor_names.at(5) == "acc");
}

BOOST_AUTO_TEST_CASE(malformed_trace_files_are_rejected_with_file_and_line) {
  const std::string head = "iosim-trace 2\ntensor 0 X 1000 4096\n";
  const std::string kernel = "kernel k pass=fwd grid=2,1,1 threads=128 smem=0 regs=32 stages=1\n";
  const std::pair<std::string, std::string> cases[] = {
      {"", "empty trace file"},
      {"iosim-trace 4\n", "not an iosim trace"},
      {"iosim-trace 1\ntensor 0 X\n", "format 1 declares no tensor sizes"},
      {head + "dtype fp8\n", "unknown dtype"},
      {head + "tensor 300 X 0 64\n" + kernel, "tensor <id 0..255>"},
      {head + "tensor 1 Y 2000\n" + kernel, "<base_hex> <bytes>"},
      {head + "tensor 1 Y 2000 0\n" + kernel, "positive size"},
      {head + "tensor 0 Z 9000 64\n" + kernel, "tensor 0 is declared twice (first on line 2)"},
      {head + "tensor 1 Y 8000000000 64\n" + kernel, "leaves the address window"},
      {head + "kernel k pass=fwd grid=2147483648,1,1 threads=128 smem=0 regs=32 stages=1\n", "within CUDA's limits"},
      {head + "kernel k pass=fwd grid=2,1,1 threads=128 smem=0 regs=32 stages=1000000000\n", "at most 64"},
      {head + "kernel k pass=fwd grid=2,1 threads=128 smem=0 regs=32 stages=1\n", "grid: expected three"},
      {head + "kernel k pass=sideways grid=2,1,1 threads=128 smem=0 regs=32 stages=1\n", "pass: expected fwd or bwd"},
      {head + "kernel k pass=fwd grid=2,1,1 threads=128 smem=0 regs=32 colour=1\n", "unknown kernel field"},
      {head + kernel + "cta 1 0 0\n", "expected 'cta 0 0 0'"},
      {head + kernel + "s 1 2 3\n", "before the kernel's first 'cta'"},
      {head + kernel + "cta 0 0 0\nr 0 100 64\n", "must follow an 's' line"},
      {head + kernel + "cta 0 0 0\ns 1 2\n", "expected 's <tensor_flops>"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nr 0 zz 64\n", "expected 'r <tensor 0..255>"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nr 0 1000 0\n", "row_bytes >= 1"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nw 0 1000 64 0 64\n", "rows must be a positive"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nr 3 1000 64\n", "tensor 3 was never declared (declared: 0 (X)"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nr 0 1f00 512\n", "[0x1f00, 0x2100) of 1 row(s) lie outside tensor 0"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nr 0 1000 64 65 64\n", "lie outside tensor 0 (X) [0x1000, 0x2000)"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nr 0 0 64\n", "declared on line 2"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nr 0 1000 1 9223372036854775807 9223372036854775807\n", "past 2^64"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nq 0 1000 64\n", "unknown record 'q'"},
      {head + kernel + "cta 0 0 0\ns 1 2 3\nend\n", "lists 1 CTAs; its grid has 2"},
      {head + kernel + "cta 0 0 0\ncta 1 0 0\n", "missing 'end'"},
      {head + kernel + "programs warps=0 tensor=1 sync_loads=0\n", "programs: expected warps=<1..32>"},
      {head + kernel + "programs warps=4 tensor=1\n", "needs warps=, tensor= and sync_loads="},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0 store_rounds=1\n", "store_rounds=1 needs sync_loads=1"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=1 store_rounds=2\n", "[store_rounds=<0|1>]"},
      {head + kernel + "program 0 p\n", "before the kernel's 'programs' line"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\ni fma 0\n", "'i' before a 'program <id> <name>'"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\nprogram 0 p\ni fma 0 0\n",
       "a source is the index of an earlier instruction"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\nprogram 0 p\ni vector 0\n",
       "expected 'i <tensor|fma|alu|mufu|shfl|smem|global|barrier>"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\nprogram 0 p\nprogram 0 q\n", "defined twice"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\nprogram 0 p once=2\n", "[once=1]"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\nprogram 0 p\ni smem 128 op=local local=L3+0\n",
       "local=: expected KIND BYTES"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\nprogram 0 p\ni fma 0 local=S4+0\n",
       "local=<access> belongs to an op=local instruction"},
      {head + kernel + "programs warps=4 tensor=1 sync_loads=0\nprogram 0 p\ni fma 0\ncta 0 0 0\ns 1 2 3 1\n",
       "the step's program '1' is not one of the kernel's"},
      {head + kernel + "cta 0 0 0\nprograms warps=4 tensor=1 sync_loads=0\n", "after the kernel's first 'cta'"},
  };
  for (const auto& [text, expected] : cases) {
    std::string message;
    try {
      auto reader = reader_of(text);
      while (reader.next_kernel() != nullptr) {
      }
    } catch (const InputError& e) {
      message = e.what();
    }
    BOOST_TEST(message.find(expected) != std::string::npos, "'" << message << "' should say '" << expected << "'");
    BOOST_TEST(message.rfind("mem.trace:", 0) == 0u, message);
  }
  BOOST_CHECK_THROW(trace::TraceFileReader("/nonexistent/x.trace"), InputError);
}

// A file that names an access line's tensor must say where the access lies; an
// access beyond it is rejected at its own line, before anything is simulated.
BOOST_AUTO_TEST_CASE(an_access_past_its_tensor_is_rejected_at_its_line_before_replaying) {
  const std::string text =
      "iosim-trace 2\ntensor 0 X 0 10000000000\n"
      "kernel k pass=fwd grid=1,1,1 threads=128 smem=0 regs=32 stages=1\n"
      "cta 0 0 0\ns 0 0 0\nr 0 0 10000000 1000 10000000\nr 0 0 10000000 1001 10000000\nend\n";
  auto reader = reader_of(text);
  try {
    reader.next_kernel();
    BOOST_FAIL("the 1001-row access ends past the 10 GB tensor");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).rfind("mem.trace:7: r:", 0) == 0u, e.what());
  }
}

// The memory model gathers a request's lines in memory; the reader hands it
// large accesses in pieces that share no line, so the bytes are the same.
BOOST_AUTO_TEST_CASE(large_accesses_reach_the_engine_in_disjoint_pieces_of_bounded_size) {
  const i64 big = 3 * trace::kMaxPieceBytes + 4096, rows = trace::kMaxPieceRows + 5;
  const std::string text = "iosim-trace 2\ntensor 0 X 1000 " + std::to_string(big) + "\ntensor 1 Y 80000000 " +
                           std::to_string(rows * 128) + "\nkernel k pass=fwd grid=1,1,1 threads=128 smem=0 regs=32 "
                           "stages=1\ncta 0 0 0\ns 0 0 0\nr 0 1000 " + std::to_string(big) + "\nw 1 80000000 64 " +
                           std::to_string(rows) + " 128\nend\n";
  auto reader = reader_of(text);
  const trace::RangeKernel* k = reader.next_kernel();
  BOOST_REQUIRE(k != nullptr);
  RangeStep step;
  BOOST_REQUIRE(k->open_cta(0, 0, 0)->next(step));
  BOOST_TEST(step.loads.size() == 4u);  // cut at multiples of kMaxPieceBytes
  u64 at = 0x1000;
  for (const auto& p : step.loads) {
    BOOST_TEST(p.addr == at);
    BOOST_TEST(p.bytes() <= trace::kMaxPieceBytes);
    at += static_cast<u64>(p.bytes());
  }
  BOOST_TEST(at == 0x1000 + static_cast<u64>(big));
  BOOST_TEST(step.stores.size() == 2u);  // rows in two groups
  BOOST_TEST(step.stores[0].rows + step.stores[1].rows == rows);
  BOOST_TEST(step.stores[1].addr == 0x80000000 + static_cast<u64>(step.stores[0].rows * 128));
  // Through the engine: every requested byte counted once, each row's 64 B
  // (two sectors) fetched once: pieces change no count.
  auto again = reader_of(text);
  const auto r = engine::simulate(again, a100(), {});
  BOOST_TEST(r.kernels.at(0).request_read_bytes() == big);
  BOOST_TEST(r.kernels.at(0).request_write_bytes() == rows * 64);
}

BOOST_AUTO_TEST_CASE(a_directory_is_not_read_as_an_empty_trace) {
  try {
    trace::TraceFileReader reader(".");
    BOOST_FAIL("a directory was accepted");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("is a directory") != std::string::npos, e.what());
  }
}



// Standard attention's N x N intermediates are laid out with rows padded to
// schedule::score_row_pitch, so that with N_k = 8 mod 16 (here 1000) and
// ragged (1001) every tile row, every softmax row and every elementwise row
// still starts on a 32-byte sector, as in the kernels (the hardware moves
// whole sectors: unaligned rows cost P V 1.33x its bytes on the H100). The
// padding is never touched: each access's bytes are the tile's.
BOOST_AUTO_TEST_CASE(score_matrix_rows_start_on_sectors_whatever_the_key_length) {
  using schedule::TensorId;
  for (const workload::Algorithm a : {workload::Algorithm::standard, workload::Algorithm::standard_eager})
    for (const i64 seq_k : {i64{1000}, i64{1001}}) {
      workload::Problem prob;
      prob.batch = 1;
      prob.heads = prob.kv_heads = 2;
      prob.seq_q = 70;
      prob.seq_k = seq_k;
      prob.head_dim = 64;
      prob.causal = true;
      trace::TraceOptions o;
      o.algorithm = a;
      o.pass = Pass::fwdbwd;
      o.sram_limit_bytes = a100().smem_per_block_bytes;
      const auto run = trace::build_trace(prob, o);
      const i64 pitch = schedule::score_row_pitch(seq_k);
      BOOST_TEST(pitch % 32 == 0);
      BOOST_TEST(pitch >= seq_k);
      BOOST_TEST(run.tensors->info(TensorId::P).bytes() == prob.seq_q * pitch * 2 * prob.heads);
      trace::AlgorithmKernelSource source(run);
      i64 score_accesses = 0, misaligned = 0;
      while (const trace::RangeKernel* k = source.next_kernel()) {
        const auto g = k->grid();
        for (i64 z = 0; z < g.z; ++z)
          for (i64 y = 0; y < g.y; ++y)
            for (i64 x = 0; x < g.x; ++x) {
              auto cta = k->open_cta(x, y, z);
              RangeStep s;
              while (cta->next(s))
                for (const auto* list : {&s.loads, &s.stores})
                  for (const trace::RangeAccess& r : *list) {
                    const auto t = static_cast<TensorId>(r.tensor);
                    if (t != TensorId::S && t != TensorId::P && t != TensorId::dP && t != TensorId::dS &&
                        t != TensorId::Pd && t != TensorId::Z && t != TensorId::Mask)
                      continue;
                    ++score_accesses;
                    const i64 elem = run.tensors->info(t).elem_bytes;
                    BOOST_TEST(r.row_bytes <= seq_k * elem);
                    if (r.rows > 1) BOOST_TEST(r.stride == pitch * elem);
                    misaligned += r.addr % 32 != 0;
                  }
            }
      }
      BOOST_TEST(score_accesses > 0);
      BOOST_TEST(misaligned == 0, workload::to_string(a) << " seq_k " << seq_k << ": " << misaligned << " of "
                                                          << score_accesses << " N x N accesses start mid-sector");
    }
}
