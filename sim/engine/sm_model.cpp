#include "sim/engine/sm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/common/error.h"
#include "sim/engine/compiler_order.h"

namespace iosim::engine {

using schedule::Instr;
using schedule::Pipe;
using schedule::WarpProgram;

namespace {

constexpr i64 kWarpsPerGroup = 4;  // a warpgroup (wgmma, turn taking)
constexpr double kInf = std::numeric_limits<double>::infinity();

PipeTiming& pipe_of(SmMachine& m, Pipe p) { return m.pipe[static_cast<size_t>(p)]; }

// The compiler's mean stall count per instruction in our sm_90 kernels
// (nvcc 13.0): the median over 186 kernel functions of their mean
// max(1, stall) (scripts/sass_stalls.py; per function, 2.3-3.1;
// experiments/results/2026-11-25-h100-sass-stalls). A property of the code
// the compiler writes for the architecture, not of one GPU: every profile of
// compute capability 9.x takes it; others keep 1 (not measured).
constexpr double kSm90WarpIssueInterval = 2.75;

double warp_issue_interval(const profile::HardwareProfile& p) {
  return p.compute_capability.rfind("9.", 0) == 0 ? kSm90WarpIssueInterval : 1.0;
}

// A warp's share (16 rows) of wgmma m64n128k16, the shape
// sm_pipes.wgmma_latency is measured at.
constexpr double kWgmmaLatencyFlop = 16.0 * 128 * 16 * 2;

// wgmma's rate per SMSP and its latency beyond the pipe time, from a rate per
// SM and a latency measured at m64n128k16. The part beyond the pipe time is
// taken as independent of N (a smaller wgmma is shorter in the pipe, not in
// the fetch and write-back around it).
void set_wgmma(SmMachine& m, double flop_per_sm_cycle, double latency_m64n128) {
  m.wgmma_flop_per_cycle = std::max(flop_per_sm_cycle, 1.0) / kSmsps;
  m.wgmma_extra_latency = std::max(0.0, latency_m64n128 - kWgmmaLatencyFlop / m.wgmma_flop_per_cycle);
}

}  // namespace

double warp_hold_cycles(const SmMachine& m, const schedule::Instr& in) {
  switch (in.op) {
    case schedule::Op::branch_taken: return std::max(m.warp_issue_interval, m.branch_taken_cycles);
    case schedule::Op::branch_not_taken: return std::max(m.warp_issue_interval, m.branch_not_taken_cycles);
    case schedule::Op::reconverge: return std::max(m.warp_issue_interval, m.reconverge_cycles);
    default: return m.warp_issue_interval;
  }
}

double pipe_cycles(const SmMachine& m, const schedule::Instr& in) {
  if (in.op == schedule::Op::wgmma) return static_cast<double>(in.flop) / m.wgmma_flop_per_cycle;
  return m.pipe[static_cast<size_t>(in.pipe)].interval;
}

SmMachine sm_machine(const profile::HardwareProfile& p) {
  SmMachine m;
  if (p.sm_pipes.present) {  // measured by iosim calibrate
    const auto& s = p.sm_pipes;
    auto lanes = [](double per_sm) { return 32.0 * kSmsps / per_sm; };  // cycles per warp instruction per SMSP
    pipe_of(m, Pipe::tensor) = {4096.0 * kSmsps / s.mma_f16_flop_per_cycle, s.mma_latency_cycles};
    pipe_of(m, Pipe::fma) = {lanes(s.fp32_op_per_cycle), s.fp32_latency_cycles};
    pipe_of(m, Pipe::alu) = {lanes(s.alu_op_per_cycle), s.alu_latency_cycles};
    pipe_of(m, Pipe::mufu) = {lanes(s.mufu_ex2_op_per_cycle), s.mufu_latency_cycles};
    pipe_of(m, Pipe::shfl) = {lanes(s.shfl_op_per_cycle), s.shfl_latency_cycles};
    pipe_of(m, Pipe::smem) = {1, std::max(1.0, p.smem_latency_cycles)};
    pipe_of(m, Pipe::global) = {1, std::max(1.0, 0.5 * (p.l2_near_latency_cycles + p.l2_far_latency_cycles))};
    pipe_of(m, Pipe::barrier) = {1, s.barrier_latency_cycles};
    pipe_of(m, Pipe::uniform) = {1, s.alu_latency_cycles};  // its own pipe: one a cycle, as the issue allows
    m.smem_bytes_per_cycle = s.smem_ldmatrix_bytes_per_cycle;
    // Reductions drain at the measured rate with every SM reducing, and a
    // step is no shorter than its drain; the warps do not wait for them (a
    // queue of unbounded depth): with the measured queue (sm_pipes.red_queue)
    // the warps idle in lockstep behind their bursts and every FA2 backward
    // tile is predicted 1.1-1.5x slow (docs/engine.md, "Reductions").
    if (s.red_bytes_per_cycle > 0) {
      m.red_bytes_per_cycle = s.red_bytes_per_cycle;
      m.red_queue_cycles = std::numeric_limits<double>::infinity();
    }
    if (s.store_fragment_inst_per_cycle > 0 && s.store_rows_inst_per_cycle > 0) {
      m.store_fragment_cycles = 1.0 / s.store_fragment_inst_per_cycle;
      m.store_rows_cycles = 1.0 / s.store_rows_inst_per_cycle;
      m.store_queue_cycles = s.store_queue_cycles;
    }
    m.warp_issue_interval = warp_issue_interval(p);
    m.branch_taken_cycles = s.branch_taken_cycles;
    m.branch_not_taken_cycles = s.branch_not_taken_cycles;
    m.reconverge_cycles = 0.5 * s.branch_reconverge_cycles;  // the pair's cost, half to each
    m.clock_tensor_hz = s.clock_tensor_load_hz;
    m.clock_wgmma_hz = s.clock_wgmma_load_hz > 0 ? s.clock_wgmma_load_hz : s.clock_tensor_load_hz;
    m.clock_other_hz = s.clock_memory_load_hz;
    m.measured = true;
    m.source = "sm_pipes of profile '" + p.name + "' (iosim calibrate)";
    // wgmma (sm_90a) is measured only where calibrate ran on a Hopper GPU.
    // Without the rate, a wgmma takes the tensor pipe as long as the
    // mma.sync m16n8k16 of its FLOP would; without the latency, its result
    // comes mma.sync's latency beyond its interval after the pipe is done.
    const PipeTiming mma = pipe_of(m, Pipe::tensor);
    const bool rate = s.wgmma_f16_flop_per_cycle > 0, latency = s.wgmma_latency_cycles > 0;
    const double rate_per_sm = rate ? s.wgmma_f16_flop_per_cycle : s.mma_f16_flop_per_cycle;
    const double fallback_latency = kWgmmaLatencyFlop / (rate_per_sm / kSmsps) + std::max(0.0, mma.latency - mma.interval);
    set_wgmma(m, rate_per_sm, latency ? s.wgmma_latency_cycles : fallback_latency);
    if (!rate) m.source += "; wgmma at the mma.sync rate (the profile has no sm_pipes.wgmma_f16)";
    if (!latency)
      m.source += "; wgmma's latency beyond its pipe time = mma.sync's (the profile has no sm_pipes.wgmma_latency)";
    if (s.branch_taken_cycles <= 0)
      m.source += "; branches hold a warp no longer than other instructions (the profile has no sm_pipes.branch_taken)";
    return m;
  }
  const double sms = static_cast<double>(p.sm_count), clk = p.sm_clock_hz;
  // Datasheet-derived throughputs: lanes (or FLOP) per SM per cycle at the
  // profile's clock, split over the 4 SMSPs.
  const double tensor_per_sm = p.tensor_fp16_flops_per_s / (sms * clk);      // FLOP per SM per cycle
  const double fma_lanes = p.fp32_flops_per_s / 2 / (sms * clk);              // FMA lanes per SM
  const double mufu_lanes = p.sfu_ops_per_s / (sms * clk);                     // MUFU lanes per SM
  pipe_of(m, Pipe::tensor) = {4096.0 * kSmsps / std::max(tensor_per_sm, 1.0), 24};
  pipe_of(m, Pipe::fma) = {32.0 * kSmsps / std::max(fma_lanes, 1.0), 4};
  pipe_of(m, Pipe::alu) = {2, 4};
  pipe_of(m, Pipe::mufu) = {32.0 * kSmsps / std::max(mufu_lanes, 1.0), 17};
  pipe_of(m, Pipe::shfl) = {4, 24};
  pipe_of(m, Pipe::smem) = {1, std::max(1.0, p.smem_latency_cycles)};
  pipe_of(m, Pipe::global) = {1, std::max(1.0, 0.5 * (p.l2_near_latency_cycles + p.l2_far_latency_cycles))};
  pipe_of(m, Pipe::barrier) = {1, 20};
  pipe_of(m, Pipe::uniform) = {1, 4};
  m.smem_bytes_per_cycle = 128;
  m.warp_issue_interval = warp_issue_interval(p);
  m.clock_tensor_hz = clk;
  m.clock_wgmma_hz = clk;
  m.clock_other_hz = clk;
  // wgmma at the datasheet tensor rate, with the assumed latency beyond the
  // pipe time that mma.sync has here.
  const PipeTiming mma = pipe_of(m, Pipe::tensor);
  set_wgmma(m, tensor_per_sm, kWgmmaLatencyFlop / (std::max(tensor_per_sm, 1.0) / kSmsps) + mma.latency - mma.interval);
  m.measured = false;
  m.source = "datasheet rates of profile '" + p.name + "'; latencies assumed (Hopper-like)";
  return m;
}

double SmModel::step_cycles(const WarpProgram& program, i64 warps, i64 ctas, bool external_loads) {
  if (warps < 1 || ctas < 1) throw InputError("SM model: a step needs at least one warp and one CTA");
  const auto key = std::make_tuple(&program, warps, ctas, external_loads);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  double t = 0;
  if (program.code.empty()) {
    t = 0;
  } else {
    // Long programs run once per CTA (initialisation, conversion): one pass.
    const int steps = program.code.size() > 20000 ? 1 : 5;
    t = simulate(issue_order(program), warps, ctas, steps, stagger(program, warps, ctas, external_loads),
                 external_loads);
  }
  cache_[key] = t;
  return t;
}

namespace {

// The instructions after the first barrier that follows the program's first
// global load (one that waits for memory), with their sources renumbered;
// empty when there is none.
WarpProgram part_after_loads(const WarpProgram& program) {
  const auto& code = program.code;
  size_t k = 0;
  while (k < code.size() && !(code[k].pipe == Pipe::global && code[k].bytes > 0)) ++k;
  while (k < code.size() && code[k].pipe != Pipe::barrier) ++k;
  WarpProgram out;
  out.name = program.name + " (after its loads)";
  out.issue_order_fixed = program.issue_order_fixed;
  if (k >= code.size()) return out;
  const auto first = static_cast<std::int32_t>(k + 1);
  for (const auto& [at, name] : program.regions) {
    if (at <= first) out.regions.clear();  // the region the part begins in
    out.regions.emplace_back(std::max(at - first, 0), name);
  }
  for (size_t i = k + 1; i < code.size(); ++i) {
    Instr in = code[i];
    int kept = 0;
    for (int s = 0; s < in.sources; ++s)
      if (in.source[s] >= first) in.source[kept++] = in.source[s] - first;  // earlier ones are done
    for (int s = kept; s < Instr::kMaxSources; ++s) in.source[s] = -1;
    in.sources = static_cast<std::uint8_t>(kept);
    out.code.push_back(in);
    out.origin.push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

}  // namespace

const WarpProgram& SmModel::after_loads_part(const WarpProgram& program) {
  auto it = after_loads_.find(&program);
  if (it == after_loads_.end()) it = after_loads_.emplace(&program, part_after_loads(program)).first;
  return it->second;
}

double SmModel::after_loads_cycles(const WarpProgram& program, i64 warps, i64 ctas) {
  const WarpProgram& part = after_loads_part(program);
  return part.code.empty() ? 0 : step_cycles(part, warps, ctas, true);
}

SmModel::Walk SmModel::walk(const WarpProgram& program, i64 warps, i64 ctas, bool external_loads) {
  if (warps < 1 || ctas < 1) throw InputError("SM model: a step needs at least one warp and one CTA");
  Walk out;
  const size_t n = program.code.size();
  out.issue.assign(n, 0.0);
  out.waited.assign(n, 0.0);
  if (n == 0) return out;
  constexpr int kSteps = 5;
  const WarpProgram& ordered = issue_order(program);
  std::vector<double> times;
  simulate(ordered, warps, ctas, kSteps, stagger(program, warps, ctas, external_loads), external_loads, &times);
  // The last step's issues, against the one before's last (the wait before
  // the step's first instruction is the step boundary's).
  const size_t last = (kSteps - 1) * n;
  const double start = times[last];
  out.step = start - times[last - n];
  for (size_t k = 0; k < n; ++k) {
    const size_t src = &ordered == &program || ordered.origin.empty() ? k : static_cast<size_t>(ordered.origin[k]);
    out.issue[src] = times[last + k] - start;
    out.waited[src] = times[last + k] - times[last + k - 1];
  }
  return out;
}

double SmModel::stagger(const WarpProgram& program, i64 warps, i64 ctas, bool external_loads) {
  return ctas > 1 ? step_cycles(program, warps, 1, external_loads) / static_cast<double>(ctas) : 0;
}

const WarpProgram& SmModel::issue_order(const WarpProgram& program) {
  if (program.issue_order_fixed) return program;
  auto it = ordered_.find(&program);
  if (it == ordered_.end()) it = ordered_.emplace(&program, compiler_order(program, m_)).first;
  return it->second;
}

double SmModel::simulate(const WarpProgram& program, i64 warps, i64 ctas, int steps, double stagger,
                         bool external_loads, std::vector<double>* warp0_issue) const {
  const std::vector<Instr>& code = program.code;
  const size_t n = code.size();
  struct Warp {
    i64 cta = 0;
    int smsp = 0;
    size_t pc = 0;
    int step = 0;
    double not_before = 0;  // start, or a barrier's release
    double next_issue = 0;  // the control code's hold after the last issue (fractional: its mean)
    bool waiting = false;   // arrived at a barrier
    i64 turns_waited = 0;   // turn_wait instructions issued (all steps)
    std::vector<double> ready;
  };
  struct Cta {
    i64 arrived = 0;
    std::vector<i64> passes;  // per warpgroup: turn_pass instructions issued by its warps
    std::vector<double> step_end;
    i64 done_warps_in_step = 0;
  };
  const i64 total = warps * ctas;
  std::vector<Warp> w(static_cast<size_t>(total));
  std::vector<Cta> c(static_cast<size_t>(ctas));
  std::array<std::vector<i64>, kSmsps> members;
  for (i64 k = 0; k < total; ++k) {
    Warp& x = w[static_cast<size_t>(k)];
    x.cta = k / warps;
    x.smsp = static_cast<int>(k % kSmsps);
    x.not_before = static_cast<double>(x.cta) * stagger;
    x.ready.assign(n, 0.0);
    members[static_cast<size_t>(x.smsp)].push_back(k);
  }
  for (Cta& cc : c) {
    cc.step_end.assign(static_cast<size_t>(steps), 0.0);
    cc.passes.assign(static_cast<size_t>(std::max<i64>(warps / kWarpsPerGroup, 0)), 0);
  }
  std::array<std::array<double, schedule::kPipeCount>, kSmsps> pipe_free{};
  std::array<size_t, kSmsps> rr{};
  double smem_free = 0;
  double red_free = 0;  // the SM's reduction port
  const bool red_port = m_.red_bytes_per_cycle > 0;
  double store_free = 0;  // the SM's store port
  const bool store_port = m_.store_fragment_cycles > 0 && m_.store_rows_cycles > 0;
  auto is_store = [](const Instr& in) {
    return in.op == schedule::Op::store || in.op == schedule::Op::store_fragment;
  };
  auto store_port_cycles = [&](const Instr& in) {
    return in.op == schedule::Op::store_fragment ? m_.store_fragment_cycles : m_.store_rows_cycles;
  };
  i64 finished = 0;
  double t = 0;
  // The SM's issue rate while every CTA is resident and none has finished:
  // from the last CTA's start to the first CTA's last step.
  const double window_start = static_cast<double>(ctas - 1) * stagger;
  double window_end = -1;
  std::vector<double> issue_times;  // of every instruction, in order
  if (ctas > 1) issue_times.reserve(n * static_cast<size_t>(total) * static_cast<size_t>(steps));
  std::vector<i64> warps_done(static_cast<size_t>(ctas), 0);

  // Warpgroups (4 warps each) take turns where the program says so
  // (Op::turn_wait / turn_pass); with fewer than two there is no one to wait for.
  const i64 groups = warps / kWarpsPerGroup;
  auto turn_blocked = [&](const Warp& x, i64 warp_in_cta) {
    if (groups < 2) return false;
    const i64 g = warp_in_cta / kWarpsPerGroup;
    if (g >= groups) return false;
    const i64 prev = (g + groups - 1) % groups;
    const i64 turns = x.turns_waited + (g == 0 ? 0 : 1);  // warpgroup 0 goes first
    return c[static_cast<size_t>(x.cta)].passes[static_cast<size_t>(prev)] < kWarpsPerGroup * turns;
  };
  auto earliest = [&](const Warp& x) {
    if (x.step >= steps || x.waiting) return kInf;
    const Instr& in = code[x.pc];
    if (in.op == schedule::Op::turn_wait && turn_blocked(x, (&x - w.data()) % warps)) return kInf;
    double e = std::max({t, x.not_before, x.next_issue});
    for (int s = 0; s < in.sources; ++s) e = std::max(e, x.ready[static_cast<size_t>(in.source[s])]);
    // A wgmma does not wait for the tensor pipe: it queues there (below).
    // Known: the simulation steps whole cycles, so a fractional interval is
    // rounded up at every issue (FMA's 1.06 cycles per warp instruction runs
    // at 2, ALU's 2.05 at 3). Carrying the fraction instead (tried
    // 2026-11-28) makes the ALU-bound row softmax right (1.32 -> 0.94 of
    // measured) but the grid's held-out pass time 11% off instead of 5.6%:
    // the rounding stands in for costs the programs lack, IMAD's half rate
    // (fmaheavy only) first among them (docs/engine.md, "Pipe intervals").
    if (in.pipe != Pipe::barrier && in.op != schedule::Op::wgmma)
      e = std::max(e, pipe_free[static_cast<size_t>(x.smsp)][static_cast<size_t>(in.pipe)]);
    // Shared-memory instructions queue for the SM's port (the MIO queue):
    // a warp stalls only when the backlog exceeds the queue's depth.
    if (in.pipe == Pipe::smem || in.op == schedule::Op::local) e = std::max(e, smem_free - m_.smem_queue_cycles);
    if (in.op == schedule::Op::reduce && red_port) e = std::max(e, red_free - m_.red_queue_cycles);
    if (store_port && is_store(in)) e = std::max(e, store_free - m_.store_queue_cycles);
    return e;
  };

  while (finished < total) {
    bool issued = false;
    for (int s = 0; s < kSmsps; ++s) {
      const auto& list = members[static_cast<size_t>(s)];
      // Greedy then oldest: the warp that issued last keeps issuing while it
      // can, otherwise the oldest ready warp (the lowest slot).
      for (size_t probe = 0; probe <= list.size(); ++probe) {
        const size_t slot = probe == 0 ? rr[static_cast<size_t>(s)] : probe - 1;
        if (slot >= list.size() || (probe > 0 && slot == rr[static_cast<size_t>(s)])) continue;
        Warp& x = w[static_cast<size_t>(list[slot])];
        if (earliest(x) > t) continue;
        const Instr& in = code[x.pc];
        const PipeTiming& pt = m_.pipe[static_cast<size_t>(in.pipe)];
        double done = t + pt.latency;
        if (in.op == schedule::Op::wgmma) {
          // Asynchronous: the SMSP's tensor pipe takes it after what it holds
          // (in order), for its FLOP at the wgmma rate; the warp goes on. Its
          // shared-memory operands are not charged to the SM's port: the rate
          // is measured with both operands read from shared memory, so it
          // already holds their reads.
          double& busy = pipe_free[static_cast<size_t>(s)][static_cast<size_t>(Pipe::tensor)];
          busy = std::max(busy, t) + pipe_cycles(m_, in);
          done = busy + m_.wgmma_extra_latency;
        } else if (in.op == schedule::Op::wgmma_wait) {
          done = t + 1;  // its sources (the wgmmas it waits for) were ready when it issued
        } else if (in.op == schedule::Op::local_miss) {
          done = t + pt.latency;  // from the L2, whatever the engine's loads
        } else if (in.pipe == Pipe::smem || in.op == schedule::Op::local) {
          const double transfer = static_cast<double>(in.bytes) / m_.smem_bytes_per_cycle;
          smem_free = std::max(smem_free, t) + transfer;
          done = smem_free + m_.pipe[static_cast<size_t>(Pipe::smem)].latency;
        } else if (store_port && is_store(in)) {
          store_free = std::max(store_free, t) + store_port_cycles(in);
          done = store_free;  // the warp's step ends once it has drained
        } else if (in.op == schedule::Op::reduce) {
          if (red_port) red_free = std::max(red_free, t) + static_cast<double>(in.bytes) / m_.red_bytes_per_cycle;
          done = t + 1;  // nothing comes back
        } else if (in.pipe == Pipe::global && (in.bytes == 0 || external_loads)) {
          done = t + 1;  // a store, an asynchronous copy, or a load the engine waits for
        }
        if (in.pipe != Pipe::barrier && in.op != schedule::Op::wgmma)
          pipe_free[static_cast<size_t>(s)][static_cast<size_t>(in.pipe)] = t + pt.interval;
        x.ready[x.pc] = done;
        if (warp0_issue && &x == w.data()) warp0_issue->push_back(t);
        // The hold runs from the cycle the warp was due (its fractional mean
        // carries over), or from now when something else kept it waiting.
        x.next_issue = (t > std::ceil(x.next_issue) ? t : x.next_issue) + warp_hold_cycles(m_, in);
        ++x.pc;
        if (ctas > 1) issue_times.push_back(t);
        rr[static_cast<size_t>(s)] = slot;
        issued = true;
        Cta& cc = c[static_cast<size_t>(x.cta)];
        const i64 group = ((&x - w.data()) % warps) / kWarpsPerGroup;
        if (in.op == schedule::Op::turn_wait) ++x.turns_waited;
        if (in.op == schedule::Op::turn_pass && group < static_cast<i64>(cc.passes.size()))
          ++cc.passes[static_cast<size_t>(group)];
        if (in.pipe == Pipe::barrier) {
          x.waiting = true;
          if (++cc.arrived == warps) {  // the last warp: release the CTA
            cc.arrived = 0;
            const double release = t + pt.latency;
            for (i64 k = x.cta * warps; k < (x.cta + 1) * warps; ++k) {
              w[static_cast<size_t>(k)].waiting = false;
              w[static_cast<size_t>(k)].not_before = release;
            }
          }
        }
        if (x.pc == n) {  // the warp's step is done once its last results are in
          double end = t + 1;
          for (const double r : x.ready) end = std::max(end, r);
          double& se = cc.step_end[static_cast<size_t>(x.step)];
          se = std::max(se, end);
          ++x.step;
          x.pc = 0;
          std::fill(x.ready.begin(), x.ready.end(), 0.0);
          x.not_before = std::max(x.not_before, end);
          if (x.step == steps) {
            ++finished;
            if (++warps_done[static_cast<size_t>(x.cta)] == warps && window_end < 0) window_end = end;
          }
        }
        break;  // one instruction per SMSP per cycle
      }
    }
    if (issued) {
      t += 1;
      continue;
    }
    double next = kInf;
    for (const Warp& x : w) next = std::min(next, earliest(x));
    if (next == kInf) throw std::logic_error("SM model: no warp can proceed (barrier mismatch in " + program.name + ")");
    t = std::max(t + 1, std::ceil(next));
  }
  // The SM's reductions and stores drain no faster than their ports: a floor
  // on the period that a queue longer than the simulated steps would hide (or
  // warps running their steps one after another without a barrier).
  double red_bytes = 0;
  if (red_port)
    for (const Instr& in : code)
      if (in.op == schedule::Op::reduce) red_bytes += static_cast<double>(in.bytes);
  double store_cycles = 0;  // the same for the store port
  if (store_port)
    for (const Instr& in : code)
      if (is_store(in)) store_cycles += store_port_cycles(in);
  const double drain = std::max(red_port ? red_bytes * static_cast<double>(warps * ctas) / m_.red_bytes_per_cycle : 0.0,
                                store_cycles * static_cast<double>(warps * ctas));
  if (steps == 1) {
    double end = 0;
    for (const Cta& cc : c) end = std::max(end, cc.step_end[0]);
    return std::max(end, drain);
  }
  double sum = 0;
  for (const Cta& cc : c) sum += (cc.step_end.back() - cc.step_end.front()) / static_cast<double>(steps - 1);
  const double mean_period = sum / static_cast<double>(ctas);
  if (ctas == 1 || window_end <= window_start) return std::max(mean_period, drain);
  // Several CTAs: the scheduler's greedy-then-oldest order lets the first
  // CTAs run ahead and the last ones finish alone, so a CTA's own period
  // is not the SM's rate; the period is the work of one step of every CTA
  // at the rate the SM issued while all were resident.
  const auto first = std::lower_bound(issue_times.begin(), issue_times.end(), window_start);
  const auto last = std::upper_bound(issue_times.begin(), issue_times.end(), window_end);
  const double rate = static_cast<double>(last - first) / (window_end - window_start);
  const double per_round = static_cast<double>(n) * static_cast<double>(warps * ctas);
  return std::max(per_round / rate, drain);
}

}  // namespace iosim::engine
