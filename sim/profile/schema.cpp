#include "sim/profile/schema.h"

#include <cmath>
#include <sstream>
#include <type_traits>

#include "sim/profile/units.h"

namespace iosim::profile {
namespace {

using P = HardwareProfile;
using S = HardwareProfile::SmPipes;

constexpr double kInf = std::numeric_limits<double>::infinity();

Range no_range() { return {}; }
Range positive() { return {true, 0, false, kInf}; }
Range non_negative() { return {true, 0, true, kInf}; }
Range unit_interval() { return {true, 0, false, 1}; }

// The range every key of a kind has unless the table says otherwise.
Range default_range(ValueKind kind) {
  switch (kind) {
    case ValueKind::plain_text:
    case ValueKind::compute_capability:
    case ValueKind::dram_kind:
    case ValueKind::boolean: return no_range();
    case ValueKind::fraction: return unit_interval();
    default: return positive();
  }
}

SchemaKey key(std::string_view name, ValueKind kind, bool required, Target target, std::string_view field,
              std::string_view description) {
  return {name, kind, required, default_range(kind), field, description, target};
}

// A key for which 0 is valid (a window that is off, a unit the GPU lacks).
SchemaKey zero_allowed(SchemaKey k) {
  k.range = non_negative();
  return k;
}

std::vector<SchemaSection> build_schema() {
  constexpr bool req = true;
  constexpr bool opt = false;
  std::vector<SchemaSection> sections{
      {"",
       req,
       "identity",
       {key("name", ValueKind::plain_text, req, &P::name, "name", "profile id, = file stem"),
        key("display_name", ValueKind::plain_text, req, &P::display_name, "display_name", "marketing name"),
        key("compute_capability", ValueKind::compute_capability, req, &P::compute_capability,
            "compute_capability", "CUDA compute capability")}},
      {"sm",
       req,
       "streaming multiprocessors",
       {key("count", ValueKind::count, req, &P::sm_count, "sm_count", "streaming multiprocessors"),
        key("clock", ValueKind::frequency, req, &P::sm_clock_hz, "sm_clock_hz",
            "SM clock; cycle latencies are in this clock, `ns` latencies are converted with it"),
        key("smem_per_sm", ValueKind::size, req, &P::smem_per_sm_bytes, "smem_per_sm_bytes",
            "shared memory per SM at the largest carve-out"),
        key("smem_per_block", ValueKind::size, req, &P::smem_per_block_bytes, "smem_per_block_bytes",
            "most shared memory one CTA can opt in to"),
        key("l1_smem_per_sm", ValueKind::size, req, &P::l1_per_sm_bytes, "l1_per_sm_bytes",
            "unified L1 + shared memory per SM (`iosim calibrate`: the L1 capacity measured with the "
            "shared-memory carve-out at its minimum)"),
        key("registers", ValueKind::count, req, &P::registers_per_sm, "registers_per_sm", "32-bit registers per SM"),
        key("max_registers_per_thread", ValueKind::count, req, &P::max_registers_per_thread,
            "max_registers_per_thread", "most registers the compiler gives one thread"),
        key("max_threads", ValueKind::count, req, &P::max_threads_per_sm, "max_threads_per_sm",
            "resident threads per SM"),
        key("max_warps", ValueKind::count, req, &P::max_warps_per_sm, "max_warps_per_sm", "resident warps per SM"),
        key("max_ctas", ValueKind::count, req, &P::max_ctas_per_sm, "max_ctas_per_sm",
            "resident CTAs (blocks) per SM")}},
      {"l2",
       req,
       "L2 cache",
       {key("size", ValueKind::size, req, &P::l2_bytes, "l2_bytes", "capacity of the whole L2 (the CUDA runtime's l2CacheSize)"),
        key("line", ValueKind::size, req, &P::l2_line_bytes, "l2_line_bytes", "tag granularity"),
        key("sector", ValueKind::size, req, &P::l2_sector_bytes, "l2_sector_bytes", "fill / transfer granularity"),
        key("partitions", ValueKind::count, req, &P::l2_partitions, "l2_partitions",
            "halves with near/far latency; 1 = uniform"),
        key("associativity", ValueKind::count, req, &P::l2_associativity, "l2_associativity",
            "ways (unpublished: an assumption in every file)"),
        key("effective_size", ValueKind::size, opt, &P::l2_effective_bytes, "l2_effective_bytes",
            "distinct bytes the L2 holds, the capacity of iosim's L2 where it does not model the copies "
            "(`far_copies` false or `--l2-copies off`; absent: `size`): the working set at which "
            "`iosim calibrate`'s cyclic sweep (every line read by one SM) keeps half its lines, rounded down to "
            "whole sets. Hopper copies a line read from the far half into the near one, so distinct lines fill "
            "less than the whole L2"),
        key("far_copies", ValueKind::boolean, opt, &P::l2_far_copies, "l2_far_copies",
            "with 2 partitions: a read of a line homed in the other half also leaves a copy in the reader's "
            "half, so the line takes two slots (absent: false). `iosim calibrate` sets it where an SM's "
            "second read of far lines hits near. iosim's L2 then holds the whole `size`, far lines twice, "
            "instead of one slot per line in `effective_size` (`--l2-copies` overrides it)"),
        key("bandwidth", ValueKind::bandwidth, req, &P::l2_bandwidth_bytes_per_s, "l2_bandwidth_bytes_per_s",
            "sustained L2-to-SM read bandwidth for data resident in L2 (measured where we could; otherwise the "
            "vendor's per-clock figure x clock, an upper bound)"),
        key("write_bandwidth", ValueKind::bandwidth, opt, &P::l2_write_bandwidth_bytes_per_s,
            "l2_write_bandwidth_bytes_per_s",
            "the rate at which the L2 slices take in lines: SM stores into L2-resident lines, measured alone, "
            "which DRAM fills share (absent: stores and fills cost only `bandwidth`'s transfer)"),
        zero_allowed(key("merge_window", ValueKind::latency, req, &P::l2_merge_window_cycles, "l2_merge_window_cycles",
            "a read of the same tile arriving within this many cycles of a read lookup merges into it "
            "(Hopper's L2 request coalescing; 0 = off): the integral of the merged share over the gap between "
            "two SMs' reads of an L2-resident line (iosim calibrate's merge probe, kernels/calibrate/merge_probe.cu, "
            "the kernel of experiments/probes/merge_probe.cu); in the uncalibrated profiles the former engine "
            "default, 32 cycles, an assumption. `iosim --merge-window` overrides it")),
        key("dirty_limit", ValueKind::size_or_none, req, &P::l2_dirty_limit_bytes, "l2_dirty_limit_bytes",
            "at most this many bytes stay dirty in L2; past it the lines dirty the longest are written to DRAM "
            "(and stay resident). Measured as the bytes still dirty at the end of streaming copies of 32 MB to "
            "1 GB (copied - DRAM bytes written, Nsight Compute); `none` = dirty lines reach DRAM only when "
            "evicted")}},
      {"dram",
       req,
       "device memory",
       {key("kind", ValueKind::dram_kind, opt, &P::dram_kind, "dram_kind",
            "memory technology, for people (CUDA does not report it, so `iosim calibrate` leaves it out)"),
        key("capacity", ValueKind::size, req, &P::dram_capacity_bytes, "dram_capacity_bytes",
            "device memory: physical in hand-written files; what the CUDA runtime reports (somewhat less) in "
            "`iosim calibrate`'s"),
        key("peak_bandwidth", ValueKind::bandwidth, req, &P::dram_peak_bandwidth_bytes_per_s,
            "dram_peak_bandwidth_bytes_per_s", "peak: datasheet, or bus width x memory clock x 2 (DDR)"),
        key("achievable_fraction", ValueKind::fraction, req, &P::dram_achievable_fraction,
            "dram_achievable_fraction",
            "measured streaming read / peak; `dram_achievable_bandwidth_bytes_per_s()` = peak x fraction"),
        key("copy_fraction", ValueKind::fraction, opt, &P::dram_copy_fraction, "dram_copy_fraction",
            "measured streaming copy (bytes read + bytes written) / peak; with it a written byte costs the DRAM "
            "channel 2 / copy - 1 / read of a read byte's time (absent: the same)"),
        key("read_fraction_32B", ValueKind::fraction, opt, &P::dram_read_fraction_32b, "dram_read_fraction_32b",
            "read bandwidth of 32-byte pieces spread far apart (each read once) over a stream's: an L2 fill for a "
            "tile whose rows are that short holds the DRAM channel 1 / fraction as long per byte (absent: 1); "
            "measured by `iosim calibrate` (and experiments/probes/dram_pieces_probe.cu, the same kernel)"),
        key("read_fraction_64B", ValueKind::fraction, opt, &P::dram_read_fraction_64b, "dram_read_fraction_64b",
            "the same for 64-byte pieces"),
        key("read_fraction_128B", ValueKind::fraction, opt, &P::dram_read_fraction_128b, "dram_read_fraction_128b",
            "the same for 128-byte pieces"),
        key("read_fraction_256B", ValueKind::fraction, opt, &P::dram_read_fraction_256b, "dram_read_fraction_256b",
            "the same for 256-byte pieces; sizes between are interpolated in log2(size), 512 bytes and more "
            "read at the stream's rate")}},
      {"latency",
       req,
       "latencies of one dependent access",
       {key("smem", ValueKind::latency, req, &P::smem_latency_cycles, "smem_latency_cycles",
            "dependent shared-memory load"),
        key("l2_near", ValueKind::latency, req, &P::l2_near_latency_cycles, "l2_near_latency_cycles",
            "L2 hit in the SM's own half"),
        key("l2_far", ValueKind::latency, req, &P::l2_far_latency_cycles, "l2_far_latency_cycles",
            "L2 hit in the other half (= `l2_near` when `l2.partitions` is 1)"),
        key("dram", ValueKind::latency, req, &P::dram_latency_cycles, "dram_latency_cycles",
            "L2 miss served by DRAM"),
        zero_allowed(key("kernel_launch", ValueKind::latency, opt, &P::kernel_launch_cycles,
                         "kernel_launch_cycles",
                         "fixed time of every kernel, from its launch to its first CTA and from its last CTA to its "
                         "end: Nsight Compute's gpu__time_duration of an empty kernel (`iosim calibrate`); 0 or "
                         "absent: not modelled"))}},
      {"compute",
       req,
       "arithmetic rates, whole GPU, dense",
       {key("tensor_fp16", ValueKind::flop_rate, req, &P::tensor_fp16_flops_per_s, "tensor_fp16_flops_per_s",
            "dense FP16 tensor-core rate, whole GPU: the datasheet peak in hand-written files; the measured "
            "mma.sync rate x SMs x clock under tensor load in `iosim calibrate`'s"),
        key("tensor_bf16", ValueKind::flop_rate_or_none, req, &P::tensor_bf16_flops_per_s, "tensor_bf16_flops_per_s",
            "dense BF16 tensor-core rate, as `tensor_fp16`; `none` (stored as 0) where the GPU has no bf16 tensor "
            "cores (T4)"),
        key("fp32", ValueKind::flop_rate, req, &P::fp32_flops_per_s, "fp32_flops_per_s",
            "FP32 rate, an FMA counted as 2 FLOPs"),
        key("sfu", ValueKind::op_rate, req, &P::sfu_ops_per_s, "sfu_ops_per_s",
            "special-function results (exp2, log2, rcp, ...) per second")}},
      {"sm_pipes",
       opt,
       "per-SM machine parameters of the SM execution model, measured by `iosim calibrate`",
       {key("clock_tensor_load", ValueKind::frequency, req, &S::clock_tensor_load_hz,
            "sm_pipes.clock_tensor_load_hz", "SM clock sustained while every SM runs mma.sync flat out"),
        key("clock_memory_load", ValueKind::frequency, req, &S::clock_memory_load_hz,
            "sm_pipes.clock_memory_load_hz", "SM clock sustained during a DRAM-bound streaming copy"),
        key("clock_wgmma_load", ValueKind::frequency, opt, &S::clock_wgmma_load_hz,
            "sm_pipes.clock_wgmma_load_hz",
            "SM clock sustained while every SM runs wgmma flat out (absent: kernels that issue wgmma are "
            "timed at clock_tensor_load)"),
        key("mma_f16", ValueKind::flop_per_cycle, req, &S::mma_f16_flop_per_cycle,
            "sm_pipes.mma_f16_flop_per_cycle",
            "FLOP per SM per cycle of mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, all SMs busy, enough "
            "warps, independent accumulators"),
        zero_allowed(key("mma_bf16", ValueKind::flop_per_cycle, opt, &S::mma_bf16_flop_per_cycle,
                         "sm_pipes.mma_bf16_flop_per_cycle",
                         "the same with bf16 inputs (0 or absent where unsupported)")),
        key("wgmma_f16", ValueKind::flop_per_cycle, opt, &S::wgmma_f16_flop_per_cycle,
            "sm_pipes.wgmma_f16_flop_per_cycle",
            "FLOP per SM per cycle of wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16, A and B from shared "
            "memory (descriptors), all SMs busy, several warpgroups per SM, groups in flight (sm_90a only: "
            "absent elsewhere; the SM model then times wgmma at the mma.sync rate)"),
        key("fp32", ValueKind::op_per_cycle, req, &S::fp32_op_per_cycle, "sm_pipes.fp32_op_per_cycle",
            "FP32 FFMA lane-ops per SM per cycle (one FMA = 1 op)"),
        key("mufu_ex2", ValueKind::op_per_cycle, req, &S::mufu_ex2_op_per_cycle, "sm_pipes.mufu_ex2_op_per_cycle",
            "ex2.approx.f32 lane-ops per SM per cycle"),
        key("smem_ldmatrix", ValueKind::bytes_per_cycle, req, &S::smem_ldmatrix_bytes_per_cycle,
            "sm_pipes.smem_ldmatrix_bytes_per_cycle",
            "shared-memory bytes per SM per cycle delivered by ldmatrix.x4 (conflict-free)"),
        key("issue", ValueKind::inst_per_cycle, req, &S::issue_inst_per_cycle, "sm_pipes.issue_inst_per_cycle",
            "warp instructions issued per SM per cycle (one per scheduler at most)"),
        key("l2_load_per_sm", ValueKind::bytes_per_cycle, req, &S::l2_load_bytes_per_cycle,
            "sm_pipes.l2_load_bytes_per_cycle",
            "L2 -> SM bytes per cycle that ONE SM can pull (ld.global.cg 16 B, L2-resident data, many warps)"),
        key("red_per_sm", ValueKind::bytes_per_cycle, opt, &S::red_bytes_per_cycle, "sm_pipes.red_bytes_per_cycle",
            "red.global.add.v2.f32 bytes per SM per cycle while every SM reduces into L2-resident rows in FA2 "
            "backward's dQ pattern: the SM model's reduction drain (a step is no shorter than its reductions at "
            "this rate)"),
        zero_allowed(key("red_queue", ValueKind::latency, opt, &S::red_queue_cycles, "sm_pipes.red_queue_cycles",
                         "cycles of draining that an SM's queue of red.global holds: its warps wait on a reduction "
                         "only beyond it (bursts from 8 warps right after a barrier: the bytes issued less what "
                         "drained meanwhile, over one SM's drain rate; recorded, not used: docs/engine.md, "
                         "\"Reductions\")")),
        key("store_fragment", ValueKind::inst_per_cycle, opt, &S::store_fragment_inst_per_cycle,
            "sm_pipes.store_fragment_inst_per_cycle",
            "st.global.b32 warp instructions per cycle from ONE SM in the MMA fragment layout (lane l at row l / 4: "
            "8 rows x 16 B per instruction), independent, into L2-resident rows (absent: stores cost the SM model "
            "their issue slot only)"),
        key("store_rows", ValueKind::inst_per_cycle, opt, &S::store_rows_inst_per_cycle,
            "sm_pipes.store_rows_inst_per_cycle",
            "st.global.v4.b32 warp instructions per cycle from ONE SM over 512 contiguous bytes each, as above"),
        zero_allowed(key("store_queue", ValueKind::latency, opt, &S::store_queue_cycles, "sm_pipes.store_queue_cycles",
                         "cycles of draining that an SM's store queue holds: a warp waits on a store only beyond "
                         "it (bursts of fragment stores from 8 warps right after a barrier: the instructions issued "
                         "less what drained meanwhile, over the fragment rate)")),
        key("mma_latency", ValueKind::latency, req, &S::mma_latency_cycles, "sm_pipes.mma_latency_cycles",
            "dependent mma.sync m16n8k16 chain, one warp: cycles per mma"),
        key("wgmma_latency", ValueKind::latency, opt, &S::wgmma_latency_cycles, "sm_pipes.wgmma_latency_cycles",
            "one warpgroup alone, a chain of wgmma m64n128k16 (SS) into the same accumulators, each followed by "
            "wgmma.wait_group 0: cycles from issue to completion per wgmma (sm_90a only: absent elsewhere)"),
        key("barrier_latency", ValueKind::latency, req, &S::barrier_latency_cycles,
            "sm_pipes.barrier_latency_cycles", "`__syncthreads` with 8 warps, back to back: cycles per barrier"),
        key("alu", ValueKind::op_per_cycle, req, &S::alu_op_per_cycle, "sm_pipes.alu_op_per_cycle",
            "FMNMX (max.f32) lane-ops per SM per cycle: the ALU pipe (comparisons, selects, logic, packing)"),
        key("shfl", ValueKind::op_per_cycle, req, &S::shfl_op_per_cycle, "sm_pipes.shfl_op_per_cycle",
            "shfl.sync lane-ops per SM per cycle"),
        key("fp32_latency", ValueKind::latency, req, &S::fp32_latency_cycles, "sm_pipes.fp32_latency_cycles",
            "dependent FFMA chain, one warp: cycles per instruction"),
        key("alu_latency", ValueKind::latency, req, &S::alu_latency_cycles, "sm_pipes.alu_latency_cycles",
            "dependent FMNMX chain, one warp: cycles per instruction"),
        key("mufu_latency", ValueKind::latency, req, &S::mufu_latency_cycles, "sm_pipes.mufu_latency_cycles",
            "dependent ex2.approx chain, one warp: cycles per instruction"),
        key("shfl_latency", ValueKind::latency, req, &S::shfl_latency_cycles, "sm_pipes.shfl_latency_cycles",
            "dependent shfl.sync chain, one warp: cycles per instruction"),
        key("branch_taken", ValueKind::latency, opt, &S::branch_taken_cycles, "sm_pipes.branch_taken_cycles",
            "one warp per SM sub-partition, a taken BRA on a warp-uniform predicate over 24 dependent FFMAs: cycles per branch "
            "(absent: branches cost nothing in the SM model)"),
        key("branch_not_taken", ValueKind::latency, opt, &S::branch_not_taken_cycles,
            "sm_pipes.branch_not_taken_cycles",
            "the same BRA not taken: cycles it adds to the 24-FFMA chain it falls into (absent: no cost)"),
        key("branch_reconverge", ValueKind::latency, opt, &S::branch_reconverge_cycles,
            "sm_pipes.branch_reconverge_cycles",
            "what a taken branch on a per-lane predicate (BSSY, @P BRA, BSYNC: the divergence-capable form of an "
            "`if`) costs beyond the uniform one, every lane taking it (absent: no cost)"),
        key("step_jitter", ValueKind::fraction, opt, &S::step_jitter, "sm_pipes.step_jitter",
            "standard deviation of a CTA's step length over its mean step, every SM running 2 identical CTAs of a "
            "GEMM-like loop (cp.async tile, ldmatrix + mma.sync, one barrier a step; iosim calibrate's step-variation "
            "benchmark, kernels/calibrate/steps.cu, the kernel of experiments/probes/step_jitter_probe.cu): each "
            "simulated step's length is scaled by a normal draw of "
            "it (absent: identical CTAs run in lockstep)"),
        key("cta_priority", ValueKind::fraction, opt, &S::cta_priority, "sm_pipes.cta_priority",
            "how much an SM favours the CTAs that started on it first: the CTA of start rank r (0 = first) among n "
            "takes 1 + cta_priority x (1 - 2/n)(r - (n - 1)/2) of the SM's mean step, the least squares over 2-8 "
            "CTAs per SM of the step-variation benchmark's mean step per rank; the engine applies it to the CTAs a "
            "launch starts together (absent: every CTA at the SM's mean)")},
       &S::present},
  };
  return sections;
}

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string joined_dram_kinds() {
  std::string out;
  for (std::string_view k : kDramKinds) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

std::string markdown_row(const std::string& path, const SchemaKey& k, std::string_view required) {
  std::string valid = k.range.text();
  if (k.kind == ValueKind::size_or_none) valid += ", or `none` (no limit)";
  if (k.kind == ValueKind::flop_rate_or_none) valid += ", or `none`";
  if (k.kind == ValueKind::count) valid = "whole, " + valid;
  if (k.kind == ValueKind::boolean) valid = "`true` or `false`";
  const std::string shown = valid.empty() ? std::string("-") : valid;
  return "| `" + path + "` | " + kind_name(k.kind) + " | " + std::string(required) + " | " + shown + " | `" +
         std::string(k.field) + "` | " + std::string(k.description) + " |\n";
}

}  // namespace

std::string Range::text() const {
  if (!numeric) return "";
  if (hi < kInf) return std::string(lo_inclusive ? "[" : "(") + number_text(lo) + ", " + number_text(hi) + "]";
  return std::string(lo_inclusive ? ">= " : "> ") + number_text(lo);
}

const std::vector<SchemaSection>& profile_schema() {
  static const std::vector<SchemaSection> sections = build_schema();
  return sections;
}


std::string key_path(const SchemaSection& section, const SchemaKey& key) {
  return section.key.empty() ? std::string(key.key) : std::string(section.key) + "." + std::string(key.key);
}

const SchemaKey* find_key(std::string_view path) {
  for (const SchemaSection& s : profile_schema())
    for (const SchemaKey& k : s.keys)
      if (key_path(s, k) == path) return &k;
  return nullptr;
}

std::string kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::plain_text: return "plain string";
    case ValueKind::compute_capability: return "string `\"<major>.<minor>\"`";
    case ValueKind::dram_kind: return "one of " + joined_dram_kinds();
    case ValueKind::count: return "count";
    case ValueKind::size: return "size";
    case ValueKind::size_or_none: return "size or `none`";
    case ValueKind::bandwidth: return "bandwidth";
    case ValueKind::frequency: return "frequency";
    case ValueKind::flop_rate: return "FLOP rate";
    case ValueKind::flop_rate_or_none: return "FLOP rate or `none`";
    case ValueKind::op_rate: return "operation rate";
    case ValueKind::latency: return "latency";
    case ValueKind::fraction: return "fraction";
    case ValueKind::flop_per_cycle: return "FLOP/cycle";
    case ValueKind::op_per_cycle: return "op/cycle";
    case ValueKind::bytes_per_cycle: return "B/cycle";
    case ValueKind::boolean: return "boolean";
    case ValueKind::inst_per_cycle: return "inst/cycle";
  }
  return "value";
}

