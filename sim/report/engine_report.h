// The engine's results for people and programs: a text table, and the fields
// of `iosim simulate --json` / `iosim replay --json`,
// written into an object the caller has opened. Keys (top level and per
// kernel): requests.*, l2.{hits,misses,hit_rate,lookups,lookup_hits,
// lookup_misses,lookup_hit_rate,merged_requests,by_kind}, dram.{read_bytes,
// write_bytes,dirty_left_bytes,flushed_dirty_bytes,by_tensor}, time.{seconds,
// cycles,start_seconds}, occupancy.{ctas_per_sm,waves,waves_exact,limiter,...},
// achieved.*, utilisation.*, bound, bound_reason. docs/engine.md lists them.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/report/json.h"

namespace iosim::report {

using engine::KernelResult;
using engine::SimulationResult;

// Run-level fields plus "engine" (the options used and the host time).
void write_result_fields(JsonWriter& j, const SimulationResult& r);
// One kernel's fields; `identity` adds name, pass, grid and CTA resources
// (for callers that have no count fields to give them).
void write_kernel_result_fields(JsonWriter& j, const KernelResult& k,
                                const std::vector<std::string>& tensor_names, bool identity = false);

// "fast-forward skipped x% of the CTAs (n of m) in k kernel(s), ...".
std::string fast_forward_summary(const SimulationResult& r);

// "kernels": an array of every kernel's object, identity fields included (as
// `iosim replay --json` writes them).
void write_kernel_array(JsonWriter& j, const SimulationResult& r);

// One row per kernel and a total row: time, DRAM read/write/dirty-left,
// L2 hit rate (sectors and lookups), occupancy, waves, bound; then each
// kernel's bound reason.
void print_result_table(std::ostream& out, const SimulationResult& r);

}  // namespace iosim::report
