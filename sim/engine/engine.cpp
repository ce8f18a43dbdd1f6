#include "sim/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "sim/common/error.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/fast_forward.h"
#include "sim/engine/sm_model.h"
#include "sim/engine/step_jitter.h"
#include "sim/engine/timeline.h"

namespace iosim::engine {

namespace {

using u32 = std::uint32_t;

// Whether any program of the kernel issues wgmma: such a kernel runs at the
// clock the SM holds under wgmma load, not mma.sync's.
bool issues_wgmma(const schedule::KernelPrograms& k) {
  for (const auto& p : k.programs)
    for (const auto& in : p.code)
      if (in.op == schedule::Op::wgmma) return true;
  return false;
}

// The SM clock a wgmma kernel runs at. calibrate measures two ends of the
// power-limited clock: wgmma flat out (clock_wgmma_load: 1604 MHz on the
// H200) and no tensor work (clock_memory_load: 1979). A kernel whose wgmmas
// keep the tensor pipe busy a fraction u of the time is taken to run at the
// clock linearly between them: the power the tensor cores draw scales with
// their busy time. u comes from the SM model: the main step's wgmma FLOP over
// what the pipe could do in the step's cycles at occupancy. Not fitted: two
// measured ends and an assumption, stated in docs/engine.md with the clocks
// Nsight Compute measured for FA3 (d 128: u 0.76, 1677-1715 MHz; d 64: u
// 0.44, 1752-1782; this rule gives 1695 and 1815).
double wgmma_run_clock(const schedule::KernelPrograms& k, SmModel& sm, i64 warps, i64 ctas) {
  const SmMachine& m = sm.machine();
  const schedule::WarpProgram* main = k.find(schedule::kMainStep);
  if (main == nullptr || !(m.clock_other_hz > m.clock_wgmma_hz) || !(m.wgmma_flop_per_cycle > 0)) return m.clock_wgmma_hz;
  double flop = 0;
  for (const auto& in : main->code)
    if (in.op == schedule::Op::wgmma) flop += in.flop;
  const double cycles = sm.step_cycles(*main, warps, ctas);
  if (!(cycles > 0)) return m.clock_wgmma_hz;
  const double busy = std::min(1.0, flop * static_cast<double>(warps * ctas) / (cycles * kSmsps * m.wgmma_flop_per_cycle));
  return m.clock_other_hz + busy * (m.clock_wgmma_hz - m.clock_other_hz);
}

// Per-SM arithmetic rates, per cycle: how a step without a warp program (a
// trace file that gives none) is timed, its tensor, FP32 and SFU work added.
struct SmRates {
  double tensor = 0;  // FLOP/cycle for the data type
  double fp32 = 0;    // FP32 instructions/cycle (FMA counted once)
  double sfu = 0;     // SFU ops/cycle
  double tensor_cycles(const trace::ComputeWork& w) const { return static_cast<double>(w.tensor_flops) / tensor; }
  double fp32_sfu_cycles(const trace::ComputeWork& w) const {
    return static_cast<double>(w.fp32_ops) / fp32 + static_cast<double>(w.sfu_ops) / sfu;
  }
};

double tensor_rate(const profile::HardwareProfile& p, workload::DType dt) {
  switch (dt) {
    case workload::DType::fp16: return p.tensor_fp16_flops_per_s;
    case workload::DType::bf16: return p.tensor_bf16_flops_per_s;
    case workload::DType::fp32: return p.fp32_flops_per_s;  // no TF32: fp32 matmuls on the FP32 pipes
  }
  return 0;
}

SmRates sm_rates(const profile::HardwareProfile& p, workload::DType dt) {
  const double per_sm_cycle = 1.0 / (static_cast<double>(p.sm_count) * p.sm_clock_hz);
  SmRates r{tensor_rate(p, dt) * per_sm_cycle, p.fp32_flops_per_s / 2 * per_sm_cycle, p.sfu_ops_per_s * per_sm_cycle};
  if (!(r.tensor > 0))
    throw InputError("profile '" + p.name + "' has no " + std::string(workload::to_string(dt)) +
                     " matrix rate (valid data types for it: those with a positive tensor rate)");
  if (!(r.fp32 > 0) || !(r.sfu > 0)) throw InputError("profile '" + p.name + "' needs positive FP32 and SFU rates");
  return r;
}

// Runs one kernel from time t0 (cycles) to its end.
class KernelRunner {
 public:
  KernelRunner(const trace::RangeKernel& k, const profile::HardwareProfile& p, const SmRates& rates,
               const Occupancy& occ, memory::MemorySystem& mem, Timeline* timeline, SmModel& sm_model,
               ProgressSink* progress, trace::TensorIndex local_tensor, bool fast_forward)
      : kernel_(k),
        grid_(k.grid()),
        stages_(std::max(1, k.pipeline_stages())),
        rates_(rates),
        mem_(mem),
        timeline_(timeline),
        progress_(progress),
        sm_count_(static_cast<int>(p.sm_count)),
        per_sm_(static_cast<int>(occ.ctas_per_sm)),
        partitions_(static_cast<int>(std::max<i64>(1, p.l2_partitions))),
        total_ctas_(grid_.count()),
        local_(local_memory(k.programs(), p, occ.ctas_per_sm, occ.smem_per_cta)),
        programs_(local_.programs),
        sm_model_(sm_model),
        step_jitter_(p.sm_pipes.present ? p.sm_pipes.step_jitter : 0),
        cta_priority_(p.sm_pipes.present ? p.sm_pipes.cta_priority : 0),
        local_tensor_(local_tensor) {
    if (programs_) {
      warps_ = std::max<i64>(1, programs_->warps);
      const SmMachine& m = sm_model_.machine();
      const double run_clock = !programs_->tensor           ? m.clock_other_hz
                               : issues_wgmma(*programs_) ? wgmma_run_clock(*programs_, sm_model_, warps_, per_sm_)
                                                          : m.clock_tensor_hz;
      clock_scale_ = run_clock > 0 ? p.sm_clock_hz / run_clock : 1.0;
    }
    if (static_cast<i64>(sm_count_) * per_sm_ > (i64{1} << EventQueue::kSlotBits))
      throw InputError("profile '" + p.name + "': more than 2^18 resident CTAs (SMs x CTAs per SM) are not supported");
    slots_.resize(static_cast<size_t>(sm_count_) * static_cast<size_t>(per_sm_));
    events_ = EventQueue(static_cast<u32>(slots_.size()));
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i].sm = static_cast<int>(i) / per_sm_;
      slots_[i].slot = static_cast<int>(i) % per_sm_;
      slots_[i].partition = slots_[i].sm * partitions_ / sm_count_;  // SMs split evenly between L2 partitions
      slots_[i].ring.resize(static_cast<size_t>(stages_));
    }
    pipe_free_.assign(static_cast<size_t>(sm_count_), 0);
    load_port_free_.assign(static_cast<size_t>(sm_count_), 0);
    resident_.assign(static_cast<size_t>(sm_count_), 0);
    // One SM pulls L2 data at most this fast (calibrate: one SM re-reading
    // L2-resident data); without a measured value, no per-SM limit.
    if (p.sm_pipes.present && p.sm_pipes.l2_load_bytes_per_cycle > 0)
      load_cycles_per_byte_ = 1.0 / p.sm_pipes.l2_load_bytes_per_cycle;
    first_byte_cycles_ = std::max(0.0, p.l2_near_latency_cycles);
    sector_bytes_ = std::max<i64>(1, p.l2_sector_bytes);
    prefetch_ = mem_.l2().set_sampling() == 1;
    if (fast_forward && !timeline_) plan_fast_forward(p);
  }

