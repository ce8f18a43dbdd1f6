#include "kernels/harness/runner.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/common/attention_api.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/device_info.h"
#include "kernels/common/element_bits.h"
#include "sim/common/error.h"
#include "sim/count/io_count.h"
#include "sim/schedule/score_layout.h"

namespace iosim::harness {

using kernels::CudaEvent;
using kernels::CudaStream;
using kernels::DeviceBuffer;
using workload::DType;
using workload::Pass;
using workload::Problem;
using u16 = std::uint16_t;

const std::vector<std::string>& kernel_algorithms() {
  static const std::vector<std::string> algos{"standard", "standard-eager", "fa1", "fa2", "splitkv", "fa3"};
  return algos;
}

namespace {

bool has_forward(Pass p) { return p != Pass::bwd; }
bool has_backward(Pass p) { return p != Pass::fwd; }

bool is_standard(const std::string& a) { return a == "standard" || a == "standard-eager"; }

void require_algorithm(const std::string& a) {
  const auto& v = kernel_algorithms();
  if (std::find(v.begin(), v.end(), a) == v.end())
    throw InputError("unknown kernel algorithm '" + a + "' (valid: standard, standard-eager, fa1, fa2, splitkv, fa3)");
}

// ---------------------------------------------------------------------------
// Host data: inputs are generated on the host, rounded to the data type, and
// the reference sees exactly the rounded values.
using kernels::from_bits;
using kernels::to_bits;

// splitmix64: fast enough for the 10^8-element benchmark tensors.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0; }
};

struct HostTensor {
  std::vector<u16> bits;
  std::vector<float> values;  // the values the bits represent
};
HostTensor random_tensor(i64 n, DType t, std::uint64_t seed, double scale, bool keep_values) {
  HostTensor h;
  h.bits.resize(static_cast<size_t>(n));
  if (keep_values) h.values.resize(static_cast<size_t>(n));
  SplitMix rng{seed * 0x2545F4914F6CDD1Dull + 17};
  for (i64 i = 0; i < n; ++i) {
    const u16 b = to_bits(static_cast<float>(rng.uniform() * scale), t);
    h.bits[static_cast<size_t>(i)] = b;
    if (keep_values) h.values[static_cast<size_t>(i)] = from_bits(b, t);
  }
  return h;
}
std::vector<float> to_floats(const std::vector<u16>& bits, DType t) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = from_bits(bits[i], t);
  return out;
}

// ---------------------------------------------------------------------------
struct Sizes {
  i64 q, kv, stat, nn;
};
Sizes sizes(const Problem& p) {
  return {p.batch * p.heads * p.seq_q * p.head_dim, p.batch * p.kv_heads * p.seq_k * p.head_dim,
          p.batch * p.heads * p.seq_q, p.batch * p.heads * schedule::score_matrix_elems(p.seq_q, p.seq_k)};
}

// Every device buffer one run of an algorithm touches.
struct Workspace {
  DeviceBuffer<u16> q, k, v, o, d_o, dq, dk, dv, s, p, dp, ds, pd;
  DeviceBuffer<float> lse, l, m, dq_accum, dvec, o_accum, lse_accum;
  DeviceBuffer<std::uint8_t> z, mask;  // standard-eager: dropout's keep mask, the [seq_q][pitch] mask buffer

