#include <iostream>
#include <optional>
#include <stdexcept>

#include "sim/cli/commands.h"
#include "sim/cli/engine_flags.h"
#include "sim/cli/scenario.h"
#include "sim/count/formulas.h"
#include "sim/count/io_count.h"
#include "sim/report/engine_report.h"
#include "sim/report/count_report.h"

namespace iosim::cli {

namespace {

// The engine replays the same trace the counter walked, so its SM->L2 request
// bytes must equal the exact counts; a difference is a bug, not a modelling choice.
void check_requests_match_counts(const count::RunCount& counts, const engine::SimulationResult& sim) {
  for (size_t k = 0; k < counts.kernels.size() && k < sim.kernels.size(); ++k) {
    const auto& c = counts.kernels[k].io;
    const auto& e = sim.kernels[k];
    if (c.read_bytes != e.request_read_bytes() || c.write_bytes != e.request_write_bytes())
      throw std::logic_error("engine request bytes of kernel " + e.name + " differ from the trace count");
  }
}

void write_json(const Scenario& s, const trace::AlgorithmTrace& run, const count::RunCount& counts,
                const count::Formula& formula, const engine::SimulationResult* sim) {
  report::JsonWriter j(std::cout);
  j.begin_object();
  report::write_count_fields(j, s.profile, run, counts, formula);
  if (sim) report::write_result_fields(j, *sim);
  j.key("kernels").begin_array();
  for (size_t k = 0; k < counts.kernels.size(); ++k) {
    j.begin_object();
    report::write_kernel_count_fields(j, counts.kernels[k]);
    if (sim) report::write_kernel_result_fields(j, sim->kernels[k], sim->tensor_names);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

int cmd_simulate(const Args& args) {
  ArgParser parser("simulate",
                   "Builds the algorithm's trace for one problem and counts the bytes every kernel moves between\n"
                   "shared memory and global memory (per tensor), beside the closed-form count; then replays the\n"
                   "trace through the L2/DRAM model and timing engine (DRAM bytes, L2 hit rate, time, bound).");
  add_scenario_flags(parser);
  add_engine_flags(parser);
  parser.add("counts-only", ArgParser::Kind::flag, "", "skip the memory model and timing engine (exact counts only)")
      .add("json", ArgParser::Kind::flag, "", "print one JSON object (keys documented in README.md)");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  const Scenario s = scenario_from_flags(parser);
  const auto options = engine_options_from_flags(parser);
  const auto run = trace::build_trace(s.problem, s.options);
  const auto counts = count::count_run(run);
  const auto formula = count::formula_for(run);
  std::optional<engine::SimulationResult> sim;
  if (!parser.flag("counts-only")) {
    sim = engine::simulate(run, s.profile, options);
    check_requests_match_counts(counts, *sim);
  }
  if (parser.flag("json")) {
    write_json(s, run, counts, formula, sim ? &*sim : nullptr);
    return 0;
  }
  report::print_count_report(std::cout, s.profile, run, counts, formula);
  if (sim) {
    std::cout << "\n";
    report::print_result_table(std::cout, *sim);
    print_timeline_line(std::cout, *sim);
  }
  return 0;
}

}  // namespace iosim::cli
