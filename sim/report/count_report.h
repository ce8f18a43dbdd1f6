// Human tables and JSON for the IO counts of a run.
#pragma once
#include <ostream>
#include <string>

#include "sim/count/formulas.h"
#include "sim/count/io_count.h"
#include "sim/profile/hardware_profile.h"
#include "sim/report/json.h"

namespace iosim::report {

// Fields of `iosim simulate --json` that come from counting (the engine adds
// l2/dram/time/occupancy/bound beside them). Call inside an open object.
void write_count_fields(JsonWriter& j, const profile::HardwareProfile& prof, const trace::AlgorithmTrace& run,
                        const count::RunCount& counts, const count::Formula& formula);
// Per-kernel fields (inside a kernels[] element object).
void write_kernel_count_fields(JsonWriter& j, const count::KernelCount& k);
void write_io_fields(JsonWriter& j, const count::IoTotals& io);

// The human-readable report of one run.
void print_count_report(std::ostream& out, const profile::HardwareProfile& prof, const trace::AlgorithmTrace& run,
                        const count::RunCount& counts, const count::Formula& formula);

std::string format_bytes(double bytes);   // "1.234 GB" (decimal units)
std::string format_count(double value);   // "66.6 G"
std::string describe_problem(const workload::Problem& p);

}  // namespace iosim::report
