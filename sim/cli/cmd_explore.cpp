// `iosim explore`: every feasible tiling of one problem through the timing
// engine, ranked by predicted time, with a recommendation and its reason.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "sim/cli/commands.h"
#include "sim/cli/engine_flags.h"
#include "sim/cli/explore.h"
#include "sim/cli/point_runner.h"
#include "sim/cli/problem_flags.h"
#include "sim/cli/scenario.h"
#include "sim/cli/simulate_run.h"
#include "sim/common/error.h"
#include "sim/report/json.h"
#include "sim/report/progress_bar.h"
#include "sim/trace/kernel_tiles.h"

namespace iosim::cli {

namespace {

namespace fs = std::filesystem;
using workload::Algorithm;

const char* const kSummary =
    "Runs every feasible tiling of one problem through the memory model and timing engine, as\n"
    "'iosim simulate' would, ranks them by predicted time and recommends one, with its reason read off\n"
    "its neighbours (each size halved and doubled): bound, occupancy, DRAM and SM<->L2 bytes.\n\n"
    "Candidates: FlashAttention's B_r x B_c from {16, 32, 64, 128, 256} (the sizes the kernel menu is made\n"
    "of; the warps and FA2 backward's Q/dO buffers follow from B_r, B_c and d, as in the kernels);\n"
    "standard attention's GEMM tile m x n x k from {32, 64, 128} on the mma.sync kernel, and on sm_90\n"
    "profiles the wgmma kernel's one tile, 128x128x64 wgmma. A candidate is feasible when the pass's\n"
    "shared memory (the schedule's rule) fits the profile's per-block limit and every kernel's CTA as\n"
    "launched (shared memory, registers, threads) fits an SM. 'kernel' marks the tilings compiled in\n"
    "iosim-kernels' full menu (sim/schedule/kernel_menu.h; 'ci' when CI's small menu has them too).\n\n"
    "The model's error is the mean |predicted/measured - 1| of held-out kernel times for the algorithm,\n"
    "read from the validation CSV measured with the profile (experiments/validation/<gpu>/grid.csv);\n"
    "when the runner-up is closer than that, the output says so.\n\n"
    "Example: iosim explore --profile h100 --algo fa2 --pass fwd --batch 4 --heads 16 --seq 4096 --head-dim 128";

ArgParser explore_parser() {
  ArgParser p("explore", kSummary);
  add_profile_flag(p);
  add_problem_flags(p);
  add_engine_flags(p);
  p.add("compiled-only", ArgParser::Kind::flag, "", "only the tilings compiled in iosim-kernels (the full menu)")
      .add("jobs", ArgParser::Kind::integer, "N", "candidates simulated at once, on N threads [the hardware's threads]")
      .add("format", ArgParser::Kind::text, "text|csv|json", "a table, CSV with a header, or one JSON object [text]")
      .add("out", ArgParser::Kind::text, "FILE", "write the output to FILE [standard output]")
      .add("plot", ArgParser::Kind::text, "FILE.png",
           "also plot predicted time, DRAM and SM<->L2 bytes against the tile (python3-matplotlib)")
      .add("validation-csv", ArgParser::Kind::text, "FILE",
           "the validation CSV the model's error comes from [experiments/validation/<gpu>/grid.csv of the profile]");
  return p;
}

// Flags that choose a tiling or write one run's output: explore chooses the
// tiling itself.
void reject_single_run_flags(const ArgParser& a) {
  for (const char* f : {"block-m", "block-n", "gemm-m", "gemm-n", "gemm-k", "gemm-impl"})
    if (a.has(f))
      throw InputError(std::string("explore: --") + f +
                       " sets the tiling, which explore chooses; give it to 'iosim simulate' to run one tiling");
  for (const char* f : {"timeline", "timeline-max-events"})
    if (a.has(f)) throw InputError(std::string("explore: --") + f + " writes one run's timeline; give it to 'iosim simulate'");
}

enum class Format { text, csv, json };

Format parse_format(const std::string& s) {
  if (s == "text") return Format::text;
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  throw InputError("--format '" + s + "': expected text, csv or json");
}

// The repository's root, where the profiles' folder lies (as default_profile_dir finds it).
fs::path repo_root() { return fs::absolute(fs::path(profile::default_profile_dir())).lexically_normal().parent_path(); }

fs::path plot_script() { return repo_root() / "scripts" / "explore_plot.py"; }

// --plot needs the script and a python3 with matplotlib: the one on PATH, or
// the distribution's (where apt-get installs python3-matplotlib when PATH
// starts with another). Checked before any candidate runs; one error naming
// what is missing.
std::string plotting_python() {
  const fs::path script = plot_script();
  if (!fs::is_regular_file(script)) throw InputError("--plot: the plotting script is missing: " + script.string());
  for (const char* python : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(python) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return python;
  throw InputError("--plot needs python3 with matplotlib (Debian/Ubuntu: apt-get install python3-matplotlib)");
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The explore's outcome, for every output format.
struct Exploration {
  Scenario base;
  std::vector<Candidate> all;  // enumeration order
  std::vector<Ranked> ranked;  // by predicted time
  bool compiled_only = false;
  bool with_overrides = false;  // --set changed the profile the error was measured with
  std::optional<ModelError> error;
  std::string error_why;  // when !error
  std::string reason;
  std::string approximate;  // how the engine ran when not exactly (fast-forward, set sampling); empty: exactly
};

// "" for the exact engine, else what its options approximate.
std::string engine_approximation(const engine::EngineOptions& o) {
  std::string s;
  if (o.fast_forward) s = "fast-forward (each time within about 1.3% of the exact engine's: docs/engine.md)";
  if (o.l2_set_sampling > 1)
    s += (s.empty() ? "" : "; ") + std::string("1 in ") + std::to_string(o.l2_set_sampling) + " L2 set groups";
  return s;
}

// The scenario of one candidate: the base problem with the candidate's tiles.
Scenario candidate_scenario(const Scenario& base, const Candidate& c) {
  Scenario s = base;
  s.options.block_rule = "explore";
  if (c.block_m > 0) {
    s.options.block_m = c.block_m;
    s.options.block_n = c.block_n;
  }
  s.options.gemm = c.gemm;
  return s;
}

Prediction prediction_of(const engine::SimulationResult& sim) {
  Prediction p;
  const engine::KernelResult& t = sim.total;
  p.seconds = t.seconds;
  p.dram_read_bytes = t.dram_read_bytes;
  p.dram_write_bytes = t.dram_write_bytes;
  // What the crossbar carries: the trace's requests and the warps' spills.
  p.l2_bytes = t.request_read_bytes() + t.request_write_bytes() + t.local.store_bytes + t.local.miss_bytes;
  const auto all = t.l2.total();
  p.l2_hit_rate = all.hit_sectors + all.miss_sectors > 0
                      ? static_cast<double>(all.hit_sectors) / static_cast<double>(all.hit_sectors + all.miss_sectors)
                      : 0;
  const auto longest = std::max_element(sim.kernels.begin(), sim.kernels.end(),
                                        [](const auto& a, const auto& b) { return a.cycles < b.cycles; });
  if (longest != sim.kernels.end()) {
    p.ctas_per_sm = longest->occupancy.ctas_per_sm;
    p.waves = longest->occupancy.waves;
    p.occupancy_limiter = longest->occupancy.limiter;
    p.bound = longest->bound;
    p.bound_kernel = longest->name;
  }
  return p;
}

// Plans, runs (on threads, in a fixed order) and ranks the feasible candidates.
std::vector<Ranked> run_candidates(const ArgParser& parser, const Scenario& base, const std::vector<Candidate>& chosen,
                                   i64 jobs) {
  auto plan = [&](i64 i) {
    SimulateRun r = plan_simulate_run(parser, candidate_scenario(base, chosen[static_cast<std::size_t>(i)]),
                                      AutoCount::closed_form);
    r.walk = false;  // only the engine's numbers are used; its request bytes are checked against the closed form
    return r;
  };
  report::ProgressBar bar(std::cerr, report::stderr_is_terminal());
  const std::vector<i64> weights = plan_weights(static_cast<i64>(chosen.size()), jobs, plan, bar);
  i64 total = 0;
  for (const i64 w : weights) total += w;
  bar.start("explore", total);
  std::vector<Ranked> results;
  run_points_in_order<Ranked>(
      weights, jobs,
      [&](i64 i, PointProgress& progress) {
        SimulateRun r = plan(i);
        execute_simulate_run(r, &progress);
        return Ranked{chosen[static_cast<std::size_t>(i)], prediction_of(*r.sim), 0};
      },
      [&](const Ranked& r) { results.push_back(r); }, bar);
  bar.finish();
  return rank_by_time(std::move(results));
}

// --- Output ------------------------------------------------------------------

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string menu_of(const Candidate& c) { return c.compiled_ci ? "ci" : c.compiled ? "full" : ""; }

std::string problem_line(const Scenario& s) {
  const auto& p = s.problem;
  std::ostringstream o;
  o << workload::to_string(s.options.algorithm) << " " << workload::to_string(s.options.pass) << ": B=" << p.batch
    << " H=" << p.heads << " Hkv=" << p.kv_heads << " Nq=" << p.seq_q << " Nk=" << p.seq_k << " d=" << p.head_dim << " "
    << workload::to_string(p.dtype) << (p.causal ? " causal" : "") << (p.sparsity.is_dense() ? "" : " block-sparse");
  return o.str();
}

// A path inside the repository relative to its root.
std::string shown_path(const std::string& path) {
  const fs::path p = fs::absolute(path).lexically_normal();
  const fs::path rel = p.lexically_relative(repo_root());
  return !rel.empty() && rel.begin()->string() != ".." ? rel.string() : p.string();
}

// "within the model's error" note, or why there is no such note.
std::string error_note(const Exploration& x) {
  if (!x.error) return "model error unknown for this profile (" + x.error_why + ")";
  const ModelError& e = *x.error;
  const std::string algo(workload::to_string(x.base.options.algorithm));
  std::string s = "model error: " + fixed(100 * e.mean_abs, 1) + "% (mean |pred/meas - 1| of " + algo +
                  " kernel time over " + std::to_string(e.kernels) + " held-out " + e.gpu + " kernels, " + shown_path(e.csv) +
                  (x.with_overrides ? "; measured without this run's --set values" : "") + ")";
  if (x.ranked.size() < 2) return s;
  const double t1 = x.ranked[0].prediction.seconds, gap = x.ranked[1].prediction.seconds / t1 - 1;
  if (closer_than_error(x.ranked, e.mean_abs)) {
    const auto within = std::count_if(x.ranked.begin(), x.ranked.end(),
                                      [&](const Ranked& r) { return (r.prediction.seconds - t1) / t1 < e.mean_abs; });
    s += "\nthe runner-up (" + x.ranked[1].candidate.label() + ") is " + fixed(100 * gap, 1) +
         "% slower: closer than the model's error; measure the " + std::to_string(within) +
         " candidates within " + fixed(100 * e.mean_abs, 1) + "% of the best";
  } else {
    s += "\nthe runner-up (" + x.ranked[1].candidate.label() + ") is " + fixed(100 * gap, 1) +
         "% slower: more than the model's error";
  }
  return s;
}

void write_text(std::ostream& out, const Exploration& x) {
  const auto& prof = x.base.profile;
  const bool standard = x.base.options.algorithm == Algorithm::standard;
  out << "explore " << problem_line(x.base) << "\n"
      << "profile: " << prof.display_name << " (" << prof.name << "), shared memory per block " << prof.smem_per_block_bytes
      << " B\n";
  const auto fit = std::count_if(x.all.begin(), x.all.end(), [](const Candidate& c) { return c.fits; });
  out << "candidates: " << candidate_space(x.base.options.algorithm) << ": " << x.all.size() << ", " << fit
      << " feasible" << (x.compiled_only ? ", " + std::to_string(x.ranked.size()) + " of them compiled (--compiled-only)" : "")
      << "; kernel: compiled in iosim-kernels' full menu (ci: in CI's menu too)\n";
  if (!x.approximate.empty()) out << "engine: APPROXIMATE, " << x.approximate << "\n";
  out << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%4s  %-16s %5s %6s %9s %6s %11s %7s %10s %10s %6s %6s %5s  %s\n", "rank",
                standard ? "GEMM tile" : "Br x Bc", "warps", standard ? "" : "stages", "smem B", "kernel", "time us",
                "vs best", "DRAM MB", "L2 MB", "L2 hit", "CTA/SM", "waves", "bound (longest kernel)");
  out << line;
  const double best = x.ranked.front().prediction.seconds;
  for (const Ranked& r : x.ranked) {
    const Candidate& c = r.candidate;
    const Prediction& p = r.prediction;
    const std::string stages = c.q_stages > 0 ? std::to_string(c.q_stages) : "-";
    std::snprintf(line, sizeof line, "%4lld  %-16s %5s %6s %9lld %6s %11s %7s %10s %10s %5s%% %6lld %5lld  %s: %s\n",
                  static_cast<long long>(r.rank), c.label().c_str(), c.warps.c_str(), standard ? "" : stages.c_str(),
                  static_cast<long long>(c.sram_bytes), c.compiled ? menu_of(c).c_str() : "-",
                  fixed(p.seconds * 1e6, 1).c_str(), ("+" + fixed(100 * (p.seconds / best - 1), 1) + "%").c_str(),
                  fixed(static_cast<double>(p.dram_bytes()) / 1e6, 2).c_str(),
                  fixed(static_cast<double>(p.l2_bytes) / 1e6, 2).c_str(), fixed(100 * p.l2_hit_rate, 1).c_str(),
                  static_cast<long long>(p.ctas_per_sm), static_cast<long long>(p.waves), p.bound_kernel.c_str(),
                  p.bound.c_str());
    out << line;
  }
  out << "\nstages: FA2 backward's Q/dO buffers. DRAM: read + write; L2: SM<->L2 bytes (read + write, register spills included);\n"
         "CTA/SM and waves of the longest kernel.\n";
  const std::size_t unfit = static_cast<std::size_t>(std::count_if(x.all.begin(), x.all.end(), [](const Candidate& c) { return !c.fits; }));
  if (unfit > 0) {
    out << "not feasible (" << unfit << "):\n";
    for (const Candidate& c : x.all)
      if (!c.fits) out << "  " << c.label() << ": " << c.why_not << "\n";
  }
  const Ranked& w = x.ranked.front();
  out << "\nrecommended: " << w.candidate.label() << " ("
      << (w.candidate.compiled ? "compiled, " + menu_of(w.candidate) + " menu" : "not compiled") << "), "
      << fixed(w.prediction.seconds * 1e6, 1) << " us\n"
      << "why: " << x.reason << "\n"
      << error_note(x) << "\n";
}

const char* const kCsvHeader =
    "rank,block_m,block_n,gemm_m,gemm_n,gemm_k,gemm_impl,warps,q_stages,sram_bytes,compiled,menu,time_s,dram_read_bytes,"
    "dram_write_bytes,dram_bytes,l2_bytes,l2_hit_rate,ctas_per_sm,occupancy_limiter,waves,bound,bound_kernel,recommended";

std::string exact(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void write_csv(std::ostream& out, const Exploration& x) {
  out << kCsvHeader << "\n";
  for (const Ranked& r : x.ranked) {
    const Candidate& c = r.candidate;
    const Prediction& p = r.prediction;
    // Sizes the algorithm does not have are empty: B_r, B_c for standard attention, the GEMM tile for FA.
    const bool gemm = c.block_m == 0;
    auto size = [](bool has, i64 v) { return has ? std::to_string(v) : std::string(); };
    out << r.rank << "," << size(!gemm, c.block_m) << "," << size(!gemm, c.block_n) << "," << size(gemm, c.gemm.m)
        << "," << size(gemm, c.gemm.n) << "," << size(gemm, c.gemm.k) << ","
        << (gemm ? schedule::gemm_impl_name(c.gemm.impl) : "") << "," << c.warps << "," << c.q_stages << "," << c.sram_bytes << "," << (c.compiled ? 1 : 0) << ","
        << menu_of(c) << "," << exact(p.seconds) << "," << p.dram_read_bytes << "," << p.dram_write_bytes << ","
        << p.dram_bytes() << "," << p.l2_bytes << "," << exact(p.l2_hit_rate) << "," << p.ctas_per_sm << ","
        << p.occupancy_limiter << "," << p.waves << "," << p.bound << "," << p.bound_kernel << ","
        << (r.rank == 1 ? 1 : 0) << "\n";
  }
}

void write_candidate_json(report::JsonWriter& j, const Candidate& c) {
  j.field("label", c.label()).field("block_m", c.block_m).field("block_n", c.block_n);
  j.key("gemm").begin_object().field("m", c.gemm.m).field("n", c.gemm.n).field("k", c.gemm.k);
  j.field("impl", schedule::gemm_impl_name(c.gemm.impl)).end_object();
  j.field("warps", c.warps).field("q_stages", c.q_stages).field("sram_bytes", c.sram_bytes);
  j.field("compiled", c.compiled);
  if (c.compiled) j.field("menu", menu_of(c));
  else j.key("menu").null();
}

void write_json(std::ostream& out, const Exploration& x) {
  const auto& p = x.base.problem;
  report::JsonWriter j(out, 2);
  j.begin_object();
  j.field("profile", x.base.profile.name).field("device", x.base.profile.display_name);
  j.field("engine_approximation", x.approximate);  // "" when the engine ran exactly
  j.field("algorithm", workload::to_string(x.base.options.algorithm)).field("pass", workload::to_string(x.base.options.pass));
  j.key("problem").begin_object().field("batch", p.batch).field("heads", p.heads).field("kv_heads", p.kv_heads);
  j.field("seq_q", p.seq_q).field("seq_k", p.seq_k).field("head_dim", p.head_dim).field("dtype", workload::to_string(p.dtype));
  j.field("causal", p.causal).end_object();
  j.field("sram_limit_bytes", x.base.profile.smem_per_block_bytes);
  j.field("candidate_space", candidate_space(x.base.options.algorithm)).field("compiled_only", x.compiled_only);
  j.key("model_error");
  if (x.error) {
    j.begin_object().field("mean_abs", x.error->mean_abs).field("kernels", x.error->kernels);
    j.field("csv", x.error->csv).field("gpu", x.error->gpu).end_object();
  } else {
    j.null();
  }
  j.field("model_error_note", error_note(x));
  j.field("closer_than_error", x.error && closer_than_error(x.ranked, x.error->mean_abs));
  j.field("recommended", x.ranked.front().candidate.label()).field("reason", x.reason);
  j.key("candidates").begin_array();
  for (const Ranked& r : x.ranked) {
    j.begin_object().field("rank", r.rank);
    write_candidate_json(j, r.candidate);
    const Prediction& q = r.prediction;
    j.field("time_s", q.seconds).field("dram_read_bytes", q.dram_read_bytes).field("dram_write_bytes", q.dram_write_bytes);
    j.field("l2_bytes", q.l2_bytes).field("l2_hit_rate", q.l2_hit_rate).field("ctas_per_sm", q.ctas_per_sm);
    j.field("occupancy_limiter", q.occupancy_limiter).field("waves", q.waves).field("bound", q.bound);
    j.field("bound_kernel", q.bound_kernel).end_object();
  }
  j.end_array();
  j.key("not_feasible").begin_array();
  for (const Candidate& c : x.all)
    if (!c.fits) {
      j.begin_object();
      write_candidate_json(j, c);
      j.field("why", c.why_not).end_object();
    }
  j.end_array();
  j.end_object();
  out << "\n";
}

// Writes the CSV to a temporary file and runs the plotting script on it.
void write_plot(const Exploration& x, const std::string& python, const std::string& png) {
  const fs::path csv = fs::temp_directory_path() / ("iosim-explore-" + std::to_string(getpid()) + ".csv");
  {
    std::ofstream f(csv);
    write_csv(f, x);
    if (!f.flush()) throw InputError("--plot: cannot write " + csv.string());
  }
  const std::string title = problem_line(x.base) + " on " + x.base.profile.name;
  const std::string cmd = python + " " + shell_quote(plot_script().string()) + " " + shell_quote(csv.string()) + " " +
                          shell_quote(png) + " --title " + shell_quote(title);
  const int rc = std::system(cmd.c_str());
  std::error_code ec;
  fs::remove(csv, ec);
  if (rc != 0) throw InputError("--plot: " + plot_script().string() + " failed writing " + png);
}

}  // namespace

int cmd_explore(const Args& args, std::ostream& stdout_stream) {
  ArgParser parser = explore_parser();
  parser.parse(args);
  if (parser.help_requested()) {
    stdout_stream << parser.help();
    return 0;
  }
  reject_single_run_flags(parser);
  const i64 jobs = jobs_from_flag(parser.integer("jobs"));
  const Format format = parse_format(parser.text("format").value_or("text"));
  const std::string plot = parser.text("plot").value_or("");
  const std::string python = plot.empty() ? "" : plotting_python();
  // A bad engine flag stops here, before any candidate runs.
  const std::string approximate = engine_approximation(engine_options_from_flags(parser));

  Exploration x;
  x.base = scenario_from_flags(parser);
  x.compiled_only = parser.flag("compiled-only");
  x.approximate = approximate;
  x.with_overrides = !parser.texts("set").empty();
  const Algorithm algo = x.base.options.algorithm;
  const workload::Pass pass = x.base.options.pass;
  if (algo == Algorithm::fa1_swapped && pass != workload::Pass::fwd)
    throw InputError("fa1-swapped is a forward-only teaching variant (use --pass fwd)");
  x.all = enumerate_candidates(x.base.problem, algo, pass, x.base.profile);
  std::vector<Candidate> chosen;
  for (const Candidate& c : x.all)
    if (c.fits && (!x.compiled_only || c.compiled)) chosen.push_back(c);
  if (chosen.empty()) {
    const bool any_fit = std::any_of(x.all.begin(), x.all.end(), [](const Candidate& c) { return c.fits; });
    if (!any_fit) throw InputError("explore: " + no_fit_message(x.all, algo, pass, x.base.profile));
    std::string why;
    trace::nearest_kernel_tiling(x.base.problem, algo, pass, 64, 64, x.base.options.gemm,
                                 x.base.profile.smem_per_block_bytes, why);
    throw InputError("explore --compiled-only: no compiled tiling runs on " + x.base.profile.name + ": " +
                     (why.empty() ? "those that fit its shared memory exceed its per-SM limits" : why) +
                     " (without --compiled-only: every feasible tiling)");
  }
  x.ranked = run_candidates(parser, x.base, chosen, jobs);
  x.reason = recommendation_reason(x.ranked, algo);
  const auto csvs = parser.has("validation-csv") ? std::vector<std::string>{*parser.text("validation-csv")}
                                                 : validation_csvs(profile::default_profile_dir());
  if (parser.has("validation-csv") && !fs::is_regular_file(csvs.front()))
    throw InputError("--validation-csv '" + csvs.front() + "': no such file");
  x.error = model_error(csvs, x.base.profile.name, algo, x.error_why);

  std::ofstream file;
  const std::string out_path = parser.text("out").value_or("");
  if (!out_path.empty()) {
    file.open(out_path);
    if (!file) throw InputError("--out '" + out_path + "': cannot open the file for writing");
  }
  std::ostream& out = out_path.empty() ? stdout_stream : file;
  switch (format) {
    case Format::text: write_text(out, x); break;
    case Format::csv: write_csv(out, x); break;
    case Format::json: write_json(out, x); break;
  }
  if (file && !file.flush()) throw InputError("--out '" + out_path + "': writing failed");
  if (!plot.empty()) {
    write_plot(x, python, plot);
    std::cerr << "plot: " << plot << "\n";
  }
  return 0;
}

}  // namespace iosim::cli