  // Returns the kernel's end time.
  double run(double t0) {
    end_ = t0;
    // Launch order: one CTA per SM across the SMs, then a second per SM, ...
    for (int r = 0; r < per_sm_; ++r)
      for (int sm = 0; sm < sm_count_; ++sm)
        if (queued_ < ctas_to_run()) {
          ++queued_;
          slots_[static_cast<size_t>(sm * per_sm_ + r)].first_wave = true;
          push(t0, static_cast<u32>(sm * per_sm_ + r), EventKind::dispatch);
        }
    EventQueue::Entry e;
    while (events_.pop(e)) {
      const u32 slot = e.slot;
      Slot& s = slots_[slot];
      switch (static_cast<EventKind>(e.kind)) {
        case EventKind::dispatch: dispatch(s, slot, e.t); break;
        case EventKind::compute_ready: start_compute(s, slot, e.t); break;
        case EventKind::compute_end: end_compute(s, slot, e.t); break;
        case EventKind::load_round: next_round(s, slot, e.t); break;
      }
    }
    if (progress_) progress_->add(steps_ % kProgressEverySteps);
    finish_step_skip();
    return end_;
  }

  trace::ComputeWork compute() const { return compute_; }
  double clock_scale() const { return clock_scale_; }
  const std::array<i64, schedule::kPipeCount>& instructions() const { return instructions_; }
  std::vector<KernelResult::ProgramTiming> program_timings() {
    std::vector<KernelResult::ProgramTiming> out;
    if (!programs_) return out;
    for (const schedule::WarpProgram& prog : programs_->programs) {
      if (prog.code.empty()) continue;
      out.push_back({prog.name, prog.count_by_pipe(), sm_model_.step_cycles(prog, warps_, 1),
                     sm_model_.step_cycles(prog, warps_, std::max(1, per_sm_))});
    }
    return out;
  }
  bool sm_model_used() const { return programs_ != nullptr; }
  const LocalTraffic& local_totals() const { return local_totals_; }
  i64 local_l1_bytes() const { return local_.l1_bytes; }
  i64 steps() const { return steps_ + skipped_.steps; }
  double pipe_busy() const { return pipe_busy_ + skipped_pipe_busy_; }
  double fp32_sfu_busy() const { return fp32_sfu_busy_ + skipped_fp32_sfu_busy_; }
  // Fast-forward: the skipped work's share of the memory counters (zero when
  // nothing was skipped) and what the kernel result reports of it.
  const memory::MemoryCounters& skipped_memory() const { return skipped_memory_; }
  KernelResult::FastForward fast_forward() const {
    KernelResult::FastForward f;
    f.skipped_steps = skipped_.steps;
    f.skipped_cycles = skipped_cycles_;
    if (cta_skip_.active()) {
      f.window_ctas = cta_skip_.window;
      f.skipped_ctas = cta_skip_.skip_end - cta_skip_.skip_begin;
    } else if (skipped_.steps > 0) {
      f.window_steps = step_skip_.window;
    }
    return f;
  }

 private:
  enum class EventKind : std::uint8_t { dispatch, compute_ready, compute_end, load_round };
  // A step whose loads have been issued into a pipeline buffer.
  struct Buffered {
    trace::RangeStep step;
    double issued = 0, ready = 0;
    i64 index = 0;
    int round = 0, rounds = 1;  // load rounds issued, and in all
  };
  // The counters at a moment (fast-forward's windows).
  struct Snapshot {
    double t = 0;
    memory::MemoryCounters memory;
    double pipe_busy = 0, fp32_sfu_busy = 0;
    // What happened since `since`.
    Snapshot minus(const Snapshot& since) const {
      return {t - since.t, memory.minus(since.memory), pipe_busy - since.pipe_busy, fp32_sfu_busy - since.fp32_sfu_busy};
    }
  };
  struct Slot {
    int sm = 0, slot = 0, partition = 0;
    i64 cta = 0;
    std::unique_ptr<trace::StepCursor> cursor;
    std::vector<Buffered> ring;
    int head = 0, count = 0;
    i64 pulled = 0;
    i64 steps_run = 0;  // the CTA's steps timed so far (its jitter draws)
    bool first_wave = false;  // dispatched at launch, as the SM's `slot`-th CTA
    double priority = 1.0;    // its steps' length over the SM model's (cta_priority_factor)
    bool exhausted = false;
    double start = 0, last_compute_end = 0;
    Snapshot window;      // fast-forward: when the CTA's window of steps opened
    i64 window_step = -1;  // ... at which of its steps (-1: not yet)
    double owed = 0;      // fast-forward: time of the steps its CTAs skipped
    double last_end = 0;  // when its last CTA ended
  };

  // A slot has at most one pending event; ties in time run in push order.
  void push(double t, u32 slot, EventKind kind) { events_.push(slot, t, static_cast<u32>(kind)); }
  int partition(const Slot& s) const { return s.partition; }

  std::string cta_label(const Slot& s) const {
    const i64 x = s.cta % grid_.x, y = (s.cta / grid_.x) % grid_.y, z = s.cta / (grid_.x * grid_.y);
    return kernel_.name() + " (" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
  }

  // Pulls the CTA's next step into a free buffer and issues its loads at t.
  bool issue_next_step(Slot& s, double t) {
    if (s.exhausted || s.count == stages_) return false;
    Buffered& b = s.ring[static_cast<size_t>((s.head + s.count) % stages_)];
    if (step_skip_.active()) skip_steps(s, t);
    if (!s.cursor->next(b.step)) {
      s.exhausted = true;
      return false;
    }
    b.issued = t;
    b.ready = t;
    b.index = s.pulled++;
    b.round = 0;
    b.rounds = programs_ && programs_->loads_in_program ? programs_->rounds_of(b.step.compute.program) : 1;
    issue_round(s, b, t);
    ++s.count;
    if (++steps_ % kProgressEverySteps == 0 && progress_) progress_->add(kProgressEverySteps);
    compute_.tensor_flops += b.step.compute.tensor_flops;
    compute_.fp32_ops += b.step.compute.fp32_ops;
    compute_.sfu_ops += b.step.compute.sfu_ops;
    if (timeline_ && !b.step.loads.empty() && b.ready > t)
      timeline_->slice(s.sm, s.slot, Timeline::kLoadLane + static_cast<int>(b.index % std::min(stages_, 13)), "load", t,
                       b.ready);
    return true;
  }