  // `splits` > 0: splitkv's partials for that many splits.
  Workspace(const std::string& algo, const Problem& pr, bool backward, i64 splits) {
    const Sizes n = sizes(pr);
    const auto sz = [](i64 x) { return static_cast<size_t>(x); };
    const bool standard = is_standard(algo);
    if (algo == "standard-eager") {
      pd = DeviceBuffer<u16>(sz(n.nn));
      z = DeviceBuffer<std::uint8_t>(sz(n.nn));
      mask = DeviceBuffer<std::uint8_t>(sz(schedule::score_matrix_elems(pr.seq_q, pr.seq_k)));
    }
    q = DeviceBuffer<u16>(sz(n.q));
    k = DeviceBuffer<u16>(sz(n.kv));
    v = DeviceBuffer<u16>(sz(n.kv));
    o = DeviceBuffer<u16>(sz(n.q));
    lse = DeviceBuffer<float>(sz(n.stat));
    l = DeviceBuffer<float>(sz(n.stat));
    m = DeviceBuffer<float>(sz(n.stat));
    if (splits > 0) {
      o_accum = DeviceBuffer<float>(sz(n.q * splits));
      lse_accum = DeviceBuffer<float>(sz(n.stat * splits));
    }
    if (standard) {
      s = DeviceBuffer<u16>(sz(n.nn));
      p = DeviceBuffer<u16>(sz(n.nn));
    }
    if (backward) {
      d_o = DeviceBuffer<u16>(sz(n.q));
      dq = DeviceBuffer<u16>(sz(n.q));
      dk = DeviceBuffer<u16>(sz(n.kv));
      dv = DeviceBuffer<u16>(sz(n.kv));
      dq_accum = DeviceBuffer<float>(sz(n.q));
      dvec = DeviceBuffer<float>(sz(n.stat));
      if (standard) {
        dp = DeviceBuffer<u16>(sz(n.nn));
        ds = DeviceBuffer<u16>(sz(n.nn));
      }
    }
  }
  i64 bytes() const {
    return static_cast<i64>(q.bytes() + k.bytes() + v.bytes() + o.bytes() + d_o.bytes() + dq.bytes() + dk.bytes() +
                            dv.bytes() + s.bytes() + p.bytes() + dp.bytes() + ds.bytes() + pd.bytes() + lse.bytes() +
                            l.bytes() + m.bytes() + dq_accum.bytes() + dvec.bytes() + z.bytes() + mask.bytes() +
                            o_accum.bytes() + lse_accum.bytes());
  }
  kernels::ForwardBuffers forward() {
    return {q.get(), k.get(), v.get(), o.get(), lse.get(), l.get(), m.get(), s.get(), p.get(), pd.get(), z.get(),
            mask.get(), o_accum.get(), lse_accum.get()};
  }
  kernels::BackwardBuffers backward() {
    return {q.get(),  k.get(),  v.get(),  o.get(),  d_o.get(), lse.get(),      l.get(),
            m.get(),  p.get(),  dq.get(), dk.get(), dv.get(),  dq_accum.get(), dvec.get(),
            dp.get(), ds.get(), pd.get(), z.get(),  mask.get()};
  }
  void poison_forward_outputs() {
    for (auto* b : {&o, &s, &p, &pd}) b->fill_bytes(0xFF);
    for (auto* b : {&lse, &l, &m, &o_accum, &lse_accum}) b->fill_bytes(0xFF);
    z.fill_bytes(0xFF);  // neither 0 nor 1: an unwritten keep flag shows in the keep-mask check
  }
  void poison_backward_outputs() {
    for (auto* b : {&dq, &dk, &dv, &dp, &ds}) b->fill_bytes(0xFF);
    for (auto* b : {&dq_accum, &dvec}) b->fill_bytes(0xFF);
  }
};

void run_forward(const std::string& algo, const kernels::AttentionConfig& c, const kernels::ForwardBuffers& b,
                 cudaStream_t s) {
  if (algo == "fa2") kernels::fa2_forward(c, b, s);
  else if (algo == "fa3") kernels::fa3_forward(c, b, s);
  else if (algo == "splitkv") kernels::splitkv_forward(c, b, s);
  else if (algo == "fa1") kernels::fa1_forward(c, b, s);
  else if (algo == "standard-eager") kernels::standard_eager_forward(c, b, s);
  else kernels::standard_forward(c, b, s);
}
void run_backward(const std::string& algo, const kernels::AttentionConfig& c, const kernels::BackwardBuffers& b,
                  cudaStream_t s) {
  if (algo == "fa2") kernels::fa2_backward(c, b, s);
  else if (algo == "fa1") kernels::fa1_backward(c, b, s);
  else if (algo == "standard-eager") kernels::standard_eager_backward(c, b, s);
  else kernels::standard_backward(c, b, s);
}

