#include <iostream>

#include "sim/cli/commands.h"
#include "sim/cli/scenario.h"
#include "sim/count/formulas.h"
#include "sim/count/io_count.h"
#include "sim/report/count_report.h"

namespace iosim::cli {

int cmd_simulate(const Args& args) {
  ArgParser parser("simulate",
                   "Builds the algorithm's trace for one problem, counts the bytes every kernel moves between\n"
                   "shared memory and global memory (per tensor), and prints them beside the closed-form count.");
  add_scenario_flags(parser);
  parser.add("json", ArgParser::Kind::flag, "", "print one JSON object (keys documented in README.md)");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  const Scenario s = scenario_from_flags(parser);
  const auto run = trace::build_trace(s.problem, s.options);
  const auto counts = count::count_run(run);
  const auto formula = count::formula_for(run);
  if (parser.flag("json")) {
    report::JsonWriter j(std::cout);
    j.begin_object();
    report::write_count_fields(j, s.profile, run, counts, formula);
    j.key("kernels").begin_array();
    for (const auto& k : counts.kernels) {
      j.begin_object();
      report::write_kernel_count_fields(j, k);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  } else {
    report::print_count_report(std::cout, s.profile, run, counts, formula);
  }
  return 0;
}

}  // namespace iosim::cli