std::string kind_valid(ValueKind kind) {
  switch (kind) {
    case ValueKind::plain_text: return "a non-empty string";
    case ValueKind::compute_capability: return "<major>.<minor> as a string, e.g. \"8.0\"";
    case ValueKind::dram_kind: return "one of " + joined_dram_kinds();
    case ValueKind::count: return "a whole number > 0 with no unit, e.g. 108";
    case ValueKind::size: return valid_units(UnitKind::size);
    case ValueKind::size_or_none: return valid_units(UnitKind::size) + ", or none (no limit)";
    case ValueKind::bandwidth: return valid_units(UnitKind::bandwidth);
    case ValueKind::frequency: return valid_units(UnitKind::frequency);
    case ValueKind::flop_rate: return valid_units(UnitKind::flop_rate);
    case ValueKind::flop_rate_or_none:
      return valid_units(UnitKind::flop_rate) + ", or none where the GPU lacks the unit";
    case ValueKind::op_rate: return valid_units(UnitKind::op_rate);
    case ValueKind::latency: return valid_units(UnitKind::latency) + " (ns converted with sm.clock)";
    case ValueKind::fraction: return "a plain number in (0, 1], e.g. 0.9";
    case ValueKind::flop_per_cycle: return valid_units(UnitKind::flop_per_cycle);
    case ValueKind::op_per_cycle: return valid_units(UnitKind::op_per_cycle);
    case ValueKind::bytes_per_cycle: return valid_units(UnitKind::bytes_per_cycle);
    case ValueKind::inst_per_cycle: return valid_units(UnitKind::inst_per_cycle);
    case ValueKind::boolean: return "true or false";
  }
  return "a value";
}