  // The next round of a step's loads: its share of every tile. A program that
  // loads synchronously waits for one batch of loads before it issues the
  // next, so its tiles are requested in rounds, each when the last arrived.
  void issue_round(Slot& s, Buffered& b, double t) {
    const int part = partition(s);
    const int k = b.round++;
    // The L2's host memory for this round's pieces (the first round) and the
    // next round's, issued later: the cache misses overlap other work.
    if (prefetch_)
      for (int r = k == 0 ? 0 : k + 1; r <= k + 1 && r < b.rounds; ++r)
        for (const auto& a : b.step.loads) mem_.prefetch(round_piece(a, r, b.rounds));
    for (const auto& a : b.step.loads) {
      const trace::RangeAccess piece = round_piece(a, k, b.rounds);
      if (piece.bytes() > 0) b.ready = std::max(b.ready, through_load_port(s, t, piece.bytes(), mem_.load(piece, t, part)));
    }
  }
  // When a load of `bytes` issued at t is in: the memory system's answer, or
  // later when the SM's L2->SM port, busy with its earlier loads, delivers it.
  double through_load_port(const Slot& s, double t, i64 bytes, double ready) {
    if (load_cycles_per_byte_ <= 0) return ready;
    double& port = load_port_free_[static_cast<size_t>(s.sm)];
    port = std::max(port, t + first_byte_cycles_) + static_cast<double>(bytes) * load_cycles_per_byte_;
    return std::max(ready, port);
  }
  static trace::RangeAccess round_piece(const trace::RangeAccess& a, int k, int rounds) {
    if (rounds <= 1) return a;
    trace::RangeAccess p = a;
    const i64 n = rounds;
    if (a.rows >= n) {  // whole rows
      const i64 r0 = a.rows * k / n, r1 = a.rows * (k + 1) / n;
      p.addr = a.addr + static_cast<u64>(r0 * a.stride);
      p.rows = r1 - r0;
      return p;
    }
    // Within each row, in 128-byte lines.
    const i64 lines = ceil_div(a.row_bytes, 128);
    const i64 b0 = std::min(a.row_bytes, lines * k / n * 128), b1 = std::min(a.row_bytes, lines * (k + 1) / n * 128);
    p.addr = a.addr + static_cast<u64>(b0);
    p.row_bytes = b1 - b0;
    return p;
  }

  // The head step's next event: its next load round, or its compute (once
  // its tiles are in).
  void schedule_head(Slot& s, u32 id, double t) {
    const Buffered& h = s.ring[static_cast<size_t>(s.head)];
    if (h.round < h.rounds)
      push(std::max(t, h.ready), id, EventKind::load_round);
    else
      push(std::max(t, h.ready), id, EventKind::compute_ready);
  }
  void next_round(Slot& s, u32 id, double t) {
    Buffered& b = s.ring[static_cast<size_t>(s.head)];
    if (stores_per_round()) issue_stores(s, b, b.round - 1, t);  // the round whose loads are in
    issue_round(s, b, t);
    schedule_head(s, id, t);
  }
  bool stores_per_round() const { return programs_ && programs_->loads_in_program && programs_->stores_per_round; }
  // Round k's share of the step's stores (all of them: k < 0), issued at t.
  void issue_stores(Slot& s, const Buffered& b, int k, double t) {
    const int part = partition(s);
    auto piece = [&](const trace::RangeAccess& a) { return k < 0 ? a : round_piece(a, k, b.rounds); };
    if (prefetch_)
      for (const auto& a : b.step.stores) mem_.prefetch(piece(a));
    for (const auto& a : b.step.stores) {
      const trace::RangeAccess p = piece(a);
      if (p.bytes() <= 0) continue;
      const double done = mem_.store(p, t, part);
      end_ = std::max(end_, done);
      if (timeline_) timeline_->store_slice(s.sm, s.slot, t, done);
    }
  }

  void dispatch(Slot& s, u32 id, double t) {
    if (cta_skip_.window > 0) {
      open_cta_window(t);
      skip_ctas(t);
    }
    s.cta = next_cta_++;
    ++resident_[static_cast<size_t>(s.sm)];
    const i64 x = s.cta % grid_.x, y = (s.cta / grid_.x) % grid_.y, z = s.cta / (grid_.x * grid_.y);
    s.cursor = kernel_.open_cta(x, y, z);
    s.head = s.count = 0;
    s.pulled = 0;
    s.steps_run = 0;
    s.window_step = -1;
    s.priority = s.first_wave ? cta_priority_factor(cta_priority_, first_wave_ctas(s.sm), s.slot) : 1.0;
    s.first_wave = false;
    s.exhausted = false;
    s.start = s.last_compute_end = t;
    while (issue_next_step(s, t)) {
    }
    if (s.count == 0) {
      finish(s, id, t);
      return;
    }
    schedule_head(s, id, t);
  }

  // The step's time on the SM model: its program run by the CTAs resident on
  // the SM now, at the clock the SM holds under this kernel's load.
  bool program_compute(Slot& s, u32 id, double t, const Buffered& b) {
    if (!programs_) return false;
    const schedule::WarpProgram* prog = programs_->find(b.step.compute.program);
    // A step tagged with a program its kernel lacks times by its work, if it
    // has any (a kernel without spills has no FA2 backward prologue to run).
    const auto& c = b.step.compute;
    if (c.program >= 0 && !prog && (c.tensor_flops > 0 || c.fp32_ops > 0 || c.sfu_ops > 0)) return false;
    const i64 ctas = std::max<i64>(1, resident_[static_cast<size_t>(s.sm)]);
    // A program that loads its own tiles runs while they arrive: its load
    // waits are the engine's rounds, so it is timed without them, from the
    // step's start, and ends no earlier than its last round, nor before the
    // part after its loads' barrier has run from then.
    const bool own_loads = programs_->loads_in_program;
    const double duration = prog ? sm_model_.step_cycles(*prog, warps_, ctas, own_loads) * clock_scale_ *
                                       step_jitter_factor(step_jitter_, s.cta, s.steps_run++) * s.priority
                                 : 0;
    if (prog) account_busy(*prog, duration);
    if (prog && local_.any()) issue_local(s, b.step.compute.program, t);
    double end = std::max(t, (own_loads ? b.issued : t) + duration);
    // What follows its loads' barrier starts once the last round is in (t).
    if (prog && own_loads) end = std::max(end, t + sm_model_.after_loads_cycles(*prog, warps_, ctas) * clock_scale_);
    if (timeline_) {
      if (t > s.last_compute_end) timeline_->slice(s.sm, s.slot, Timeline::kCtaLane, "wait", s.last_compute_end, t);
      if (end > t) timeline_->slice(s.sm, s.slot, Timeline::kCtaLane, "compute", t, end);
    }
    push(end, id, EventKind::compute_end);
    return true;
  }

