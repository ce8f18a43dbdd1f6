#include "sim/cli/engine_flags.h"

#include <cmath>
#include <limits>
#include <string>

#include "sim/common/error.h"

namespace iosim::cli {

void add_engine_flags(ArgParser& p) {
  using Kind = ArgParser::Kind;
  p.add("timeline", Kind::text, "FILE.json", "write a Chrome Trace Event timeline (opens in Perfetto: ui.perfetto.dev)")
      .add("cold-l2", Kind::flag, "", "start every kernel with an empty, clean L2 (what ncu --cache-control all measures)")
      .add("l2-policy", Kind::text, "NAME", "L2 replacement policy: lru | fifo | bip [lru]")
      .add("merge-window", Kind::real, "CYCLES", "merge identical L2 reads issued within this window (0: off) [the profile's l2.merge_window]")
      .add("l2-writeback-delay", Kind::text, "CYCLES|never",
           "write dirty L2 lines to DRAM this many cycles after they became dirty (never: only on eviction) [the profile's l2.writeback_delay]")
      .add("l2-sample", Kind::integer, "N",
           "simulate 1 of N L2 set groups and scale the counts: approximate, N times less L2 work (power of two, 1 = exact) [1]")
      .add("kernel-gap", Kind::real, "SECONDS", "idle time between kernels (launch overhead) [0]");
}

namespace {
// "never" or a number of cycles >= 0.
double writeback_delay(const std::string& text) {
  if (text == "never") return std::numeric_limits<double>::infinity();
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 0) || !std::isfinite(v))
    throw InputError("--l2-writeback-delay '" + text + "': expected a number of cycles >= 0, or never");
  return v;
}
}  // namespace

engine::EngineOptions engine_options_from_flags(const ArgParser& a) {
  engine::EngineOptions o;
  o.timeline_path = a.text("timeline").value_or("");
  o.cold_l2_per_kernel = a.flag("cold-l2");
  o.l2_replacement = a.text("l2-policy").value_or(o.l2_replacement);
  if (const auto window = a.real("merge-window")) o.l2_merge_window_cycles = *window;  // else the profile's
  if (const auto delay = a.text("l2-writeback-delay")) o.l2_writeback_delay_cycles = writeback_delay(*delay);
  o.kernel_gap_seconds = a.real("kernel-gap").value_or(o.kernel_gap_seconds);
  const i64 sampling = a.integer("l2-sample").value_or(o.l2_set_sampling);
  if (sampling < 1 || sampling > 256 || (sampling & (sampling - 1)) != 0)
    throw InputError("--l2-sample " + std::to_string(sampling) + ": must be a power of two from 1 to 256 (1 = exact)");
  o.l2_set_sampling = static_cast<int>(sampling);
  if (o.l2_merge_window_cycles && *o.l2_merge_window_cycles < 0) throw InputError("--merge-window must be >= 0");
  if (o.kernel_gap_seconds < 0) throw InputError("--kernel-gap must be >= 0");
  return o;
}

}  // namespace iosim::cli
