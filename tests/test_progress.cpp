// Progress on long runs: the bar (drawn only where told, after a delay, with
// an ETA, erased at the end), the engine's and the count walk's reports (every
// step accounted for once), and the notice for runs predicted to be long.
#define BOOST_TEST_MODULE progress
#include <boost/test/unit_test.hpp>

#include <numeric>
#include <sstream>

#include "sim/count/formulas.h"
#include "sim/count/io_count.h"
#include "sim/count/work_estimate.h"
#include "sim/engine/engine.h"
#include "sim/report/progress_bar.h"
#include "sim/trace/trace_file.h"

using namespace iosim;

namespace {

struct Counter final : ProgressSink {
  i64 units = 0, calls = 0;
  void add(i64 u) override {
    units += u;
    ++calls;
  }
};

trace::AlgorithmTrace build(workload::Algorithm a, workload::Pass pass, i64 n) {
  workload::Problem p;
  p.batch = 2;
  p.heads = 4;
  p.kv_heads = 2;
  p.seq_q = p.seq_k = n;
  p.head_dim = 64;
  p.causal = true;
  trace::TraceOptions o;
  o.algorithm = a;
  o.pass = pass;
  o.sram_limit_bytes = 166912;
  return trace::build_trace(p, o);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_disabled_bar_writes_nothing) {
  std::ostringstream out;
  double now = 0;
  {
    report::ProgressBar bar(out, false, [&] { return now; });
    bar.start("counting", 100);
    for (int i = 0; i < 100; ++i) {
      now += 1;
      bar.add(1);
    }
  }
  BOOST_TEST(out.str().empty());
}

BOOST_AUTO_TEST_CASE(the_bar_waits_half_a_second_then_shows_progress_and_time_left_and_is_erased) {
  std::ostringstream out;
  double now = 100;
  report::ProgressBar bar(out, true, [&] { return now; });
  bar.start("simulating", 1000);
  now += 0.4;
  bar.add(100);
  BOOST_TEST(out.str().empty());  // a run this short shows nothing
  now += 0.6;                     // 1 s in, a quarter done: 3 s left
  bar.add(150);
  const std::string drawn = out.str();
  BOOST_TEST(drawn.find("simulating [#######.......................] 25%") != std::string::npos, drawn);
  BOOST_TEST(drawn.find("3.0 s left") != std::string::npos, drawn);
  now += 0.05;  // redrawn at most every 0.1 s
  bar.add(10);
  BOOST_TEST(out.str() == drawn);
  bar.finish();
  BOOST_TEST(out.str().substr(drawn.size()) == "\r\033[K");
}

// Every trace step the engine replays is reported once, in few calls.
BOOST_AUTO_TEST_CASE(the_engine_reports_each_step_it_replays_once) {
  const auto run = build(workload::Algorithm::fa2, workload::Pass::fwdbwd, 2048);
  Counter c;
  engine::EngineOptions o;
  o.progress = &c;
  const auto r = engine::simulate(run, profile::find_profile("a100-sxm4-40gb", profile::default_profile_dir()), o);
  const auto steps = count::kernel_steps(run);
  BOOST_TEST(c.units == r.total.steps);
  BOOST_TEST(c.units == std::accumulate(steps.begin(), steps.end(), i64{0}));
  BOOST_TEST(c.calls <= c.units / kProgressEverySteps + static_cast<i64>(steps.size()));
  BOOST_TEST(r.options.progress == nullptr);  // the result keeps no pointer to the caller's sink
}

BOOST_AUTO_TEST_CASE(the_count_walk_reports_the_steps_it_walks) {
  for (const auto a : {workload::Algorithm::fa1, workload::Algorithm::fa2, workload::Algorithm::standard}) {
    const auto run = build(a, workload::Pass::fwdbwd, 1024);
    Counter c;
    count::count_run(run, &c);
    const auto w = count::estimate_work(run);
    BOOST_TEST(c.units == w.walk_steps, workload::to_string(a));
    BOOST_TEST(w.walk_steps <= w.steps);
  }
}

BOOST_AUTO_TEST_CASE(writing_a_trace_file_reports_every_step_written) {
  const auto run = build(workload::Algorithm::fa1, workload::Pass::fwdbwd, 1024);
  Counter c;
  std::ostringstream out;
  trace::write_trace_file(out, run, &c);
  BOOST_TEST(c.units == count::estimate_work(run).steps);
}

BOOST_AUTO_TEST_CASE(long_runs_are_announced_with_their_estimate) {
  count::WorkEstimate w;
  w.steps = 4'800'000'000;
  w.walk_steps = 4'800'000'000;
  w.seconds_per_step = 25e-9;
  w.walk_seconds = 120;
  w.engine_seconds_at_least = 120;
  const std::string engine = report::long_run_notice(w, true, true);
  BOOST_TEST(engine.find("4.8e+09 trace steps, at least 2.0 min") != std::string::npos, engine);
  BOOST_TEST(engine.find("--counts-only") != std::string::npos, engine);
  const std::string walk = report::long_run_notice(w, true, false);
  BOOST_TEST(walk.find("walking the trace takes about 2.0 min") != std::string::npos, walk);
  BOOST_TEST(report::long_run_notice(w, false, false).empty());  // counts from the closed form: instant
  w.walk_seconds = w.engine_seconds_at_least = 2;
  BOOST_TEST(report::long_run_notice(w, true, true).empty());
}

BOOST_AUTO_TEST_CASE(durations_read_in_a_suitable_unit) {
  BOOST_TEST(report::format_duration(0.42) == "0.4 s");
  BOOST_TEST(report::format_duration(42) == "42 s");
  BOOST_TEST(report::format_duration(210) == "3.5 min");
  BOOST_TEST(report::format_duration(3 * 3600) == "3.0 h");
}