  // The CTAs the launch puts on SM `sm` (launch order: one per SM, then a
  // second per SM, ...).
  i64 first_wave_ctas(int sm) const {
    i64 n = 0;
    for (i64 r = 0; r < per_sm_; ++r) n += r * sm_count_ + sm < total_ctas_ ? 1 : 0;
    return n;
  }

  // The step's local memory (its warps' spills) to and from the L2, at the
  // step's start: the stores' bytes and the loads the L1 misses, in the CTA
  // slot's own local lines (the hardware gives each resident warp its own).
  void issue_local(const Slot& s, int program, double t) {
    if (program < 0 || program >= static_cast<int>(local_.traffic.size())) return;
    const LocalTraffic& lt = local_.traffic[static_cast<size_t>(program)];
    local_totals_.store_bytes += lt.store_bytes * warps_;
    local_totals_.load_bytes += lt.load_bytes * warps_;
    local_totals_.miss_bytes += lt.miss_bytes * warps_;
    const i64 frame = local_.frame_bytes;
    // Local memory lies at the top of the L2's address window (tensors start
    // at its bottom), a frame per CTA slot.
    const u64 top = mem_.l2().address_window_end() - static_cast<u64>(frame) * slots_.size();
    const u64 base = top + static_cast<u64>(&s - slots_.data()) * static_cast<u64>(frame);
    auto send = [&](trace::AccessKind kind, i64 bytes) {
      for (i64 done = 0; done < bytes; done += frame) {
        const trace::RangeAccess a{kind, local_tensor_, base, std::min(frame, bytes - done), 1, 0};
        kind == trace::AccessKind::Read ? mem_.load(a, t, partition(s)) : mem_.store(a, t, partition(s));
      }
    };
    send(trace::AccessKind::Write, lt.store_bytes * warps_);
    send(trace::AccessKind::Read, lt.miss_bytes * warps_);
  }

  // Busy time of the pipes (SM cycles, summed over SMs like pipe_busy_): the
  // program's instructions times their issue interval, over the 4 SMSPs.
  void account_busy(const schedule::WarpProgram& prog, double duration) {
    const SmMachine& m = sm_model_.machine();
    const auto& n = pipe_counts(prog);
    for (size_t q = 0; q < n.size(); ++q) instructions_[q] += n[q] * warps_;
    const Wgmmas& wg = wgmmas(prog);
    auto busy = [&](schedule::Pipe pp, i64 count) {
      return static_cast<double>(count) * m.pipe[static_cast<size_t>(pp)].interval * static_cast<double>(warps_) /
             4.0 * clock_scale_;
    };
    auto busy_all = [&](schedule::Pipe pp) { return busy(pp, n[static_cast<size_t>(pp)]); };
    // mma.sync by the pipe's interval; wgmma by its FLOP at the wgmma rate.
    double tensor = busy(schedule::Pipe::tensor, n[static_cast<size_t>(schedule::Pipe::tensor)] - wg.count);
    if (wg.count > 0) tensor += wg.pipe_cycles * static_cast<double>(warps_) / 4.0 * clock_scale_;
    const double other =
        std::max({busy_all(schedule::Pipe::fma), busy_all(schedule::Pipe::mufu), busy_all(schedule::Pipe::alu)});
    pipe_busy_ += std::min(duration, std::max(tensor, other));
    fp32_sfu_busy_ += std::min(duration, other);
  }

  void start_compute(Slot& s, u32 id, double t) {
    if (program_compute(s, id, t, s.ring[static_cast<size_t>(s.head)])) return;
    const Buffered& b = s.ring[static_cast<size_t>(s.head)];
    double& pipe_free = pipe_free_[static_cast<size_t>(s.sm)];
    const double start = std::max(t, pipe_free);
    const double fp32_sfu = rates_.fp32_sfu_cycles(b.step.compute);
    const double duration = rates_.tensor_cycles(b.step.compute) + fp32_sfu;
    pipe_free = start + duration;
    pipe_busy_ += duration;
    fp32_sfu_busy_ += fp32_sfu;
    if (timeline_) {
      if (start > s.last_compute_end) timeline_->slice(s.sm, s.slot, Timeline::kCtaLane, "wait", s.last_compute_end, start);
      if (duration > 0) timeline_->slice(s.sm, s.slot, Timeline::kCtaLane, "compute", start, start + duration);
    }
    push(start + duration, id, EventKind::compute_end);
  }

  void end_compute(Slot& s, u32 id, double t) {
    Buffered& b = s.ring[static_cast<size_t>(s.head)];
    // The last round's stores (the earlier rounds' went out as their loads came in), or all.
    issue_stores(s, b, stores_per_round() && b.rounds > 1 ? b.rounds - 1 : -1, t);
    s.head = (s.head + 1) % stages_;
    --s.count;
    s.last_compute_end = t;
    issue_next_step(s, t);  // the freed buffer takes step k + stages
    if (s.count == 0) {
      finish(s, id, t);
      return;
    }
    schedule_head(s, id, t);
  }

  void finish(Slot& s, u32 id, double t) {
    if (timeline_) timeline_->slice(s.sm, s.slot, Timeline::kCtaLane, cta_label(s), s.start, t);
    // Nested slices were recorded before their parent; Perfetto sorts by time.
    s.cursor.reset();
    --resident_[static_cast<size_t>(s.sm)];
    end_ = std::max(end_, t);
    s.last_end = t;
    if (queued_ < ctas_to_run()) {
      ++queued_;
      push(t, id, EventKind::dispatch);
    }
  }

  // ---- Fast-forward (EngineOptions::fast_forward; fast_forward.h) ---------
  // Whole CTAs, in launch order: [0, window_begin) warm the L2 up,
  // [window_begin, skip_begin) run and are measured, [skip_begin, skip_end)
  // are skipped and charged the window's rates, the rest run (so the L2
  // holds at the kernel's end what it would). -1: off, or not decided yet.
  struct CtaSkip {
    i64 period = 1;  // CTAs of one unit of the grid that repeats
    i64 window = 0;  // CTAs measured: whole waves
    i64 window_begin = -1, skip_begin = -1, skip_end = -1;
    bool active() const { return skip_end > skip_begin; }
  };
  // Steps within every CTA: a CTA's window opens at a period boundary once
  // it has run `warm` steps and the L2 has turned over since the kernel
  // began; its `window` steps are measured; then whole periods are skipped,
  // leaving at least `tail` steps to run. Its slot is owed their time.
  struct StepSkip {
    i64 period = 0, warm = 0, window = 0, steps = 0, tail = 0;
    bool active() const { return period > 0; }
    // Periods skippable after a window that opened at step k.
    i64 skip_after(i64 k) const { return std::max<i64>(0, (steps - k - window - tail) / period * period); }
  };
  i64 ctas_to_run() const { return total_ctas_ - (cta_skip_.active() ? cta_skip_.skip_end - cta_skip_.skip_begin : 0); }
  i64 slot_count() const { return static_cast<i64>(sm_count_) * per_sm_; }
  static i64 round_up(i64 v, i64 m) { return (v + m - 1) / m * m; }