std::optional<workload::BlockMask> block_mask(const RunSpec& s, Blocks b) {
  const i64 mb = ceil_div(s.problem.seq_q, b.m), nb = ceil_div(s.problem.seq_k, b.n);
  if (s.mask) {
    if (s.mask->m_blocks != mb || s.mask->n_blocks != nb || static_cast<i64>(s.mask->active.size()) != mb * nb)
      throw InputError("block mask is " + std::to_string(s.mask->m_blocks) + "x" + std::to_string(s.mask->n_blocks) +
                       " but the tile grid is " + std::to_string(mb) + "x" + std::to_string(nb));
    return s.mask;
  }
  if (s.problem.sparsity.is_dense()) return std::nullopt;
  return s.problem.sparsity.materialise(mb, nb);
}

kernels::AttentionConfig make_config(const RunSpec& s, Blocks b, const std::uint8_t* d_mask) {
  kernels::AttentionConfig c;
  c.splits = run_splits(s, b);
  c.problem = s.problem;
  c.block_m = b.m;
  c.block_n = b.n;
  c.gemm_tiles.tile_m = s.gemm.m;
  c.gemm_tiles.tile_n = s.gemm.n;
  c.gemm_tiles.tile_k = s.gemm.k;
  c.gemm_impl = s.gemm_impl;
  c.d_block_mask = d_mask;
  if (s.algorithm == "standard-eager") {
    c.dropout_p = s.dropout;
    c.dropout_seed = s.data_seed;  // seeded per run: the reference draws the same mask
  }
  return c;
}

// Generated inputs for one spec, with the device copy of its mask.
struct Inputs {
  HostTensor q, k, v, d_o;
};
Inputs make_inputs(const RunSpec& s, bool backward, bool keep_values) {
  const Sizes n = sizes(s.problem);
  const DType t = s.problem.dtype;
  Inputs in;
  in.q = random_tensor(n.q, t, s.data_seed * 4 + 0, s.q_scale, keep_values);
  in.k = random_tensor(n.kv, t, s.data_seed * 4 + 1, 1.0, keep_values);
  in.v = random_tensor(n.kv, t, s.data_seed * 4 + 2, 1.0, keep_values);
  if (backward) in.d_o = random_tensor(n.q, t, s.data_seed * 4 + 3, 1.0, keep_values);
  return in;
}
// The inputs, and standard-eager's mask buffer (the model's, built once).
void upload(Workspace& ws, const Inputs& in, const kernels::AttentionConfig& c, cudaStream_t stream) {
  ws.q.upload(in.q.bits);
  ws.k.upload(in.k.bits);
  ws.v.upload(in.v.bits);
  if (!in.d_o.bits.empty()) ws.d_o.upload(in.d_o.bits);
  if (ws.mask.get() != nullptr) kernels::standard_eager_fill_mask(c, ws.mask.get(), stream);
}

numerics::HeadTensor query_side(const std::vector<float>& flat, const Problem& p) {
  return numerics::from_flat(flat, p.batch, p.heads, p.seq_q, p.head_dim, p.layout);
}
numerics::HeadTensor key_side(const std::vector<float>& flat, const Problem& p) {
  return numerics::from_flat(flat, p.batch, p.kv_heads, p.seq_k, p.head_dim, p.layout);
}
numerics::HeadTensor stats(const std::vector<float>& flat, const Problem& p) {
  return numerics::from_flat(flat, p.batch, p.heads, p.seq_q, 1, workload::Layout::bhsd);
}

