// `iosim sweep`: `iosim simulate` over a grid of flag values, on threads, one
// output row per point in grid order.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "sim/cli/commands.h"
#include "sim/cli/point_runner.h"
#include "sim/cli/scenario.h"
#include "sim/cli/simulate_run.h"
#include "sim/cli/sweep_grid.h"
#include "sim/common/error.h"
#include "sim/report/progress_bar.h"
#include "sim/report/sweep_table.h"

namespace iosim::cli {

namespace {

const char* const kSummary =
    "Runs 'iosim simulate' for every point of a grid and writes one row per point: CSV with a header\n"
    "(default) or JSON lines. Every valued flag of 'iosim simulate' (listed below) may hold\n"
    "  a comma list             --algo standard,fa1,fa2   --block-m 64,128   --dtype fp16,bf16\n"
    "  an integer range A:B:xK  --seq 512:16384:x2     (A, A*K, A*K^2, ... while <= B; K >= 2)\n"
    "                or A:B:+K  --head-dim 64:128:+32  (A, A+K, A+2K, ... while <= B; K >= 1)\n"
    "  or a list of both        --seq 256,512:4096:x2\n"
    "and --set KEY=V1,V2,... changes a profile value (any key of hw_profiles/README.md, written as in a\n"
    "profile file; counts and sizes also take ranges: --set sm.smem_per_block=48KiB:96KiB:+16KiB).\n"
    "The grid is the product of all flags in the order given, the last varying fastest; the rows come\n"
    "in that order whatever --jobs is. Real-valued and text flags take lists only; --causal and the\n"
    "other value-less flags apply to every point.\n\n"
    "Columns: arg.FLAG for each flag with several values and set.KEY for each --set key (the values as\n"
    "given), status (ok or error), error, then keys of 'iosim simulate --json' named by their path\n"
    "(problem.seq_q, tiling.block_m, global.total_bytes, formula.bytes, l2.lookups, dram.read_bytes,\n"
    "time.seconds, bound, ...; with --counts-only the count keys alone). With --counts-only, points are\n"
    "counted by the closed form, which equals the trace walk exactly, whatever their size (--count-by\n"
    "trace walks them), so that no row depends on the machine's speed.\n\n"
    "Errors: a malformed flag, list, range or --set key/value stops the sweep before any point runs\n"
    "(exit 2). A point that cannot run (a tile that does not fit shared memory, H not divisible by\n"
    "HKV, ...) is a row with status 'error' and the message, and the sweep goes on; the exit status is 0\n"
    "when at least one point ran, 2 when none did.\n\n"
    "Example: HBM traffic against N for three algorithms:\n"
    "  iosim sweep --counts-only --algo standard,fa1,fa2 --seq 512:16384:x2 --head-dim 64 --heads 16";

struct SweepOptions {
  i64 jobs = 1;
  report::SweepFormat format = report::SweepFormat::csv;
  std::string out;
};

SweepOptions sweep_options(const ArgParser& own) {
  SweepOptions o;
  o.jobs = jobs_from_flag(own.integer("jobs"));
  o.format = report::parse_sweep_format(own.text("format").value_or("csv"));
  o.out = own.text("out").value_or("");
  return o;
}

ArgParser simulate_parser() {
  ArgParser p("sweep", kSummary);
  add_simulate_flags(p);
  return p;
}

// Flags that cannot mean anything over many points.
void reject_single_run_flags(const SweepGrid& grid) {
  for (const auto& d : grid.dims)
    if (d.flag == "timeline" || d.flag == "timeline-max-events")
      throw InputError("sweep: --" + d.flag + " writes one run's timeline; give it to 'iosim simulate' for one point");
}

// Every value of every flag, parsed by simulate's parser, so that a typo stops
// the sweep before any point runs.
void check_values(const SweepGrid& grid) {
  simulate_parser().parse(grid.fixed_args);
  for (const auto& d : grid.dims) {
    if (d.flag == "set") continue;  // checked when the profiles load
    for (const auto& v : d.values) {
      std::vector<std::string> args = grid.fixed_args;
      args.insert(args.end(), {"--" + d.flag, v});
      simulate_parser().parse(args);
    }
  }
}

// The dimensions that choose the profile (--profile, --set), and each
// combination's profile, loaded once; a bad key or value stops the sweep.
struct Profiles {
  std::vector<std::size_t> dims;
  std::vector<profile::HardwareProfile> loaded;  // by combination, mixed radix over `dims`, last fastest

  std::size_t combination(const std::vector<std::size_t>& at, const SweepGrid& grid) const {
    std::size_t c = 0;
    for (std::size_t d : dims) c = c * grid.dims[d].values.size() + at[d];
    return c;
  }
};

Profiles load_profiles(const SweepGrid& grid) {
  Profiles p;
  SweepGrid sub;
  for (std::size_t d = 0; d < grid.dims.size(); ++d)
    if (grid.dims[d].flag == "profile" || grid.dims[d].flag == "set") {
      p.dims.push_back(d);
      sub.dims.push_back(grid.dims[d]);
    }
  for (i64 c = 0; c < sub.points(); ++c) {
    ArgParser parser("sweep", "");
    add_profile_flag(parser);
    parser.parse(sub.args_of(c));
    p.loaded.push_back(profile_from_flag(parser));
  }
  return p;
}

// The dimensions shown as input columns: several values, or a --set key.
std::vector<std::size_t> input_dims(const SweepGrid& grid) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < grid.dims.size(); ++d)
    if (grid.dims[d].values.size() > 1 || grid.dims[d].flag == "set") dims.push_back(d);
  return dims;
}

