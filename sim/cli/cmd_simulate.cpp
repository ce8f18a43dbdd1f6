#include <iostream>

#include "sim/cli/commands.h"
#include "sim/cli/engine_flags.h"
#include "sim/cli/scenario.h"
#include "sim/cli/simulate_run.h"
#include "sim/report/count_report.h"
#include "sim/report/engine_report.h"
#include "sim/report/progress_bar.h"

namespace iosim::cli {

void add_simulate_flags(ArgParser& parser) {
  add_scenario_flags(parser);
  add_engine_flags(parser);
  add_simulate_run_flags(parser);
}

int cmd_simulate(const Args& args, std::ostream& out) {
  ArgParser parser("simulate",
                   "Builds the algorithm's trace for one problem and counts the bytes every kernel moves between\n"
                   "shared memory and global memory (per tensor), beside the closed-form count; then replays the\n"
                   "trace through the L2/DRAM model and timing engine (DRAM bytes, L2 hit rate, time, bound).\n"
                   "'iosim sweep' runs many such points, with any flag a list or a range.");
  add_simulate_flags(parser);
  parser.add("json", ArgParser::Kind::flag, "", "print one JSON object (keys documented in README.md)");
  parser.parse(args);
  if (parser.help_requested()) {
    out << parser.help();
    return 0;
  }
  SimulateRun r = plan_simulate_run(parser, scenario_from_flags(parser));
  if (const std::string notice = report::long_run_notice(r.work, r.walk, !r.counts_only, r.options.fast_forward); !notice.empty())
    std::cerr << notice << std::endl;
  report::ProgressBar bar(std::cerr, report::stderr_is_terminal());
  execute_simulate_run(r, bar);
  if (parser.flag("json")) {
    write_simulate_json(out, r, 2, true);
    return 0;
  }
  const count::RunCount* counted = r.counts ? &*r.counts : nullptr;
  report::print_count_report(out, r.scenario.profile, r.run, counted, r.formula, r.work.kernel_steps);
  if (r.sim) {
    out << "\n";
    report::print_result_table(out, *r.sim);
    print_timeline_line(out, *r.sim);
  }
  return 0;
}

}  // namespace iosim::cli