// standard-eager's keep mask Z (rows of `pitch` bytes, `cols` used) against
// the dropout rule at each unpadded flat element (the reference's): max
// |Z - rule| over the elements (0 when they agree; the poison byte 0xFF left
// by an unwritten element gives 254 or 255), and the fraction of elements kept.
struct KeepMaskCheck {
  numerics::ErrorNorms norms;
  double keep_fraction = 0;
};
KeepMaskCheck check_keep_mask(const std::vector<std::uint8_t>& z, i64 cols, i64 pitch, const DropoutRule& rule) {
  KeepMaskCheck r;
  const i64 rows = static_cast<i64>(z.size()) / pitch;
  i64 kept = 0;
  for (i64 row = 0; row < rows; ++row)
    for (i64 c = 0; c < cols; ++c) {
      const int got = z[static_cast<size_t>(row * pitch + c)], ref = rule.keeps(row * cols + c) ? 1 : 0;
      r.norms.max_abs_ref = std::max(r.norms.max_abs_ref, static_cast<double>(ref));
      r.norms.max_abs_error = std::max(r.norms.max_abs_error, static_cast<double>(std::abs(got - ref)));
      kept += got == 1;
    }
  r.keep_fraction = rows * cols == 0 ? 0 : static_cast<double>(kept) / static_cast<double>(rows * cols);
  return r;
}

// FlashAttention-1 keeps l and m (of the scaled scores); L = m + log(l).
std::vector<float> lse_from_l_m(const std::vector<float>& l, const std::vector<float>& m) {
  std::vector<float> out(l.size());
  for (size_t i = 0; i < l.size(); ++i)
    out[i] = l[i] > 0.0f ? m[i] + std::log(l[i]) : -std::numeric_limits<float>::infinity();
  return out;
}

}  // namespace

Blocks default_blocks(const RunSpec& s, Pass pass) {
  if (s.block_m > 0 && s.block_n > 0) return {s.block_m, s.block_n};
  if (s.block_m > 0 || s.block_n > 0) throw InputError("give both --block-m and --block-n, or neither");
  if (s.algorithm == "fa2") {
    // FlashAttention-2's choices. (Forward d128 was 256x64 with the v3
    // kernel; with v5's two barriers per key block 128x64, two CTAs per SM,
    // is 1-9% faster: experiments/results/2026-11-22-h200-fa2-perf-notes.md.)
    const bool d64 = s.problem.head_dim <= 64;
    if (pass == Pass::bwd) return d64 ? Blocks{128, 128} : Blocks{64, 128};
    return d64 ? Blocks{128, 128} : Blocks{128, 64};
  }
  if (is_standard(s.algorithm)) return {s.gemm.m, s.gemm.n};
  if (s.algorithm == "splitkv") return {16, 64};
  if (s.algorithm == "fa3") return {128, 128};  // its only tile (schedule::Fa3ForwardSchedule)
  return {64, 64};
}

i64 run_splits(const RunSpec& s, Blocks b) {
  if (s.algorithm != "splitkv") {
    if (s.splits > 0) throw InputError("--splits applies to --algo splitkv only (got --algo " + s.algorithm + ")");
    return 1;
  }
  return s.splits > 0 ? s.splits : schedule::default_splits(s.problem, b.m, b.n, kernels::current_device().sm_count);
}

namespace {

// splitkv's domain (forward only, no block mask, 1..key-blocks splits), with
// the simulator's messages, before any buffer is allocated.
void require_runnable(const RunSpec& s, Pass pass, Blocks b) {
  if (s.algorithm == "fa3" && pass != Pass::fwd) throw InputError("fa3 is forward-only: use --pass fwd");
  if (s.algorithm != "splitkv") return;
  if (s.mask) throw InputError("splitkv takes no block mask (dense or causal problems only)");
  schedule::check_splitkv(s.problem, pass, b.n, run_splits(s, b));
}

}  // namespace

// The tiling of the forward run that feeds a backward pass: the backward's
// own when a block mask is defined on its grid or the blocks were given
// explicitly, else the forward's default (dense results do not depend on it).
Blocks forward_blocks(const RunSpec& s, Pass pass, Blocks pass_blocks, bool masked) {
  if (!has_backward(pass) || masked || (s.block_m > 0 && s.block_n > 0)) return pass_blocks;
  return default_blocks(s, Pass::fwd);
}