  // The grid's repeating unit: a batch element's CTAs (x * y when z indexes
  // the batch), else a head's or a row's (x), the largest the grid holds 8
  // of; else every CTA. Skips are whole units, so the CTA after a skip
  // stands where the first skipped one stood (skipping half a head's CTAs
  // leaves the other half to load its K and V again: +2.5% DRAM reads in FA2
  // forward at N = 16384, B x H = 32, before this rule).
  i64 grid_period() const {
    auto fits = [&](i64 unit) { return total_ctas_ >= 8 * unit; };
    if (grid_.z > 1 && fits(grid_.x * grid_.y)) return grid_.x * grid_.y;
    if (grid_.y > 1 && fits(grid_.x)) return grid_.x;
    return 1;
  }
  // Sectors the L2 allocated (read and write misses) so far this kernel.
  i64 allocated_sectors() const {
    i64 n = 0;
    for (const auto& k : mem_.l2().counters().kind) n += k.miss_sectors;
    return n - kernel_start_allocated_;
  }

  static constexpr i64 kStepMaxWaves = 10;   // grids of fewer waves skip steps within CTAs
  static constexpr i64 kCtaMinWaves = 20;    // grids of more waves skip whole CTAs
  static constexpr i64 kWarmWaves = 4;       // CTAs run before the window, at least
  static constexpr i64 kWindowWaves = 4;     // CTAs measured
  static constexpr i64 kStepWindowMin = 8;   // steps measured per CTA, at least (whole periods)
  // Grids of kCtaMinWaves waves or more skip whole CTAs; grids of fewer than
  // kStepMaxWaves skip steps within CTAs; those between run whole. Not steps
  // in a grid of many waves: each CTA's window would then see the GPU full of
  // CTAs at their short runs' ends and starts, not in their steady middles
  // (tried: standard attention's P V at N = 16384, time +5%). Not CTAs in a
  // grid of fewer than 20 waves: warm-up, window and tail leave a third of it
  // to skip, and its first waves, in lockstep, are no steady state (the H100's
  // dK GEMM at 15.5 waves: -2.9% in time).
  void plan_fast_forward(const profile::HardwareProfile& p) {
    const i64 slots = slot_count();
    l2_flush_sectors_ = 2 * p.l2_bytes / std::max<i64>(1, p.l2_sector_bytes);
    for (const auto& k : mem_.l2().counters().kind) kernel_start_allocated_ += k.miss_sectors;
    if (total_ctas_ < kStepMaxWaves * slots) {
      plan_step_skip();
      return;
    }
    if (total_ctas_ < kCtaMinWaves * slots) return;
    cta_skip_.period = grid_period();
    // Whole waves, at least a unit's CTAs: its two ends then stand at the
    // same place in their waves' bursts of dispatches (a window of whole
    // units instead put GPT-2 medium's FA2 at -0.8% in time, not -0.2%).
    cta_skip_.window = round_up(std::max(kWindowWaves * slots, cta_skip_.period), slots);
    planning_ = true;
  }
  // Every CTA's steps must have the same shapes (the first, middle and last
  // CTA's are compared) and repeat with a period: a prologue, a warm-up of
  // two windows, a window, the skipped periods, and at least a window's
  // worth of closing steps run.
  void plan_step_skip() {
    const StepPattern first = step_pattern(kernel_, 0);
    if (first.period == 0) return;
    for (const i64 cta : {total_ctas_ / 2, total_ctas_ - 1})
      if (step_pattern(kernel_, cta).signature != first.signature) return;
    // Warm-up: two windows' worth (one left FA1's DRAM reads +1% on GPT-2
    // medium: its second K/V block still sees the first's data in L2).
    const i64 window = round_up(kStepWindowMin, first.period);
    const StepSkip plan{first.period, first.prologue + 2 * window, window, first.steps, std::max(window, first.closing)};
    if (plan.skip_after(plan.warm) < window) return;
    step_skip_ = plan;
  }

  // While planning, at each dispatch: once the L2 is warm, place the window:
  // whole waves of dispatches (its two ends then stand at the same place in
  // their waves' bursts of dispatches) ending at a period boundary.
  void open_cta_window(double t) {
    if (!planning_) {
      if (next_cta_ == cta_skip_.window_begin) start_window(t);
      return;
    }
    if (next_cta_ < kWarmWaves * slot_count() || next_cta_ - last_check_ < std::max<i64>(1, slot_count() / 8)) return;
    last_check_ = next_cta_;
    const i64 skip_begin = round_up(next_cta_ + cta_skip_.window, cta_skip_.period);
    if (skip_begin + cta_skip_.window + 2 * slot_count() > total_ctas_) {
      planning_ = false;  // too late: nothing worth skipping is left
      return;
    }
    if (!l2_turned_over()) return;
    planning_ = false;
    cta_skip_.window_begin = skip_begin - cta_skip_.window;
    cta_skip_.skip_begin = skip_begin;
    open_cta_window(t);
  }
  void start_window(double t) {
    window_start_ = snapshot(t);
    window_start_allocated_ = allocated_sectors();
  }
  // At the window's end: the skip from the window's allocation rate (the
  // tail must refill the L2 twice); charge it and jump.
  void skip_ctas(double t) {
    if (cta_skip_.skip_begin < 0 || cta_skip_.skip_end >= 0 || next_cta_ != cta_skip_.skip_begin) return;
    const i64 per_cta = std::max<i64>(1, (allocated_sectors() - window_start_allocated_) / cta_skip_.window);
    const i64 tail = std::max(2 * slot_count(), (l2_flush_sectors_ + per_cta - 1) / per_cta);
    const i64 skip = (total_ctas_ - next_cta_ - tail) / cta_skip_.period * cta_skip_.period;
    if (skip < cta_skip_.window) {
      cta_skip_.skip_end = cta_skip_.skip_begin;  // not worth it: run whole
      return;
    }
    cta_skip_.skip_end = next_cta_ + skip;
    tally_skipped_ctas(cta_skip_.skip_begin, cta_skip_.skip_end);
    const Snapshot window = snapshot(t).minus(window_start_);
    skipped_cycles_ = charge(window, skipped_) * window.t;
    next_cta_ = cta_skip_.skip_end;
  }

