#include "sim/report/engine_report.h"

#include <cstdio>
#include <limits>

namespace iosim::report {

namespace {

using report::JsonWriter;

double ratio(i64 a, i64 b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }

void write_kind(JsonWriter& j, const memory::L2KindCounts& c, i64 sector_bytes) {
  j.begin_object();
  j.field("requests", c.requests).field("merged_requests", c.merged_requests).field("bytes", c.bytes);
  j.field("sectors", c.sectors).field("sector_bytes", c.sectors * sector_bytes);
  j.field("hits", c.hit_sectors).field("misses", c.miss_sectors);
  j.field("lookups", c.lookup_sectors).field("lookup_hits", c.lookup_hit_sectors);
  j.field("lookup_misses", c.lookup_miss_sectors);
  j.end_object();
}

void write_fields(JsonWriter& j, const KernelResult& k, const std::vector<std::string>& tensor_names,
                  i64 sector_bytes) {
  const memory::L2KindCounts all = k.l2.total();
  j.key("requests").begin_object();
  j.field("read_bytes", k.request_read_bytes()).field("write_bytes", k.request_write_bytes());
  j.field("reduce_bytes", k.request_reduce_bytes());
  j.field("total_bytes", k.request_read_bytes() + k.request_write_bytes());
  // On the crossbar's read counter beside the L2's read sectors; in no memory.
  j.field("zero_fill_read_bytes", k.zero_fill_read_bytes);
  j.field("tiles", all.requests).field("steps", k.steps);
  j.end_object();

  j.key("l2").begin_object();
  j.field("hits", all.hit_sectors).field("misses", all.miss_sectors);
  j.field("hit_rate", ratio(all.hit_sectors, all.hit_sectors + all.miss_sectors));
  j.field("unit", "sectors");
  j.field("lookups", all.lookup_sectors).field("lookup_hits", all.lookup_hit_sectors);
  j.field("lookup_misses", all.lookup_miss_sectors);
  j.field("lookup_hit_rate", ratio(all.lookup_hit_sectors, all.lookup_sectors));
  j.field("merged_requests", all.merged_requests);
  j.key("by_kind").begin_object();
  j.key("read");
  write_kind(j, k.l2.kind[0], sector_bytes);
  j.key("write");
  write_kind(j, k.l2.kind[1], sector_bytes);
  j.key("reduce");
  write_kind(j, k.l2.kind[2], sector_bytes);
  j.end_object();
  j.end_object();

  if (k.local.load_bytes > 0 || k.local.store_bytes > 0) {  // the warps' spills (engine/local_traffic.h)
    j.key("local").begin_object();
    j.field("store_bytes", k.local.store_bytes).field("load_bytes", k.local.load_bytes);
    j.field("load_l1_miss_bytes", k.local.miss_bytes);
    j.field("l1_bytes_per_sm", k.local_l1_bytes);
    j.end_object();
  }

  j.key("dram").begin_object();
  j.field("read_bytes", k.dram_read_bytes).field("write_bytes", k.dram_write_bytes);
  j.field("early_write_bytes", k.l2.early_writeback_sectors * sector_bytes);  // of write_bytes: by the dirty limit
  j.field("dirty_left_bytes", k.dirty_left_bytes).field("flushed_dirty_bytes", k.flushed_dirty_bytes);
  j.key("by_tensor").begin_object();
  for (size_t t = 0; t < k.l2.tensor.size(); ++t) {
    const auto& c = k.l2.tensor[t];
    if (c.read_bytes == 0 && c.write_bytes == 0 && c.writeback_sectors == 0) continue;
    const std::string name = t < tensor_names.size() && !tensor_names[t].empty() ? tensor_names[t] : "tensor" + std::to_string(t);
    j.key(name).begin_object();
    j.field("read_bytes", c.fetch_sectors * sector_bytes).field("write_bytes", c.writeback_sectors * sector_bytes);
    j.field("l2_hits", c.hit_sectors).field("l2_misses", c.miss_sectors);
    j.end_object();
  }
  j.end_object();
  j.end_object();

  j.key("time").begin_object();
  j.field("seconds", k.seconds).field("cycles", k.cycles).field("start_seconds", k.start_seconds);
  j.end_object();

  const engine::Occupancy& o = k.occupancy;
  j.key("occupancy").begin_object();
  j.field("ctas_per_sm", o.ctas_per_sm).field("waves", o.waves).field("waves_exact", o.waves_exact);
  j.field("limiter", o.limiter).field("total_ctas", o.total_ctas).field("slots", o.slots);
  j.field("smem_per_cta", o.smem_per_cta).field("regs_per_cta", o.regs_per_cta);
  j.end_object();

  j.key("achieved").begin_object();
  j.field("dram_bytes_per_s", k.dram_bytes_per_s).field("tensor_flops_per_s", k.tensor_flops_per_s);
  j.end_object();
  const engine::Utilisation& u = k.utilisation;
  j.key("utilisation").begin_object();
  j.field("dram", u.dram).field("l2", u.l2).field("sm_pipes", u.sm_pipes);
  j.field("tensor", u.tensor).field("fp32_sfu", u.fp32_sfu);
  j.end_object();
  j.field("bound", k.bound).field("bound_reason", k.bound_reason);
  // Fast-forward: the windows measured, and the work skipped and charged at
  // their rates (the run: summed over its kernels; windows 0).
  const auto& ff = k.fast_forward;
  j.key("fast_forward").begin_object().field("window_ctas", ff.window_ctas).field("skipped_ctas", ff.skipped_ctas);
  j.field("window_steps", ff.window_steps).field("skipped_steps", ff.skipped_steps);
  j.field("skipped_seconds", k.cycles > 0 ? ff.skipped_cycles / k.cycles * k.seconds : 0.0);
  j.end_object();
}

}  // namespace

void write_result_fields(JsonWriter& j, const SimulationResult& r) {
  j.key("engine").begin_object();
  j.field("profile", r.profile);
  j.field("l2_replacement", r.options.l2_replacement);
  j.field("cold_l2_per_kernel", r.options.cold_l2_per_kernel);
  j.field("l2_merge_window_cycles", r.options.l2_merge_window_cycles.value_or(0));
  const double limit = r.options.l2_dirty_limit_bytes.value_or(std::numeric_limits<double>::infinity());
  if (limit < std::numeric_limits<double>::infinity()) j.field("l2_dirty_limit_bytes", static_cast<i64>(limit));
  else j.field("l2_dirty_limit_bytes", "none");
  bool all_calibrated = !r.kernels.empty();
  for (const auto& k : r.kernels) all_calibrated = all_calibrated && k.sm_model && k.machine_measured;
  j.field("timing_calibrated", all_calibrated);  // every kernel on the SM model with a measured machine
  j.field("l2_set_sampling", r.options.l2_set_sampling);
  j.field("fast_forward", r.options.fast_forward);
  j.field("l2_copies", r.options.l2_copies.value_or(false));  // the value used: far reads copy lines near
  j.field("step_jitter", r.step_jitter);    // 0: identical CTAs in lockstep
  j.field("cta_priority", r.cta_priority);  // 0: every CTA at its SM's mean
  j.field("kernel_gap_seconds", r.options.kernel_gap_seconds);
  j.field("host_seconds", r.host_seconds);
  if (!r.options.timeline_path.empty()) {
    j.field("timeline", r.options.timeline_path);
    j.field("timeline_note", r.timeline_note);
  }
  j.end_object();
  write_fields(j, r.total, r.tensor_names, r.total.sector_bytes);
}

void write_kernel_result_fields(JsonWriter& j, const KernelResult& k, const std::vector<std::string>& tensor_names,
                                bool identity) {
  if (identity) {
    j.field("name", k.name).field("pass", workload::to_string(k.pass));
    j.key("grid").begin_array().value(k.grid.x).value(k.grid.y).value(k.grid.z).end_array();
    j.field("ctas", k.grid.count());
    j.key("cta").begin_object().field("smem_bytes", k.cta.smem_bytes).field("threads", k.cta.threads);
    j.field("regs_per_thread", k.cta.regs_per_thread).field("stages", k.stages).end_object();
  }
  write_fields(j, k, tensor_names, k.sector_bytes);
  // What the SM model ran: warp instructions by pipe (Nsight Compute's
  // smsp__inst_executed_pipe_* and sass counters count the same).
  j.key("sm_model").begin_object().field("used", k.sm_model).field("clock_hz", k.sm_clock_hz);
  j.key("instructions").begin_object();
  i64 all = 0;
  for (int q = 0; q < schedule::kPipeCount; ++q) {
    j.field(schedule::to_string(static_cast<schedule::Pipe>(q)), k.instructions[static_cast<size_t>(q)]);
    all += k.instructions[static_cast<size_t>(q)];
  }
  j.field("total", all).end_object();
  j.key("programs").begin_array();
  for (const auto& pt : k.programs) {
    j.begin_object().field("name", pt.name);
    j.key("instructions").begin_object();
    i64 n = 0;
    for (int q = 0; q < schedule::kPipeCount; ++q) {
      j.field(schedule::to_string(static_cast<schedule::Pipe>(q)), pt.instructions[static_cast<size_t>(q)]);
      n += pt.instructions[static_cast<size_t>(q)];
    }
    j.field("total", n).end_object();
    j.field("cycles_alone", pt.cycles_alone).field("cycles_at_occupancy", pt.cycles_at_occupancy).end_object();
  }
  j.end_array().end_object();
  // How its compute was timed: the SM model (warp programs), or the
  // machine's rates; calibrated = the machine was measured (sm_pipes).
  j.key("timing").begin_object();
  j.field("model", k.sm_model ? "sm_model" : "rates").field("calibrated", k.machine_measured);
  j.end_object();
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string bytes(i64 b) {
  const double v = static_cast<double>(b);
  if (v >= 1e9) return fmt("%.3f GB", v / 1e9);
  if (v >= 1e6) return fmt("%.2f MB", v / 1e6);
  if (v >= 1e3) return fmt("%.1f kB", v / 1e3);
  return fmt("%.0f B", v);
}

void row(std::ostream& out, const KernelResult& k) {
  const auto t = k.l2.total();
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-22s %10.4f %11s %11s %11s %7.1f%% %7.1f%% %5lld %6lld  %s\n", k.name.c_str(),
                k.seconds * 1e3, bytes(k.dram_read_bytes).c_str(), bytes(k.dram_write_bytes).c_str(),
                bytes(k.dirty_left_bytes).c_str(), 100 * ratio(t.hit_sectors, t.sectors),
                100 * ratio(t.lookup_hit_sectors, t.lookup_sectors), static_cast<long long>(k.occupancy.ctas_per_sm),
                static_cast<long long>(k.occupancy.waves), k.bound.c_str());
  out << buf;
}

}  // namespace

