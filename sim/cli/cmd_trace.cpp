// `iosim trace` writes an algorithm's trace to a file; `iosim replay` runs any
// such file (also one written by hand or by another tool) through the memory
// model and timing engine.
#include <algorithm>
#include <iostream>
#include <numeric>

#include "sim/cli/commands.h"
#include "sim/cli/engine_flags.h"
#include "sim/cli/scenario.h"
#include "sim/common/error.h"
#include "sim/count/formulas.h"
#include "sim/report/engine_report.h"
#include "sim/report/progress_bar.h"
#include "sim/trace/trace_file.h"

namespace iosim::cli {

namespace {

// The replay's progress in bytes of the trace file: each kernel is read whole
// before it runs, so the engine's steps in it advance the bar over the bytes
// the kernel took.
class FileProgress final : public trace::KernelSource, public ProgressSink {
 public:
  FileProgress(trace::TraceFileReader& reader, ProgressSink& bar) : reader_(reader), bar_(bar) {}
  workload::DType dtype() const override { return reader_.dtype(); }
  std::vector<std::string> tensor_names() const override { return reader_.tensor_names(); }
  const trace::RangeKernel* next_kernel() override {
    kernel_begin_ = kernel_end_;
    const trace::RangeKernel* k = reader_.next_kernel();
    const i64 at = reader_.bytes_read();
    kernel_end_ = at >= 0 ? at : reader_.size_bytes();
    steps_ = std::max<i64>(1, reader_.kernel_steps());
    done_ = 0;
    return k;
  }
  void add(i64 steps) override {
    done_ += steps;
    const i64 at = kernel_begin_ + (kernel_end_ - kernel_begin_) * std::min(done_, steps_) / steps_;
    bar_.add(at - reported_);
    reported_ = at;
  }

 private:
  trace::TraceFileReader& reader_;
  ProgressSink& bar_;
  i64 kernel_begin_ = 0, kernel_end_ = 0, steps_ = 1, done_ = 0, reported_ = 0;
};

// Reads the whole file once before replaying it (one kernel in memory at a
// time), so a bad line anywhere is reported at once, not after the kernels
// before it were simulated.
void check_whole_file(const std::string& path, report::ProgressBar& bar) {
  trace::TraceFileReader reader(path);
  bar.start("checking", reader.size_bytes());
  i64 reported = 0;
  while (reader.next_kernel() != nullptr) {
    const i64 at = reader.bytes_read();
    if (at > reported) bar.add(at - reported);
    reported = std::max(reported, at);
  }
  bar.finish();
}

}  // namespace

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
  const auto steps = count::kernel_steps(run);
  report::ProgressBar bar(std::cerr, report::stderr_is_terminal());
  bar.start("writing", std::accumulate(steps.begin(), steps.end(), i64{0}));
  trace::write_trace_file(*parser.text("out"), run, &bar);
  bar.finish();
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
  const std::string& path = parser.positional().front();
  report::ProgressBar bar(std::cerr, report::stderr_is_terminal());
  check_whole_file(path, bar);
  trace::TraceFileReader reader(path);
  bar.start("replaying", reader.size_bytes());
  FileProgress source(reader, bar);
  auto options = engine_options_from_flags(parser);
  options.progress = &source;
  const auto sim = engine::simulate(source, prof, options);
  bar.finish();
  if (parser.flag("json")) {
    report::JsonWriter j(std::cout);
    j.begin_object();
    j.field("profile", prof.name).field("trace", parser.positional().front());
    report::write_result_fields(j, sim);
    report::write_kernel_array(j, sim);
    j.end_object();
    return 0;
  }
  std::cout << "replay of " << parser.positional().front() << " on " << prof.display_name << "\n";
  report::print_result_table(std::cout, sim);
  print_timeline_line(std::cout, sim);
  return 0;
}

}  // namespace iosim::cli
