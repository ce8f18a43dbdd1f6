#include "sim/cli/simulate_run.h"

#include <stdexcept>
#include <string>

#include "sim/cli/engine_flags.h"
#include "sim/common/error.h"
#include "sim/report/count_report.h"
#include "sim/report/engine_report.h"
#include "sim/report/json.h"

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

// --count-by: walk the trace, or take the totals from the closed form (auto:
// the closed form when only counts are asked for and, by_predicted_time, the
// walk would be long).
bool walks_trace(const ArgParser& parser, const count::WorkEstimate& work, bool counts_only, AutoCount auto_count) {
  const std::string by = parser.text("count-by").value_or("auto");
  if (by == "trace") return true;
  if (by == "formula") return false;
  if (by != "auto") throw InputError("--count-by '" + by + "': expected auto, trace or formula");
  if (!counts_only) return true;
  return auto_count == AutoCount::by_predicted_time && work.walk_seconds <= kFormulaAfterSeconds;
}

}  // namespace

void add_simulate_run_flags(ArgParser& parser) {
  parser.add("counts-only", ArgParser::Kind::flag, "", "skip the memory model and timing engine (exact counts only)")
      .add("count-by", ArgParser::Kind::text, "auto|trace|formula",
           "walk the trace (per kernel and tensor), or take totals and FLOPs from the closed form, which equals\n"
           "      the walk exactly; auto: the closed form for --counts-only runs whose walk would take over 1 s [auto]");
}

SimulateRun plan_simulate_run(const ArgParser& parser, Scenario scenario, AutoCount auto_count) {
  SimulateRun r;
  r.scenario = std::move(scenario);
  r.options = engine_options_from_flags(parser);
  r.counts_only = parser.flag("counts-only");
  r.run = trace::build_trace(r.scenario.problem, r.scenario.options);
  r.formula = count::formula_for(r.run);
  r.work = count::estimate_work(r.run);
  r.walk = walks_trace(parser, r.work, r.counts_only, auto_count);
  return r;
}

namespace {

// `start(label, total)` and `finish()` around each phase (a bar, or nothing).
template <typename Phases>
void execute(SimulateRun& r, ProgressSink* progress, const Phases& phases) {
  if (r.walk) {
    phases.start("counting", r.work.walk_steps);
    r.counts = count::count_run(r.run, progress);
    phases.finish();
  }
  if (r.counts_only) return;
  phases.start("simulating", r.work.steps);
  engine::EngineOptions options = r.options;
  options.progress = progress;
  r.sim = engine::simulate(r.run, r.scenario.profile, options);
  phases.finish();
  check_requests_match_counts(r.counts ? &*r.counts : nullptr, r.formula, *r.sim);
}

struct BarPhases {
  report::ProgressBar& bar;
  void start(const char* label, i64 total) const { bar.start(label, total); }
  void finish() const { bar.finish(); }
};

struct NoPhases {
  void start(const char*, i64) const {}
  void finish() const {}
};

}  // namespace

void execute_simulate_run(SimulateRun& r, report::ProgressBar& bar) { execute(r, &bar, BarPhases{bar}); }

void execute_simulate_run(SimulateRun& r, ProgressSink* progress) { execute(r, progress, NoPhases{}); }

void write_simulate_json(std::ostream& out, const SimulateRun& r, int indent, bool kernels) {
  const count::RunCount* counts = r.counts ? &*r.counts : nullptr;
  const engine::SimulationResult* sim = r.sim ? &*r.sim : nullptr;
  report::JsonWriter j(out, indent);
  j.begin_object();
  report::write_count_fields(j, r.scenario.profile, r.run, counts, r.formula);
  if (sim) report::write_result_fields(j, *sim);
  if (kernels) {
    j.key("kernels").begin_array();
    for (size_t k = 0; k < r.run.kernels.size(); ++k) {
      j.begin_object();
      if (counts) report::write_kernel_count_fields(j, counts->kernels[k]);
      else report::write_kernel_plan_fields(j, r.run.kernels[k], r.work.kernel_steps[k]);
      if (sim) report::write_kernel_result_fields(j, sim->kernels[k], sim->tensor_names);
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
}

}  // namespace iosim::cli
