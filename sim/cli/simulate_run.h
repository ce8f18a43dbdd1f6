// One `iosim simulate` point, planned and run: shared by `iosim simulate`
// (one point, with a progress bar) and `iosim sweep` (many, on threads).
#pragma once
#include <optional>
#include <ostream>

#include "sim/cli/args.h"
#include "sim/cli/scenario.h"
#include "sim/count/formulas.h"
#include "sim/count/io_count.h"
#include "sim/count/work_estimate.h"
#include "sim/engine/engine.h"
#include "sim/report/progress_bar.h"

namespace iosim::cli {

// The flags of `iosim simulate` beside the scenario and engine flags
// (--counts-only, --count-by); `iosim sweep` takes the same.
void add_simulate_run_flags(ArgParser& parser);

struct SimulateRun {
  Scenario scenario;
  trace::AlgorithmTrace run;
  count::Formula formula;
  count::WorkEstimate work;
  engine::EngineOptions options;
  bool counts_only = false;
  bool walk = true;  // count by walking the trace (else: the closed form)
  std::optional<count::RunCount> counts;
  std::optional<engine::SimulationResult> sim;
};

// How --count-by auto counts a --counts-only run: by the closed form when the
// walk is predicted to take over a second (simulate), or by the closed form
// always (sweep: its rows must not depend on the machine's speed or load).
enum class AutoCount { by_predicted_time, closed_form };

// Builds the trace and its closed form and decides how to count; throws
// InputError for bad flags or a problem the algorithm cannot tile.
SimulateRun plan_simulate_run(const ArgParser& parser, Scenario scenario,
                              AutoCount auto_count = AutoCount::by_predicted_time);
// Counts and (unless --counts-only) simulates, showing each phase on `bar`.
void execute_simulate_run(SimulateRun& r, report::ProgressBar& bar);
// The same reporting the steps of both phases to `progress` (may be null).
void execute_simulate_run(SimulateRun& r, ProgressSink* progress);
// `iosim simulate --json`'s object; `indent` 0 writes one line. `kernels`:
// with the per-kernel array.
void write_simulate_json(std::ostream& out, const SimulateRun& r, int indent, bool kernels);

}  // namespace iosim::cli
