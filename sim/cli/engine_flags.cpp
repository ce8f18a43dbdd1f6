#include "sim/cli/engine_flags.h"

#include <limits>
#include <string>

#include "sim/common/error.h"
#include "sim/profile/units.h"

namespace iosim::cli {

void add_engine_flags(ArgParser& p) {
  using Kind = ArgParser::Kind;
  p.add("timeline", Kind::text, "FILE.json", "write a Chrome Trace Event timeline (opens in Perfetto: ui.perfetto.dev)")
      .add("timeline-max-events", Kind::integer, "N",
           "keep at most N timeline events, the first ones (about 100 bytes each in the file) [" +
               std::to_string(engine::EngineOptions{}.timeline_max_events) + "]")
      .add("cold-l2", Kind::flag, "", "start every kernel with an empty, clean L2 (what ncu --cache-control all measures)")
      .add("l2-policy", Kind::text, "NAME", "L2 replacement policy: lru | fifo | bip [lru]")
      .add("merge-window", Kind::real, "CYCLES", "merge identical L2 reads issued within this window (0: off) [the profile's l2.merge_window]")
      .add("l2-dirty-limit", Kind::text, "SIZE|none",
           "keep at most SIZE (e.g. 24MiB) dirty in L2, writing the lines dirty the longest to DRAM early (none: only evictions write) [the profile's l2.dirty_limit]")
      .add("l2-sample", Kind::integer, "N",
           "simulate 1 of N L2 set groups and scale the counts: approximate, N times less L2 work (power of two, 1 = exact) [1]")
      .add("l2-copies", Kind::text, "on|off",
           "a read from the far L2 half also copies the line into the near one, in the whole L2 (measured on the "
           "H200); off: one slot per line in l2.effective_size [the profile's l2.far_copies; off with --l2-sample]")
      .add("fast-forward", Kind::flag, "",
           "approximate, for long runs: skip the steady middle of long kernels (whole CTAs in grids of 20+ waves, "
           "repeating steps of the CTAs of grids under 10 waves) and charge it the time and L2/DRAM counts of a "
           "stretch run just before, per request byte (request bytes, steps and FLOPs stay exact; docs/engine.md, "
           "\"Fast-forward\", gives the measured error)")
      .add("kernel-gap", Kind::real, "SECONDS", "idle time between kernels (launch overhead) [0]");
}

namespace {
// "none" or a size with a unit.
double dirty_limit(const std::string& text) {
  if (text == "none") return std::numeric_limits<double>::infinity();
  const auto parsed = profile::parse_size_bytes(text);
  if (!parsed.value) throw InputError("--l2-dirty-limit '" + text + "': " + parsed.problem + " (" + parsed.valid + ", or none)");
  return static_cast<double>(*parsed.value);
}
}  // namespace

engine::EngineOptions engine_options_from_flags(const ArgParser& a) {
  engine::EngineOptions o;
  o.timeline_path = a.text("timeline").value_or("");
  if (const auto cap = a.integer("timeline-max-events")) {
    if (o.timeline_path.empty()) throw InputError("--timeline-max-events applies only with --timeline FILE.json");
    if (*cap < 1) throw InputError("--timeline-max-events must be positive (got " + std::to_string(*cap) + ")");
    o.timeline_max_events = *cap;
  }
  o.cold_l2_per_kernel = a.flag("cold-l2");
  o.fast_forward = a.flag("fast-forward");
  if (o.fast_forward && !o.timeline_path.empty())
    throw InputError("--fast-forward cannot be combined with --timeline (a timeline shows every CTA; fast-forward skips some)");
  o.l2_replacement = a.text("l2-policy").value_or(o.l2_replacement);
  if (const auto window = a.real("merge-window")) o.l2_merge_window_cycles = *window;  // else the profile's
  if (const auto limit = a.text("l2-dirty-limit")) o.l2_dirty_limit_bytes = dirty_limit(*limit);
  o.kernel_gap_seconds = a.real("kernel-gap").value_or(o.kernel_gap_seconds);
  const i64 sampling = a.integer("l2-sample").value_or(o.l2_set_sampling);
  if (sampling < 1 || sampling > 256 || (sampling & (sampling - 1)) != 0)
    throw InputError("--l2-sample " + std::to_string(sampling) + ": must be a power of two from 1 to 256 (1 = exact)");
  o.l2_set_sampling = static_cast<int>(sampling);
  if (const auto copies = a.text("l2-copies")) {
    if (*copies != "on" && *copies != "off") throw InputError("--l2-copies '" + *copies + "': must be on or off");
    o.l2_copies = *copies == "on";
  }
  if (o.l2_merge_window_cycles && *o.l2_merge_window_cycles < 0) throw InputError("--merge-window must be >= 0");
  if (o.kernel_gap_seconds < 0) throw InputError("--kernel-gap must be >= 0");
  return o;
}

void print_timeline_line(std::ostream& out, const engine::SimulationResult& sim) {
  const std::string& path = sim.options.timeline_path;
  if (path.empty()) return;
  out << "timeline: " << path << " (open it at ui.perfetto.dev)\n";  // the table's note says if it was truncated
}

}  // namespace iosim::cli