// A point's output line, and its error ("" when it ran).
struct PointLine {
  std::string line, error;
};

SimulateRun plan_point(const SweepGrid& grid, const Profiles& profiles, i64 index) {
  ArgParser parser = simulate_parser();
  parser.parse(grid.args_of(index));
  const std::size_t combination = profiles.combination(grid.indices_of(index), grid);
  return plan_simulate_run(parser, scenario_from_flags(parser, profiles.loaded[combination]), AutoCount::closed_form);
}

PointLine run_point(const SweepGrid& grid, const std::vector<std::size_t>& shown, const Profiles& profiles,
                    const report::SweepTable& table, i64 index, PointProgress& progress) {
  report::SweepRow row;
  const std::vector<std::size_t> at = grid.indices_of(index);
  for (std::size_t d : shown) row.inputs.push_back(grid.dims[d].values[at[d]]);
  try {
    SimulateRun r = plan_point(grid, profiles, index);
    execute_simulate_run(r, &progress);
    std::ostringstream json;
    write_simulate_json(json, r, 0, false);
    row.json = json.str();
  } catch (const InputError& e) {
    row.error = e.what();
  }
  return {table.line(row), row.error};
}

// Each point's share of the progress bar: the steps of its walk and its
// timing engine, from its plan (1 for a point that cannot run: it ends at once).
std::vector<i64> point_weights(const SweepGrid& grid, const Profiles& profiles, i64 jobs, report::ProgressBar& bar) {
  return plan_weights(grid.points(), jobs, [&](i64 i) { return plan_point(grid, profiles, i); }, bar);
}

}  // namespace

int cmd_sweep(const Args& args, std::ostream& out) {
  const ArgParser simulate = simulate_parser();
  std::vector<std::string> rest;
  const SweepGrid grid = parse_sweep_grid(args, simulate, rest);
  ArgParser own("sweep", kSummary);
  own.add("jobs", ArgParser::Kind::integer, "N", "points run at once, on N threads [the hardware's threads]")
      .add("format", ArgParser::Kind::text, "csv|jsonl", "CSV with a header, or one JSON object per line [csv]")
      .add("out", ArgParser::Kind::text, "FILE", "write the rows to FILE [standard output]");
  own.set_unknown_flag_hint("the sweep takes 'iosim simulate's flags but --json: use --format jsonl");
  own.parse(rest);
  if (own.help_requested()) {
    out << own.help() << "\nflags of 'iosim simulate', each a list or a range where it takes a value:\n"
              << simulate.flags_help();
    return 0;
  }
  const SweepOptions options = sweep_options(own);
  reject_single_run_flags(grid);
  check_values(grid);
  const Profiles profiles = load_profiles(grid);
  const std::vector<std::size_t> shown = input_dims(grid);
  std::vector<std::string> columns;
  for (std::size_t d : shown) columns.push_back(grid.dims[d].column());
  auto fixed = [&](const char* flag) {
    return std::find(grid.fixed_args.begin(), grid.fixed_args.end(), flag) != grid.fixed_args.end();
  };
  const bool counts_only = fixed("--counts-only");
  // The rows do not say how the engine ran: an approximate one is said once.
  if (!counts_only && fixed("--fast-forward"))
    std::cerr << "sweep: APPROXIMATE engine: fast-forward (each time within about 1.3% of the exact engine's: "
                 "docs/engine.md, \"Fast-forward\")\n";

  std::ofstream file;
  if (!options.out.empty()) {
    file.open(options.out);
    if (!file) throw InputError("--out '" + options.out + "': cannot open the file for writing");
  }
  // Rows bound for a terminal wait for the progress bar to end; elsewhere they stream.
  const bool to_terminal = options.out.empty() && &out == &std::cout && isatty(fileno(stdout));
  std::ostringstream held;
  std::ostream& rows = !options.out.empty() ? static_cast<std::ostream&>(file) : to_terminal ? held : out;
  const report::SweepTable table(options.format, columns, counts_only);
  rows << table.header();
  report::ProgressBar bar(std::cerr, report::stderr_is_terminal());
  // Counts alone are quick and alike (the closed form): the bar counts points.
  const std::vector<i64> weights = counts_only ? std::vector<i64>(static_cast<std::size_t>(grid.points()), 1)
                                               : point_weights(grid, profiles, options.jobs, bar);
  i64 total = 0;
  for (i64 w : weights) total += w;
  bar.start("sweep", total);
  i64 ran = 0;
  std::string first_error;
  run_points_in_order<PointLine>(
      weights, options.jobs,
      [&](i64 i, PointProgress& progress) { return run_point(grid, shown, profiles, table, i, progress); },
      [&](const PointLine& p) {
        rows << p.line;
        if (p.error.empty()) ++ran;
        else if (first_error.empty()) first_error = p.error;
      },
      bar);
  bar.finish();
  out << held.str() << std::flush;
  if (file && !file.flush()) throw InputError("--out '" + options.out + "': writing failed");
  if (ran == 0) throw InputError("sweep: no point ran; the first error: " + first_error);
  return 0;
}

}  // namespace iosim::cli