  // Before a CTA pulls its next step: opens its window, or at the window's
  // end walks the skipped steps and charges them the memory counters of the
  // whole GPU during its window, per request byte. Every CTA measures its
  // own window and keeps its closing steps: CTAs that ran only part of their
  // steps, or reused a window measured before them, left the GPU full of
  // CTAs at their starts (tried on FA1, GPT-2 medium: time +3% and +4.4%,
  // DRAM writes +6% and +10%, against +0.8% and -0.2% this way).
  void skip_steps(Slot& s, double t) {
    const i64 k = s.pulled;
    if (s.window_step < 0) {
      const bool boundary = k >= step_skip_.warm && (k - step_skip_.warm) % step_skip_.period == 0;
      if (!boundary || step_skip_.skip_after(k) < step_skip_.window || !l2_turned_over()) return;
      s.window_step = k;
      s.window = snapshot(t);
      return;
    }
    if (k != s.window_step + step_skip_.window) return;
    SkipTally mine;
    trace::RangeStep step;
    const i64 skip = step_skip_.skip_after(s.window_step);
    while (mine.steps < skip && s.cursor->next(step)) tally_skipped(step, 1, &mine);
    s.pulled += mine.steps;
    s.owed += (t - s.window.t) * static_cast<double>(mine.steps) / static_cast<double>(step_skip_.window);
    charge(snapshot(t).minus(s.window), mine);
  }

  // The L2 has allocated twice its size since the kernel began: its contents
  // are this kernel's (once true, stays true).
  bool l2_turned_over() {
    if (!l2_turned_over_) l2_turned_over_ = allocated_sectors() >= l2_flush_sectors_;
    return l2_turned_over_;
  }

  // CTAs [begin, end) tallied: CTAs that differ only along the kernel's
  // replica dimensions (heads, batch entries) have the same steps up to
  // addresses, so one of each class is walked, weighted by the class's count.
  void tally_skipped_ctas(i64 begin, i64 end) {
    const auto replica = kernel_.replica_dims();
    const i64 nx = replica[0] ? 1 : grid_.x, ny = replica[1] ? 1 : grid_.y;
    const i64 nz = replica[2] ? 1 : grid_.z;
    auto coords = [&](i64 c) { return std::array<i64, 3>{c % grid_.x, (c / grid_.x) % grid_.y, c / (grid_.x * grid_.y)}; };
    auto class_of = [&](const std::array<i64, 3>& xyz) {
      return ((replica[2] ? 0 : xyz[2]) * ny + (replica[1] ? 0 : xyz[1])) * nx + (replica[0] ? 0 : xyz[0]);
    };
    std::vector<i64> weight(static_cast<size_t>(nx * ny * nz), 0), first(weight.size(), -1);
    for (i64 c = begin; c < end; ++c) {
      const auto k = static_cast<size_t>(class_of(coords(c)));
      if (weight[k]++ == 0) first[k] = c;
    }
    trace::RangeStep step;
    for (size_t k = 0; k < weight.size(); ++k) {
      if (weight[k] == 0) continue;
      const auto xyz = coords(first[k]);
      auto cursor = kernel_.open_cta(xyz[0], xyz[1], xyz[2]);
      while (cursor->next(step)) tally_skipped(step, weight[k]);
    }
  }
  // A skipped step, `weight` times: its requests, FLOPs, instructions and
  // spills, exactly.
  // `also`: a second tally that takes the step (a CTA's own).
  void tally_skipped(const trace::RangeStep& step, i64 weight = 1, SkipTally* also = nullptr) {
    skipped_.add(step, weight);
    if (also) also->add(step, weight);
    compute_.tensor_flops += step.compute.tensor_flops * weight;
    compute_.fp32_ops += step.compute.fp32_ops * weight;
    compute_.sfu_ops += step.compute.sfu_ops * weight;
    if (progress_) progress_->add(weight);
    if (!programs_) return;
    const schedule::WarpProgram* prog = programs_->find(step.compute.program);
    if (!prog) return;
    const auto& n = pipe_counts(*prog);
    for (size_t q = 0; q < n.size(); ++q) instructions_[q] += n[q] * warps_ * weight;
    const int id = step.compute.program;
    if (!local_.any() || id < 0 || id >= static_cast<int>(local_.traffic.size())) return;
    const LocalTraffic& lt = local_.traffic[static_cast<size_t>(id)];
    local_totals_.store_bytes += lt.store_bytes * warps_ * weight;
    local_totals_.load_bytes += lt.load_bytes * warps_ * weight;
    local_totals_.miss_bytes += lt.miss_bytes * warps_ * weight;
    // What issue_local would have sent the L2: the stores, the loads the L1 missed.
    for (SkipTally* t : {&skipped_, also}) {
      if (!t) continue;
      t->spill_write_bytes += lt.store_bytes * warps_ * weight;
      t->spill_read_bytes += lt.miss_bytes * warps_ * weight;
    }
  }
  // The memory counters and pipe time of skipped work, at the rates per
  // request byte of a window that ran; returns that ratio.
  double charge(const Snapshot& window, const SkipTally& skipped) {
    double f = 0;
    skipped_memory_.add(charge_memory(window.memory, skipped, local_tensor_, sector_bytes_, f));
    // Kept apart: later windows measure the pipes' busy time of run steps only.
    skipped_pipe_busy_ += f * window.pipe_busy;
    skipped_fp32_sfu_busy_ += f * window.fp32_sfu_busy;
    return f;
  }
  Snapshot snapshot(double t) const { return {t, mem_.counters(), pipe_busy_, fp32_sfu_busy_}; }
  // After the run: the kernel's end moves by how late the slot that ends
  // last is once its owed time is added.
  void finish_step_skip() {
    if (skipped_.steps == 0 || cta_skip_.active()) return;
    double last = 0, last_owing = 0;
    for (const Slot& s : slots_) {
      last = std::max(last, s.last_end);
      last_owing = std::max(last_owing, s.last_end + s.owed);
    }
    skipped_cycles_ = last_owing - last;
  }

