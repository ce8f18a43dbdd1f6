// `iosim walk`: where the SM model's cycles go in one step of each kernel's
// warp programs, region by region: what a kernel engineer compares with
// Nsight Compute's warp samples per source region (the samples at an
// instruction's address are the cycles a warp waited to issue it).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/scenario.h"
#include "sim/common/error.h"
#include "sim/engine/occupancy.h"
#include "sim/engine/sm_model.h"
#include "sim/trace/algorithms.h"

namespace iosim::cli {

namespace {

using schedule::WarpProgram;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// One program's walk, a row per region (the whole program when it names none).
void print_walk(std::ostream& out, const WarpProgram& prog, const engine::SmModel::Walk& w,
                const std::string& listed) {
  auto regions = prog.regions;
  if (regions.empty() || regions.front().first > 0) regions.insert(regions.begin(), {0, "(start)"});
  out << "| region | instructions | cycles | share | cycles per instruction |\n|---|---:|---:|---:|---:|\n";
  double total = 0;
  for (const double c : w.waited) total += c;
  for (size_t r = 0; r < regions.size(); ++r) {
    const size_t from = static_cast<size_t>(regions[r].first);
    const size_t to = r + 1 < regions.size() ? static_cast<size_t>(regions[r + 1].first) : prog.code.size();
    double cycles = 0;
    for (size_t k = from; k < std::min(to, prog.code.size()); ++k) cycles += w.waited[k];
    const double n = static_cast<double>(to > from ? to - from : 0);
    out << "| " << regions[r].second << " | " << (to - from) << " | " << fixed(cycles, 0) << " | "
        << fixed(total > 0 ? 100 * cycles / total : 0, 1) << "% | " << fixed(n > 0 ? cycles / n : 0, 2) << " |\n";
  }
  out << "| all | " << prog.code.size() << " | " << fixed(total, 0) << " | 100% | "
      << fixed(prog.code.empty() ? 0 : total / static_cast<double>(prog.code.size()), 2) << " |\n\n";
  for (size_t r = 0; r < regions.size() && !listed.empty(); ++r) {
    if (regions[r].second.find(listed) == std::string::npos) continue;
    const size_t from = static_cast<size_t>(regions[r].first);
    const size_t to = r + 1 < regions.size() ? static_cast<size_t>(regions[r + 1].first) : prog.code.size();
    out << "\n" << regions[r].second << ", instruction by instruction (source order):\n\n"
        << "| # | pipe | op | bytes | sources | issued | waited |\n|---:|---|---|---:|---|---:|---:|\n";
    for (size_t k = from; k < std::min(to, prog.code.size()); ++k) {
      const schedule::Instr& in = prog.code[k];
      std::string src;
      for (int q = 0; q < in.sources; ++q) {
        if (q > 0) src += ' ';
        src += std::to_string(in.source[q]);
      }
      out << "| " << k << " | " << schedule::to_string(in.pipe) << " | " << schedule::to_string(in.op) << " | "
          << in.bytes << " | " << src << " | " << fixed(w.issue[k], 0) << " | " << fixed(w.waited[k], 1) << " |\n";
    }
    out << "\n";
  }
}

}  // namespace

int cmd_walk(const Args& args, std::ostream& out) {
  ArgParser parser("walk",
                   "Runs each kernel's warp programs on the SM model (docs/engine.md) and prints, per program,\n"
                   "the cycles of one steady step of warp 0 region by region: the cycles the warp waited to\n"
                   "issue each region's instructions, as Nsight Compute's warp samples count them per address.\n"
                   "The CTAs per SM are the kernel's occupancy (at most its CTAs over the SMs) unless --ctas\n"
                   "says; cycles are SM cycles at the clock the kernel runs at.");
  add_scenario_flags(parser);
  parser.add("ctas", ArgParser::Kind::integer, "N", "CTAs resident per SM [the kernel's occupancy]")
      .add("kernel", ArgParser::Kind::text, "NAME", "only the kernels whose name contains NAME")
      .add("list", ArgParser::Kind::text, "REGION",
           "list the instructions of the regions whose name contains REGION: pipe, sources, issue cycle, wait")
      .add("external-loads", ArgParser::Kind::flag, "",
           "time programs that load their own tiles (FA1, row kernels) without waiting for those loads,\n"
           "as the engine does (it waits for them in its load rounds), and add the part after the loads'\n"
           "barrier alone");
  parser.parse(args);
  if (parser.help_requested()) {
    out << parser.help();
    return 0;
  }
  const Scenario sc = scenario_from_flags(parser);
  const trace::AlgorithmTrace run = trace::build_trace(sc.problem, sc.options);
  engine::SmModel model(engine::sm_machine(sc.profile));
  out << "# SM model walk: " << sc.profile.name << " (" << model.machine().source << ")\n\n";
  const std::string only = parser.text("kernel").value_or("");
  const bool external = parser.flag("external-loads");
  const std::string listed = parser.text("list").value_or("");
  for (const auto& entry : run.kernels) {
    const trace::KernelTrace& k = *entry.kernel;
    if (!only.empty() && k.name().find(only) == std::string::npos) continue;
    const auto programs = k.programs();
    if (!programs) {
      out << "## " << k.name() << ": no warp programs (timed from rates)\n\n";
      continue;
    }
    const i64 total = k.grid().count();
    const engine::Occupancy occ = engine::compute_occupancy(sc.profile, k.resources(), total, k.name());
    i64 ctas = std::min(occ.ctas_per_sm, std::max<i64>(1, (total + sc.profile.sm_count - 1) / sc.profile.sm_count));
    if (const auto n = parser.integer("ctas")) {
      ctas = *n;
      if (ctas < 1) throw InputError("walk: --ctas must be at least 1 (got " + std::to_string(ctas) + ")");
    }
    const i64 warps = std::max<i64>(1, programs->warps);
    out << "## " << k.name() << ": " << warps << " warps per CTA, " << ctas << " CTA" << (ctas == 1 ? "" : "s")
        << " per SM (occupancy " << occ.ctas_per_sm << ", " << total << " CTAs)\n\n";
    for (const WarpProgram& prog : programs->programs) {
      if (prog.code.empty()) continue;
      const bool own = external && programs->loads_in_program;
      const double step = model.step_cycles(prog, warps, ctas, own);
      out << "### " << prog.name << ": " << fixed(step, 0) << " cycles per step per CTA"
          << (own ? " (its loads waited for outside)" : "") << "\n\n";
      print_walk(out, prog, model.walk(prog, warps, ctas, own), listed);
      if (own) {
        const WarpProgram& part = model.after_loads_part(prog);
        if (part.code.empty()) continue;
        out << "### " << part.name << ": " << fixed(model.after_loads_cycles(prog, warps, ctas), 0)
            << " cycles per step per CTA\n\n";
        print_walk(out, part, model.walk(part, warps, ctas, true), listed);
      }
    }
  }
  return 0;
}

}  // namespace iosim::cli
