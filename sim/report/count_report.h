// Human tables and JSON for the IO counts of a run.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/count/formulas.h"
#include "sim/count/io_count.h"
#include "sim/profile/hardware_profile.h"
#include "sim/report/json.h"
#include "sim/trace/kernel_tiles.h"

namespace iosim::report {

// Fields of `iosim simulate --json` that come from counting (the engine adds
// l2/dram/time/occupancy/bound beside them). Call inside an open object.
// `counts` is null when the run was counted by the closed form alone
// (`counted_by: "formula"`): totals and FLOPs come from `formula`, and the
// per-tensor and non-matmul counts, which only the trace walk gives, are left out.
void write_count_fields(JsonWriter& j, const profile::HardwareProfile& prof, const trace::AlgorithmTrace& run,
                        const count::RunCount* counts, const count::Formula& formula);
// Per-kernel fields (inside a kernels[] element object).
void write_kernel_count_fields(JsonWriter& j, const count::KernelCount& k);
// The same without a trace walk: what the plan and the closed form give.
void write_kernel_plan_fields(JsonWriter& j, const trace::KernelEntry& k, i64 steps);
void write_io_fields(JsonWriter& j, const count::IoTotals& io);

// The human-readable report of one run (`counts` null: counted by the closed
// form; `kernel_steps` from count::kernel_steps then fills the kernel table).
void print_count_report(std::ostream& out, const profile::HardwareProfile& prof, const trace::AlgorithmTrace& run,
                        const count::RunCount* counts, const count::Formula& formula,
                        const std::vector<i64>& kernel_steps = {});

// Whether the run's tiling has a compiled CUDA kernel, and the nearest that has.
struct KernelNote {
  trace::KernelAvailability availability;
  std::optional<trace::KernelTiling> nearest;  // when none is compiled
  std::string why_no_nearest;
  std::string text(const trace::AlgorithmTrace& run) const;  // one line for the tables
};
KernelNote kernel_note(const trace::AlgorithmTrace& run);
// "kernel": {compiled, menu, reason, nearest}
void write_kernel_note(JsonWriter& j, const KernelNote& note);

std::string format_bytes(double bytes);   // "1.234 GB" (decimal units)
std::string format_count(double value);   // "66.6 G"
std::string describe_problem(const workload::Problem& p);

}  // namespace iosim::report