double CheckResult::max_relative() const {
  double worst = 0;
  for (const auto& e : errors) worst = std::max(worst, e.norms.relative());
  return worst;
}

CheckResult check(const RunSpec& s, Pass pass) {
  require_algorithm(s.algorithm);
  s.problem.validate();
  const Problem& pr = s.problem;
  const bool backward = has_backward(pass);
  const Blocks blocks = default_blocks(s, backward ? Pass::bwd : Pass::fwd);
  const auto mask = block_mask(s, blocks);
  const Blocks fwd_blocks = forward_blocks(s, pass, blocks, mask.has_value());
  require_runnable(s, pass, blocks);
  const i64 splits = run_splits(s, fwd_blocks);

  const Inputs in = make_inputs(s, backward, true);
  Workspace ws(s.algorithm, pr, backward, s.algorithm == "splitkv" ? splits : 0);
  DeviceBuffer<std::uint8_t> d_mask(mask ? mask->active.size() : 0);
  if (mask) d_mask.upload(mask->active);
  const kernels::AttentionConfig cfg = make_config(s, blocks, mask ? d_mask.get() : nullptr);
  const kernels::AttentionConfig fwd_cfg = make_config(s, fwd_blocks, mask ? d_mask.get() : nullptr);
  CudaStream stream;
  upload(ws, in, fwd_cfg, stream.get());
  const DropoutRule dropout{cfg.dropout_p, cfg.dropout_seed};

  numerics::AttentionInputs ref_in{query_side(in.q.values, pr), key_side(in.k.values, pr),
                                   key_side(in.v.values, pr), {}};
  if (backward) ref_in.d_o = query_side(in.d_o.values, pr);
  numerics::ReferenceMask ref_mask;
  if (mask) ref_mask = {*mask, blocks.m, blocks.n};

  CheckResult result;
  result.blocks = blocks;
  result.splits = splits;
  ws.poison_forward_outputs();
  run_forward(s.algorithm, fwd_cfg, ws.forward(), stream.get());
  stream.synchronize();
  if (ws.z.get() != nullptr) {
    const KeepMaskCheck z =
        check_keep_mask(ws.z.download(), s.problem.seq_k, schedule::score_row_pitch(s.problem.seq_k), dropout);
    result.errors.push_back({"Z", z.norms});
    result.keep_fraction = z.keep_fraction;
  }
  if (has_forward(pass)) {
    const numerics::ForwardResult ref = numerics::reference_forward(pr, ref_in, ref_mask, dropout);
    result.errors.push_back({"O", numerics::compare(query_side(to_floats(ws.o.download(), pr.dtype), pr), ref.o)});
    if (s.algorithm == "fa2" || s.algorithm == "splitkv" || s.algorithm == "fa3") {
      result.errors.push_back({"L", numerics::compare(stats(ws.lse.download(), pr), ref.lse)});
    } else if (s.algorithm == "fa1") {
      result.errors.push_back(
          {"L", numerics::compare(stats(lse_from_l_m(ws.l.download(), ws.m.download()), pr), ref.lse)});
    }
  }
  if (backward) {
    ws.poison_backward_outputs();
    run_backward(s.algorithm, cfg, ws.backward(), stream.get());
    stream.synchronize();
    const numerics::GradResult ref = numerics::reference_backward(pr, ref_in, ref_mask, dropout);
    result.errors.push_back({"dQ", numerics::compare(query_side(to_floats(ws.dq.download(), pr.dtype), pr), ref.dq)});
    result.errors.push_back({"dK", numerics::compare(key_side(to_floats(ws.dk.download(), pr.dtype), pr), ref.dk)});
    result.errors.push_back({"dV", numerics::compare(key_side(to_floats(ws.dv.download(), pr.dtype), pr), ref.dv)});
  }
  return result;
}