  const trace::RangeKernel& kernel_;
  schedule::Dim3 grid_;
  int stages_;
  SmRates rates_;
  memory::MemorySystem& mem_;
  Timeline* timeline_;
  ProgressSink* progress_;
  int sm_count_, per_sm_, partitions_;
  i64 total_ctas_;
  i64 queued_ = 0, next_cta_ = 0;
  std::vector<Slot> slots_;
  std::vector<double> pipe_free_;
  std::vector<double> load_port_free_;  // per SM: when its L2->SM port has delivered its loads so far
  double load_cycles_per_byte_ = 0;     // 0: no per-SM limit
  double first_byte_cycles_ = 0;        // an idle port's first bytes come no sooner than an L2 hit
  std::vector<i64> resident_;  // CTAs on each SM now
  LocalMemory local_;          // the programs' local memory on this machine
  std::shared_ptr<const schedule::KernelPrograms> programs_;
  SmModel& sm_model_;
  double step_jitter_;  // sm_pipes.step_jitter (0: lockstep)
  double cta_priority_;  // sm_pipes.cta_priority (0: every CTA at the SM's mean)
  trace::TensorIndex local_tensor_;
  LocalTraffic local_totals_;  // summed over warps and steps
  i64 warps_ = 1;
  double clock_scale_ = 1;  // profile cycles per cycle of the SM clock under this kernel's load
  std::array<i64, schedule::kPipeCount> instructions_{};
  CtaSkip cta_skip_;
  StepSkip step_skip_;
  bool planning_ = false;
  bool l2_turned_over_ = false;
  i64 last_check_ = 0;
  i64 l2_flush_sectors_ = 0;  // twice the L2, in sectors
  i64 kernel_start_allocated_ = 0, window_start_allocated_ = 0;
  Snapshot window_start_;
  SkipTally skipped_;
  memory::MemoryCounters skipped_memory_;
  double skipped_pipe_busy_ = 0, skipped_fp32_sfu_busy_ = 0;
  double skipped_cycles_ = 0;
  i64 sector_bytes_ = 32;
  // Host-cache hints to the L2 before requests: worth their cost only when
  // the L2's state is too large for the host's caches (not sampled).
  bool prefetch_ = true;
  EventQueue events_{0};
  double end_ = 0;
  trace::ComputeWork compute_;
  i64 steps_ = 0;
  double pipe_busy_ = 0, fp32_sfu_busy_ = 0;
  // Instructions by pipe of each program this kernel ran (a kernel has a few
  // programs and runs each many times: counting once per step showed in profiles).
  std::vector<std::pair<const schedule::WarpProgram*, std::array<i64, schedule::kPipeCount>>> pipe_counts_;
  const std::array<i64, schedule::kPipeCount>& pipe_counts(const schedule::WarpProgram& prog) {
    for (const auto& [program, counts] : pipe_counts_)
      if (program == &prog) return counts;
    pipe_counts_.emplace_back(&prog, prog.count_by_pipe());
    return pipe_counts_.back().second;
  }
  // A program's wgmma instructions and their tensor-pipe cycles (one warp).
  struct Wgmmas {
    i64 count = 0;
    double pipe_cycles = 0;
  };
  std::vector<std::pair<const schedule::WarpProgram*, Wgmmas>> wgmmas_;
  const Wgmmas& wgmmas(const schedule::WarpProgram& prog) {
    for (const auto& [program, w] : wgmmas_)
      if (program == &prog) return w;
    Wgmmas w;
    for (const schedule::Instr& in : prog.code)
      if (in.op == schedule::Op::wgmma) {
        ++w.count;
        w.pipe_cycles += engine::pipe_cycles(sm_model_.machine(), in);
      }
    wgmmas_.emplace_back(&prog, w);
    return wgmmas_.back().second;
  }
};

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * f);
  return buf;
}
std::string rate(double v, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s", v / 1e12, unit);
  return buf;
}

// Derived fields from counters, busy times and time.
void finish_result(KernelResult& k, const profile::HardwareProfile& p, double sm_count) {
  k.seconds = k.cycles / p.sm_clock_hz;
  const double t = k.cycles;
  k.dram_bytes_per_s = k.seconds > 0 ? static_cast<double>(k.dram_read_bytes + k.dram_write_bytes) / k.seconds : 0;
  k.tensor_flops_per_s = k.seconds > 0 ? static_cast<double>(k.compute.tensor_flops) / k.seconds : 0;
  Utilisation& u = k.utilisation;
  if (t > 0) {
    u.dram = k.busy.dram / t;
    u.l2 = k.busy.l2 / t;
    u.sm_pipes = k.busy.sm_pipes / (sm_count * t);
    u.fp32_sfu = k.busy.fp32_sfu / (sm_count * t);
    u.tensor = u.sm_pipes - u.fp32_sfu;
  }
  classify_bound(k, p);
}

}  // namespace

void classify_bound(KernelResult& k, const profile::HardwareProfile& p) {
  const Utilisation& u = k.utilisation;
  const double top = std::max({u.dram, u.l2, u.sm_pipes});
  if (top < kBoundThreshold) {
    k.bound = "latency_occupancy";
    k.bound_reason = "no shared resource is busy " + percent(kBoundThreshold) + " of the time (DRAM " +
                     percent(u.dram) + ", L2 " + percent(u.l2) + ", SM pipes " + percent(u.sm_pipes) + ") with " +
                     std::to_string(k.occupancy.ctas_per_sm) + " CTA(s) per SM (limited by " + k.occupancy.limiter +
                     ") in " + std::to_string(k.occupancy.waves) + " wave(s): tile latency is exposed";
  } else if (u.dram >= u.l2 && u.dram >= u.sm_pipes) {
    k.bound = "dram";
    k.bound_reason = "DRAM busy " + percent(u.dram) + " of the time: " + rate(k.dram_bytes_per_s, "TB/s") + " of " +
                     rate(p.dram_achievable_bandwidth_bytes_per_s(), "TB/s") + " achievable";
  } else if (u.l2 >= u.sm_pipes) {
    k.bound = "l2";
    k.bound_reason = "L2 bandwidth busy " + percent(u.l2) + " of the time (" +
                     rate(static_cast<double>(k.l2.total().sectors * p.l2_sector_bytes) / std::max(k.seconds, 1e-30),
                          "TB/s") +
                     " requested of " + rate(p.l2_bandwidth_bytes_per_s, "TB/s") + ")";
  } else {
    k.bound = u.tensor >= u.fp32_sfu ? "tensor" : "sfu_fp32";
    k.bound_reason = "SM pipes busy " + percent(u.sm_pipes) + " of the time: tensor " + percent(u.tensor) +
                     ", FP32+SFU " + percent(u.fp32_sfu) + " (" + rate(k.tensor_flops_per_s, "TFLOP/s") + " achieved)";
  }
}