double numeric_value(const HardwareProfile& p, const SchemaKey& key) {
  return std::visit(
      [&](auto member) -> double {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, i64 HardwareProfile::*>)
          return static_cast<double>(p.*member);
        else if constexpr (std::is_same_v<M, double HardwareProfile::*>)
          return p.*member;
        else if constexpr (std::is_same_v<M, bool HardwareProfile::*>)
          return p.*member ? 1 : 0;
        else if constexpr (std::is_same_v<M, double HardwareProfile::SmPipes::*>)
          return p.sm_pipes.*member;
        else
          return std::nan("");
      },
      key.target);
}

std::string text_value(const HardwareProfile& p, const SchemaKey& key) {
  if (const auto* member = std::get_if<std::string HardwareProfile::*>(&key.target)) return p.**member;
  return "";
}

std::string schema_markdown() {
  std::string out =
      "| key | unit kind | required | valid values | `HardwareProfile` field | meaning |\n"
      "|---|---|---|---|---|---|\n";
  for (const SchemaSection& s : profile_schema())
    for (const SchemaKey& k : s.keys) {
      const std::string_view required = !k.required ? "no" : s.required ? "yes" : "with the section";
      out += markdown_row(key_path(s, k), k, required);
    }
  out += "\nSections: ";
  bool first = true;
  for (const SchemaSection& s : profile_schema()) {
    if (s.key.empty()) continue;
    out += std::string(first ? "" : "; ") + "`" + std::string(s.key) + "` " + std::string(s.description) +
           (s.required ? "" : " (optional)");
    first = false;
  }
  out += ".\n";
  return out;
}

}  // namespace iosim::profile