double attention_flops(const Problem& p, Pass pass) {
  const double fwd = 4.0 * static_cast<double>(p.batch) * static_cast<double>(p.heads) *
                     static_cast<double>(p.seq_q) * static_cast<double>(p.seq_k) * static_cast<double>(p.head_dim) *
                     (p.causal ? 0.5 : 1.0);
  double total = 0;
  if (has_forward(pass)) total += fwd;
  if (has_backward(pass)) total += 2.5 * fwd;
  return total;
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// What the trace counts for each kernel of the pass, in launch order.
std::vector<KernelTiming> traced_kernels(const RunSpec& s, Pass pass, Blocks blocks) {
  trace::TraceOptions t;
  t.algorithm = workload::parse_algorithm(s.algorithm);
  t.pass = pass;
  t.block_m = blocks.m;
  t.block_n = blocks.n;
  t.gemm = s.gemm;
  t.sram_limit_bytes = kernels::launch_limits().smem_per_block_optin;  // the row softmax's budget, as launched
  const trace::AlgorithmTrace run = trace::build_trace(s.problem, t);
  std::vector<KernelTiming> out;
  for (const auto& k : run.kernels) {
    const count::KernelCount c = count::count_kernel(*k.kernel, *run.tensors);
    out.push_back({c.name, 0, 0, c.io.read_bytes, c.io.write_bytes, c.io.tensor_flops});
  }
  return out;
}

// Per-kernel times from the events recorded after each launch: kernel k of
// run it took marks[it][k] - marks[it][k - 1] (the run's start for k = 0).
void fill_kernel_times(std::vector<KernelTiming>& kernels, const std::vector<std::string>& launched,
                       const std::vector<CudaEvent>& start, const std::vector<std::vector<CudaEvent>>& marks) {
  if (launched.size() != kernels.size())
    throw std::logic_error("bench: " + std::to_string(launched.size()) + " kernels launched, the trace has " +
                           std::to_string(kernels.size()));
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (launched[k] != kernels[k].name)
      throw std::logic_error("bench: kernel " + std::to_string(k) + " launched as " + launched[k] +
                             ", the trace's is " + kernels[k].name);
    std::vector<double> ms;
    for (size_t it = 0; it < marks.size(); ++it)
      ms.push_back(marks[it][k].ms_since(k == 0 ? start[it] : marks[it][k - 1]));
    kernels[k].median_ms = median_of(ms);
    kernels[k].min_ms = *std::min_element(ms.begin(), ms.end());
  }
}

}  // namespace