SimulationResult simulate(trace::KernelSource& source, const profile::HardwareProfile& p, const EngineOptions& options) {
  const auto wall0 = std::chrono::steady_clock::now();
  if (options.kernel_gap_seconds < 0) throw InputError("kernel gap must be >= 0 seconds");
  if (options.timeline_max_events < 1) throw InputError("timeline event cap must be positive");
  if (p.sm_count < 1 || !(p.sm_clock_hz > 0)) throw InputError("profile '" + p.name + "' needs SMs and a clock");
  const SmRates rates = sm_rates(p, source.dtype());
  const SmMachine machine = sm_machine(p);
  memory::L2Options l2o;
  l2o.replacement = options.l2_replacement;
  l2o.merge_window_cycles = options.l2_merge_window_cycles.value_or(p.l2_merge_window_cycles);
  l2o.dirty_limit_bytes = options.l2_dirty_limit_bytes.value_or(p.l2_dirty_limit_bytes);
  l2o.tile_fast_path = options.l2_tile_fast_path;
  l2o.ordered_sets = options.l2_ordered_sets;
  l2o.set_sampling = options.l2_set_sampling;
  if (options.l2_copies.value_or(false)) {
    if (p.l2_partitions != 2)
      throw InputError("L2 copies need a profile with 2 L2 partitions ('" + p.name + "' has " +
                       std::to_string(p.l2_partitions) + ")");
    if (options.l2_set_sampling != 1) throw InputError("L2 copies cannot be combined with L2 set sampling");
  }
  l2o.copies = options.l2_copies.value_or(p.l2_far_copies && options.l2_set_sampling == 1);
  memory::MemorySystem mem(p, l2o);
  std::unique_ptr<Timeline> timeline;
  if (!options.timeline_path.empty())
    timeline = std::make_unique<Timeline>(options.timeline_max_events, p.sm_clock_hz / 1e6);

  SimulationResult result;
  result.profile = p.name;
  result.options = options;
  result.options.l2_merge_window_cycles = l2o.merge_window_cycles;  // the values used
  result.options.l2_dirty_limit_bytes = l2o.dirty_limit_bytes;
  result.options.l2_copies = l2o.copies;
  result.step_jitter = p.sm_pipes.present ? p.sm_pipes.step_jitter : 0;
  result.cta_priority = p.sm_pipes.present ? p.sm_pipes.cta_priority : 0;
  result.options.progress = nullptr;  // the sink need not outlive this call
  result.tensor_names = source.tensor_names();
  // Spills' traffic is counted as a tensor of its own after the trace's.
  const auto local_tensor = static_cast<trace::TensorIndex>(result.tensor_names.size());
  result.tensor_names.push_back("local");
  const i64 sector = p.l2_sector_bytes;
  const double gap_cycles = options.kernel_gap_seconds * p.sm_clock_hz;
  double t = 0;
  while (const trace::RangeKernel* k = source.next_kernel()) {
    if (!result.kernels.empty()) t += gap_cycles;
    KernelResult r;
    r.sector_bytes = sector;
    r.name = k->name();
    r.pass = k->pass();
    r.grid = k->grid();
    r.cta = k->resources();
    r.stages = k->pipeline_stages();
    r.zero_fill_read_bytes = k->zero_fill_read_bytes();
    r.occupancy = compute_occupancy(p, r.cta, r.grid.count(), r.name);
    const SmRates& kernel_rates = rates;
    if (options.cold_l2_per_kernel) r.flushed_dirty_bytes = mem.l2().flush() * sector;
    mem.begin_kernel(t);
    const memory::MemoryCounters before = mem.counters();
    // One model (and cache) per kernel: a cache keyed by program must not
    // outlive the programs (a trace file's kernel is freed after its run).
    SmModel sm_model(machine);
    KernelRunner runner(*k, p, kernel_rates, r.occupancy, mem, timeline.get(), sm_model, options.progress,
                        local_tensor, options.fast_forward);
    // The kernel's DRAM write-backs are part of it (they are its DRAM writes).
    // (Two statements: the write-backs are known only after the run.)
    // The first CTA starts after the kernel's fixed launch time.
    const double run_end = runner.run(t + p.kernel_launch_cycles);
    r.fast_forward = runner.fast_forward();
    const double end = std::max(run_end, mem.writeback_end()) + r.fast_forward.skipped_cycles;
    memory::MemoryCounters d = mem.counters().minus(before);
    d.add(runner.skipped_memory());
    r.l2 = d.l2;
    r.dram_read_bytes = d.dram.read_bytes;
    r.dram_write_bytes = d.dram.write_bytes;
    r.dirty_left_bytes = mem.l2().dirty_sectors() * sector;
    r.compute = runner.compute();
    r.steps = runner.steps();
    r.instructions = runner.instructions();
    r.sm_model = runner.sm_model_used();
    r.local = runner.local_totals();
    r.local_l1_bytes = runner.local_l1_bytes();
    r.machine_measured = machine.measured;
    if (options.program_timings) r.programs = runner.program_timings();
    r.sm_clock_hz = p.sm_clock_hz / runner.clock_scale();
    r.start_seconds = t / p.sm_clock_hz;
    r.cycles = end - t;
    r.busy = {d.dram.busy_cycles, d.l2_busy_cycles, runner.pipe_busy(), runner.fp32_sfu_busy()};
    finish_result(r, p, static_cast<double>(p.sm_count));
    if (timeline) timeline->kernel(r.name, t, end);
    result.kernels.push_back(std::move(r));
    t = end;
  }

  // The run.
  KernelResult& total = result.total;
  total.name = "total";
  total.sector_bytes = sector;
  const KernelResult* longest = nullptr;
  for (const KernelResult& k : result.kernels) {
    total.l2.add(k.l2);
    total.dram_read_bytes += k.dram_read_bytes;
    total.dram_write_bytes += k.dram_write_bytes;
    total.flushed_dirty_bytes += k.flushed_dirty_bytes;
    total.compute.tensor_flops += k.compute.tensor_flops;
    total.compute.fp32_ops += k.compute.fp32_ops;
    total.compute.sfu_ops += k.compute.sfu_ops;
    total.steps += k.steps;
    total.local.store_bytes += k.local.store_bytes;
    total.local.load_bytes += k.local.load_bytes;
    total.local.miss_bytes += k.local.miss_bytes;
    for (size_t q = 0; q < total.instructions.size(); ++q) total.instructions[q] += k.instructions[q];
    total.fast_forward.skipped_ctas += k.fast_forward.skipped_ctas;
    total.fast_forward.skipped_steps += k.fast_forward.skipped_steps;
    total.fast_forward.skipped_cycles += k.fast_forward.skipped_cycles;
    total.busy.add(k.busy);
    if (!longest || k.cycles > longest->cycles) longest = &k;
  }
  if (!result.kernels.empty()) {
    total.dirty_left_bytes = result.kernels.back().dirty_left_bytes;
    total.occupancy = longest->occupancy;
    total.grid = longest->grid;
    total.cta = longest->cta;
    total.stages = longest->stages;
    total.pass = result.kernels.front().pass;
    total.cycles = t;
  }
  finish_result(total, p, static_cast<double>(p.sm_count));
  if (timeline) {
    timeline->write(options.timeline_path);
    result.timeline_note = timeline->note();
  }
  result.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return result;
}

SimulationResult simulate(const trace::AlgorithmTrace& run, const profile::HardwareProfile& p,
                          const EngineOptions& options) {
  trace::AlgorithmKernelSource source(run);
  return simulate(source, p, options);
}

SimulationResult replay_trace_file(const std::string& path, const profile::HardwareProfile& p,
                                   const EngineOptions& options) {
  trace::TraceFileReader reader(path);
  return simulate(reader, p, options);
}

}  // namespace iosim::engine
