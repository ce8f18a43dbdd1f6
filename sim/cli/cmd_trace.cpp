// `iosim trace` writes an algorithm's trace to a file; `iosim replay` runs any
// such file (also one written by hand or by another tool) through the memory
// model and timing engine.
#include <iostream>

#include "sim/cli/commands.h"
#include "sim/cli/engine_flags.h"
#include "sim/cli/scenario.h"
#include "sim/common/error.h"
#include "sim/report/engine_report.h"
#include "sim/trace/trace_file.h"

namespace iosim::cli {

int cmd_trace(const Args& args) {
  ArgParser parser("trace",
                   "Writes the algorithm's trace (every CTA's tile reads/writes as byte ranges, compute amounts and\n"
                   "step boundaries; format in docs/engine.md) to a file that 'iosim replay' runs.");
  add_scenario_flags(parser);
  parser.add("out", ArgParser::Kind::text, "FILE", "where to write the trace (required)");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  if (!parser.has("out")) throw InputError("trace: --out FILE is required");
  const Scenario s = scenario_from_flags(parser);
  const auto run = trace::build_trace(s.problem, s.options);
  trace::write_trace_file(*parser.text("out"), run);
  std::cout << "wrote " << *parser.text("out") << " (" << run.kernels.size() << " kernels)\n";
  return 0;
}

int cmd_replay(const Args& args) {
  ArgParser parser("replay", "Runs a trace file through the L2/DRAM model and the timing engine.");
  parser.allow_positional("FILE", "a trace written by 'iosim trace' (or by hand, see docs/engine.md)");
  add_profile_flag(parser);
  add_engine_flags(parser);
  parser.add("json", ArgParser::Kind::flag, "", "print one JSON object");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  if (parser.positional().size() != 1) throw InputError("replay: give exactly one trace FILE");
  const auto prof = profile_from_flag(parser);
  const auto sim = engine::replay_trace_file(parser.positional().front(), prof, engine_options_from_flags(parser));
  if (parser.flag("json")) {
    report::JsonWriter j(std::cout);
    j.begin_object();
    j.field("profile", prof.name).field("trace", parser.positional().front());
    report::write_result_fields(j, sim);
    j.key("kernels").begin_array();
    for (const auto& k : sim.kernels) {
      j.begin_object();
      report::write_kernel_result_fields(j, k, sim.tensor_names, true);
      j.end_object();
    }
    j.end_array().end_object();
    return 0;
  }
  std::cout << "replay of " << parser.positional().front() << " on " << prof.display_name << "\n";
  report::print_result_table(std::cout, sim);
  print_timeline_line(std::cout, sim);
  return 0;
}

}  // namespace iosim::cli