void write_kernel_array(JsonWriter& j, const SimulationResult& r) {
  j.key("kernels").begin_array();
  for (const auto& k : r.kernels) {
    j.begin_object();
    write_kernel_result_fields(j, k, r.tensor_names, true);
    j.end_object();
  }
  j.end_array();
}

std::string fast_forward_summary(const SimulationResult& r) {
  i64 skipped = 0;
  int kernels = 0;
  for (const auto& k : r.kernels) {
    skipped += k.fast_forward.skipped_steps;
    kernels += k.fast_forward.skipped_steps > 0 ? 1 : 0;
  }
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "fast-forward ran %.1f%% of the steps, in %d kernel(s) charged the rest at rates measured just before",
                100.0 * static_cast<double>(r.total.steps - skipped) / static_cast<double>(std::max<i64>(1, r.total.steps)),
                kernels);
  return buf;
}

void print_result_table(std::ostream& out, const SimulationResult& r) {
  out << "Timing engine (profile " << r.profile << ", L2 " << r.options.l2_replacement
      << (r.options.cold_l2_per_kernel ? ", cold L2 at each kernel" : ", L2 carried across kernels");
  if (r.options.l2_set_sampling > 1)
    out << ", APPROXIMATE: 1 in " << r.options.l2_set_sampling << " L2 set groups simulated, counts scaled";
  if (r.options.fast_forward) out << ", APPROXIMATE: " << fast_forward_summary(r);
  out << ")\n";
  bool measured = !r.kernels.empty();
  for (const auto& k : r.kernels) measured = measured && k.machine_measured;
  if (!measured)
    out << "The SM model runs on values derived from the profile's datasheet rates (no sm_pipes: run 'iosim "
           "calibrate' on the GPU for measured ones)\n";
  char head[256];
  std::snprintf(head, sizeof head, "%-22s %10s %11s %11s %11s %8s %8s %5s %6s  %s\n", "kernel", "time ms", "DRAM read",
                "DRAM write", "dirty left", "L2 hit", "lookup", "CTA/SM", "waves", "bound");
  out << head;
  for (const auto& k : r.kernels) row(out, k);
  row(out, r.total);
  out << "DRAM write = dirty lines evicted during the kernel (as Nsight Compute counts); dirty left = still in L2 at its end.\n";
  out << "L2 hit = requested sectors served without DRAM; lookup = hit rate of tag lookups after merging.\n";
  for (const auto& k : r.kernels) out << "  " << k.name << ": " << k.bound << " - " << k.bound_reason << "\n";
  if (!r.timeline_note.empty()) out << "note: " << r.timeline_note << "\n";
}

}  // namespace iosim::report
