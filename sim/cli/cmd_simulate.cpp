#include <iostream>
#include <optional>
#include <stdexcept>

#include "sim/cli/commands.h"
#include "sim/cli/engine_flags.h"
#include "sim/cli/scenario.h"
#include "sim/common/error.h"
#include "sim/count/formulas.h"
#include "sim/count/io_count.h"
#include "sim/count/work_estimate.h"
#include "sim/report/engine_report.h"
#include "sim/report/count_report.h"
#include "sim/report/progress_bar.h"

namespace iosim::cli {

namespace {

// --count-by auto takes the closed form when the walk would take longer.
constexpr double kFormulaAfterSeconds = 1.0;

// The engine replays the same trace the counter walked, so its SM->L2 request
// bytes must equal the exact counts (per kernel, or in total against the
// closed form); a difference is a bug, not a modelling choice.
void check_requests_match_counts(const count::RunCount* counts, const count::Formula& formula,
                                 const engine::SimulationResult& sim) {
  if (!counts) {
    if (sim.total.request_read_bytes() != formula.read_bytes || sim.total.request_write_bytes() != formula.write_bytes)
      throw std::logic_error("engine request bytes differ from the closed-form count");
    return;
  }
  for (size_t k = 0; k < counts->kernels.size() && k < sim.kernels.size(); ++k) {
    const auto& c = counts->kernels[k].io;
    const auto& e = sim.kernels[k];
    if (c.read_bytes != e.request_read_bytes() || c.write_bytes != e.request_write_bytes())
      throw std::logic_error("engine request bytes of kernel " + e.name + " differ from the trace count");
  }
}

void write_json(const Scenario& s, const trace::AlgorithmTrace& run, const count::RunCount* counts,
                const count::Formula& formula, const count::WorkEstimate& work, const engine::SimulationResult* sim) {
  report::JsonWriter j(std::cout);
  j.begin_object();
  report::write_count_fields(j, s.profile, run, counts, formula);
  if (sim) report::write_result_fields(j, *sim);
  j.key("kernels").begin_array();
  for (size_t k = 0; k < run.kernels.size(); ++k) {
    j.begin_object();
    if (counts) report::write_kernel_count_fields(j, counts->kernels[k]);
    else report::write_kernel_plan_fields(j, run.kernels[k], work.kernel_steps[k]);
    if (sim) report::write_kernel_result_fields(j, sim->kernels[k], sim->tensor_names);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

// --count-by: walk the trace, or take the totals from the closed form (auto:
// the closed form when only counts are asked for and the walk would be long).
bool walks_trace(const ArgParser& parser, const count::WorkEstimate& work, bool counts_only) {
  const std::string by = parser.text("count-by").value_or("auto");
  if (by == "trace") return true;
  if (by == "formula") return false;
  if (by != "auto") throw InputError("--count-by '" + by + "': expected auto, trace or formula");
  return !(counts_only && work.walk_seconds > kFormulaAfterSeconds);
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
      .add("count-by", ArgParser::Kind::text, "auto|trace|formula",
           "walk the trace (per kernel and tensor), or take totals and FLOPs from the closed form, which equals\n"
           "      the walk exactly; auto: the closed form for --counts-only runs whose walk would take over 1 s [auto]")
      .add("json", ArgParser::Kind::flag, "", "print one JSON object (keys documented in README.md)");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  const Scenario s = scenario_from_flags(parser);
  auto options = engine_options_from_flags(parser);
  const bool counts_only = parser.flag("counts-only");
  const auto run = trace::build_trace(s.problem, s.options);
  const auto formula = count::formula_for(run);
  const count::WorkEstimate work = count::estimate_work(run);
  const bool walk = walks_trace(parser, work, counts_only);
  if (const std::string notice = report::long_run_notice(work, walk, !counts_only); !notice.empty())
    std::cerr << notice << std::endl;

  report::ProgressBar bar(std::cerr, report::stderr_is_terminal());
  std::optional<count::RunCount> counts;
  if (walk) {
    bar.start("counting", work.walk_steps);
    counts = count::count_run(run, &bar);
    bar.finish();
  }
  std::optional<engine::SimulationResult> sim;
  if (!counts_only) {
    bar.start("simulating", work.steps);
    options.progress = &bar;
    sim = engine::simulate(run, s.profile, options);
    bar.finish();
    check_requests_match_counts(counts ? &*counts : nullptr, formula, *sim);
  }
  const count::RunCount* counted = counts ? &*counts : nullptr;
  if (parser.flag("json")) {
    write_json(s, run, counted, formula, work, sim ? &*sim : nullptr);
    return 0;
  }
  report::print_count_report(std::cout, s.profile, run, counted, formula, work.kernel_steps);
  if (sim) {
    std::cout << "\n";
    report::print_result_table(std::cout, *sim);
    print_timeline_line(std::cout, *sim);
  }
  return 0;
}

}  // namespace iosim::cli