BenchResult bench(const RunSpec& s, Pass pass, const BenchOptions& o) {
  require_algorithm(s.algorithm);
  s.problem.validate();
  if (o.iters < 1 || o.warmup < 0) throw InputError("bench needs --iters >= 1 and --warmup >= 0");
  if (o.per_kernel && !is_standard(s.algorithm))
    throw InputError("--per-kernel times the kernels of standard and standard-eager (got --algo " + s.algorithm + ")");
  const Problem& pr = s.problem;
  const bool forward = has_forward(pass), backward = has_backward(pass);
  const Blocks blocks = default_blocks(s, backward ? Pass::bwd : Pass::fwd);
  require_runnable(s, pass, blocks);
  const i64 splits = run_splits(s, blocks);
  const i64 partials = s.algorithm == "splitkv" ? splits : 0;
  const auto mask = block_mask(s, blocks);
  const kernels::DeviceInfo dev = kernels::current_device();

  const Inputs in = make_inputs(s, backward, false);
  DeviceBuffer<std::uint8_t> d_mask(mask ? mask->active.size() : 0);
  if (mask) d_mask.upload(mask->active);
  kernels::AttentionConfig cfg = make_config(s, blocks, mask ? d_mask.get() : nullptr);
  kernels::AttentionConfig fwd_cfg =
      make_config(s, forward_blocks(s, pass, blocks, mask.has_value()), mask ? d_mask.get() : nullptr);

  // Rotate over enough input/output sets that the data of one run is evicted
  // from L2 before the same set runs again.
  std::vector<Workspace> sets;
  sets.emplace_back(s.algorithm, pr, backward, partials);
  const i64 set_bytes = sets.front().bytes();
  size_t free_bytes = 0, total_bytes = 0;
  IOSIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const i64 wanted = std::max<i64>(2, static_cast<i64>(std::ceil(o.l2_multiple * static_cast<double>(dev.l2_bytes) /
                                                                  static_cast<double>(set_bytes))));
  const i64 fit = static_cast<i64>(0.8 * static_cast<double>(free_bytes) / static_cast<double>(set_bytes)) + 1;
  const i64 n_sets = std::max<i64>(1, std::min<i64>({wanted, fit, o.max_sets}));
  while (static_cast<i64>(sets.size()) < n_sets) sets.emplace_back(s.algorithm, pr, backward, partials);
  CudaStream stream;
  for (auto& ws : sets) {
    upload(ws, in, fwd_cfg, stream.get());
    if (pass == Pass::bwd) run_forward(s.algorithm, fwd_cfg, ws.forward(), stream.get());  // O, P for the backward
  }
  stream.synchronize();

  // Per-kernel timing: an event after every launch of the timed runs.
  std::vector<KernelTiming> kernel_times = o.per_kernel ? traced_kernels(s, pass, blocks) : std::vector<KernelTiming>{};
  std::vector<std::vector<CudaEvent>> marks;
  std::vector<std::string> launched;
  int timed_run = -1;  // the timed run being launched, -1 during warm-up
  size_t next_mark = 0;
  if (o.per_kernel) {
    for (int it = 0; it < o.iters; ++it) marks.emplace_back(kernel_times.size());
    const auto mark = [&](const schedule::KernelPlan& k) {
      if (timed_run < 0) return;
      if (timed_run == 0) launched.push_back(k.name);
      if (next_mark < kernel_times.size()) marks[static_cast<size_t>(timed_run)][next_mark].record(stream.get());
      ++next_mark;
    };
    cfg.after_launch = mark;
    fwd_cfg.after_launch = mark;
  }

  const auto run = [&](Workspace& ws) {
    if (forward) run_forward(s.algorithm, fwd_cfg, ws.forward(), stream.get());
    if (backward) run_backward(s.algorithm, cfg, ws.backward(), stream.get());
  };
  for (int w = 0; w < o.warmup; ++w) run(sets[static_cast<size_t>(w) % sets.size()]);
  std::vector<CudaEvent> start(static_cast<size_t>(o.iters)), stop(static_cast<size_t>(o.iters));
  for (int it = 0; it < o.iters; ++it) {
    timed_run = it;
    next_mark = 0;
    start[static_cast<size_t>(it)].record(stream.get());
    run(sets[static_cast<size_t>(o.warmup + it) % sets.size()]);
    stop[static_cast<size_t>(it)].record(stream.get());
  }
  stream.synchronize();

  BenchResult r;
  r.blocks = blocks;
  r.splits = splits;
  r.device = dev.name;
  r.sets = static_cast<int>(sets.size());
  r.set_bytes = set_bytes;
  for (int it = 0; it < o.iters; ++it)
    r.ms.push_back(stop[static_cast<size_t>(it)].ms_since(start[static_cast<size_t>(it)]));
  r.median_ms = median_of(r.ms);
  r.min_ms = *std::min_element(r.ms.begin(), r.ms.end());
  r.max_ms = *std::max_element(r.ms.begin(), r.ms.end());
  r.flops = attention_flops(pr, pass);
  r.tflops = r.flops / (r.median_ms * 1e-3) / 1e12;
  if (o.per_kernel) {
    fill_kernel_times(kernel_times, launched, start, marks);
    r.kernels = std::move(kernel_times);
  }
  return r;
}

}  // namespace iosim::harness
