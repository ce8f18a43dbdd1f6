#include "kernels/calibrate/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace iosim::calibrate {
namespace {

using profile::median;

// One CSV line into fields ("a","b,c" -> a | b,c; "" inside quotes is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  out.push_back(field);
  return out;
}

double csv_number(std::string text, const std::string& metric) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw std::runtime_error("Nsight Compute CSV: " + metric + " is '" + text + "', not a number");
}

}  // namespace

double mean(const std::vector<double>& v) {
  if (v.empty()) throw std::logic_error("mean of an empty list");
  double s = 0;
  for (const double x : v) s += x;
  return s / static_cast<double>(v.size());
}

profile::PipeRate pipe_rate(const std::vector<WarpRecord>& records, double wall_ns) {
  if (!(wall_ns > 0)) throw std::logic_error("pipe_rate: the launch's wall time must be positive");
  struct Span {
    std::uint64_t start = UINT64_MAX, end = 0;
    double work = 0;
  };
  std::map<std::uint32_t, Span> per_sm;
  std::vector<double> timer_clocks;
  for (const WarpRecord& r : records) {
    if (r.clk1 <= r.clk0 || r.gt1 <= r.gt0) continue;  // a warp that did not run the timed loop
    Span& s = per_sm[r.smid];
    s.start = std::min(s.start, r.clk0);
    s.end = std::max(s.end, r.clk1);
    s.work += static_cast<double>(r.work);
    timer_clocks.push_back(static_cast<double>(r.clk1 - r.clk0) / static_cast<double>(r.gt1 - r.gt0) * 1e9);
  }
  if (per_sm.empty()) throw std::runtime_error("calibrate: no warp recorded a timed span");
  std::vector<double> rates;
  double longest = 0;
  for (const auto& [sm, s] : per_sm) {
    const double cycles = static_cast<double>(s.end - s.start);
    rates.push_back(s.work / cycles);
    longest = std::max(longest, cycles);
  }
  profile::PipeRate out;
  out.per_cycle = median(rates);
  out.clock_hz = longest / wall_ns * 1e9;
  out.timer_clock_hz = median(timer_clocks);
  return out;
}

profile::PipeRate median_rate(const std::vector<profile::PipeRate>& runs) {
  std::vector<double> rates, clocks, timer_clocks;
  for (const profile::PipeRate& r : runs) {
    rates.push_back(r.per_cycle);
    clocks.push_back(r.clock_hz);
    timer_clocks.push_back(r.timer_clock_hz);
  }
  profile::PipeRate out;
  out.per_cycle = median(rates);
  out.clock_hz = median(clocks);
  out.timer_clock_hz = median(timer_clocks);
  return out;
}

SweepPoint sweep_point(i64 working_set, const std::vector<ChaseRecord>& warps) {
  std::vector<double> cold, warm;
  for (const ChaseRecord& w : warps) {
    if (w.accesses == 0 || w.passes == 0) continue;  // a warp whose share was empty
    cold.push_back(static_cast<double>(w.cold_cycles) / static_cast<double>(w.accesses));
    warm.push_back(static_cast<double>(w.warm_cycles) / static_cast<double>(w.accesses * w.passes));
  }
  if (cold.empty()) throw std::runtime_error("calibrate: no warp chased any line of the working set");
  return {working_set, median(cold), median(warm)};
}

profile::ResidentSweep resident_capacity(std::vector<SweepPoint> points) {
  if (points.empty()) throw std::logic_error("resident_capacity of no points");
  std::sort(points.begin(), points.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.working_set < b.working_set; });
  const double hit = points.front().warm;
  profile::ResidentSweep out;
  out.smallest = points.front().working_set;
  out.largest = points.back().working_set;
  out.points = static_cast<int>(points.size());
  double previous_fraction = 1, previous_ws = 0;
  for (const SweepPoint& p : points) {
    const double span = p.cold - hit;
    const double fraction = span > 0 ? std::clamp((p.cold - p.warm) / span, 0.0, 1.0) : 0.0;
    const double ws = static_cast<double>(p.working_set);
    const double resident = fraction * ws;
    if (resident > out.resident_bytes) {
      out.resident_bytes = resident;
      out.at_working_set = p.working_set;
    }
    if (out.half_working_set == 0 && fraction < 0.5 && previous_ws > 0 && previous_fraction >= 0.5)
      out.half_working_set =
          previous_ws + (previous_fraction - 0.5) / (previous_fraction - fraction) * (ws - previous_ws);
    previous_fraction = fraction;
    previous_ws = ws;
  }
  return out;
}

NearFar near_far(const std::vector<std::vector<double>>& first, const std::vector<std::vector<double>>& second) {
  if (first.size() != second.size() || first.empty())
    throw std::logic_error("near_far: one first and one second read list per sampled SM");
  NearFar out;
  out.sampled = static_cast<int>(first.size());
  std::vector<double> near_means, far_means;
  for (std::size_t sm = 0; sm < first.size(); ++sm) {
    near_means.push_back(mean(second[sm]));
    const double threshold = kFarFactor * median(second[sm]);
    std::vector<double> slow;
    for (const double x : first[sm])
      if (x > threshold) slow.push_back(x);
    if (static_cast<double>(slow.size()) >= kFarShare * static_cast<double>(first[sm].size()))
      far_means.push_back(mean(slow));
  }
  out.near = mean(near_means);
  out.far_sms = static_cast<int>(far_means.size());
  out.far = far_means.empty() ? out.near : mean(far_means);
  return out;
}

std::vector<std::vector<double>> ncu_metric_rows(const std::string& output, const std::vector<std::string>& metrics) {
  std::istringstream in(output);
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  std::vector<std::size_t> columns;
  std::size_t name_column = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() != '"') continue;  // ncu's ==PROF== lines and the program's own output
    const std::vector<std::string> f = csv_fields(line);
    if (header.empty()) {
      header = f;
      const auto at = [&](const std::string& name) {
        const auto it = std::find(header.begin(), header.end(), name);
        if (it == header.end()) throw std::runtime_error("Nsight Compute CSV has no column '" + name + "'");
        return static_cast<std::size_t>(it - header.begin());
      };
      name_column = at("Kernel Name");
      for (const std::string& m : metrics) columns.push_back(at(m));
      continue;
    }
    if (f.size() != header.size() || f[name_column].empty()) continue;  // the units row
    std::vector<double> row;
    for (std::size_t i = 0; i < metrics.size(); ++i) row.push_back(csv_number(f[columns[i]], metrics[i]));
    rows.push_back(row);
  }
  if (header.empty()) throw std::runtime_error("Nsight Compute printed no CSV table");
  return rows;
}

double merged_share(double lookup_sectors, i64 lines) {
  const double per_read = 4.0 * static_cast<double>(lines);
  return (3 * per_read - lookup_sectors) / per_read;
}

double merge_window(std::vector<std::pair<double, double>> delta_share) {
  if (delta_share.size() < 2) throw std::runtime_error("merge_window: needs two or more deltas");
  std::sort(delta_share.begin(), delta_share.end());
  double window = 0;
  for (std::size_t i = 1; i < delta_share.size(); ++i) {
    const double p0 = std::max(0.0, delta_share[i - 1].second), p1 = std::max(0.0, delta_share[i].second);
    window += (p0 + p1) / 2 * (delta_share[i].first - delta_share[i - 1].first);
    if (p1 == 0) break;
  }
  return window;
}

StepStats step_stats(const StepRun& run) {
  const int n = run.ctas_per_sm, steps = run.steps;
  const std::size_t ctas = run.smid.size();
  if (steps < kStepFirst + 3) throw std::runtime_error("step_stats: a run needs at least 7 steps");
  if (n < 1 || ctas == 0 || run.clocks.size() != ctas * static_cast<std::size_t>(steps) ||
      run.timers.size() != run.clocks.size())
    throw std::runtime_error("step_stats: the run's clock and timer arrays do not hold `steps` stamps per CTA");
  const int last = steps - 2;
  const auto stamp = [&](const std::vector<std::uint64_t>& v, std::size_t cta, int k) {
    return static_cast<double>(v[cta * static_cast<std::size_t>(steps) + static_cast<std::size_t>(k)]);
  };
  const auto mean_step = [&](std::size_t cta) {
    return (stamp(run.clocks, cta, last) - stamp(run.clocks, cta, kStepFirst)) / (last - kStepFirst);
  };
  StepStats out;
  out.ctas_per_sm = n;
  double squares = 0, all_steps = 0;
  i64 count = 0;
  for (std::size_t c = 0; c < ctas; ++c) {
    const double m = mean_step(c);
    if (m <= 0) throw std::runtime_error("step_stats: a CTA's clock64 did not advance");
    for (int k = kStepFirst + 1; k <= last; ++k) {
      const double r = (stamp(run.clocks, c, k) - stamp(run.clocks, c, k - 1)) / m - 1;
      squares += r * r;
      ++count;
    }
    all_steps += m;
  }
  out.cv = std::sqrt(squares / static_cast<double>(count));
  out.step_cycles = all_steps / static_cast<double>(ctas);
  std::map<std::uint32_t, std::vector<std::size_t>> by_sm;
  for (std::size_t c = 0; c < ctas; ++c) by_sm[run.smid[c]].push_back(c);
  out.rank_step.assign(static_cast<std::size_t>(n), 0.0);
  for (auto& [sm, on_sm] : by_sm) {
    if (static_cast<int>(on_sm.size()) != n) continue;
    std::sort(on_sm.begin(), on_sm.end(),
              [&](std::size_t a, std::size_t b) { return stamp(run.timers, a, 0) < stamp(run.timers, b, 0); });
    double sm_mean = 0;
    for (const std::size_t c : on_sm) sm_mean += mean_step(c) / n;
    for (int r = 0; r < n; ++r) out.rank_step[static_cast<std::size_t>(r)] += mean_step(on_sm[static_cast<std::size_t>(r)]) / sm_mean;
    ++out.sms;
  }
  if (out.sms == 0) throw std::runtime_error("step_stats: no SM held " + std::to_string(n) + " CTAs of the run");
  for (double& x : out.rank_step) x /= out.sms;
  return out;
}

double fit_cta_priority(const std::vector<StepStats>& runs, double* worst) {
  const auto slope = [](int n, int r) { return (1 - 2.0 / n) * (r - (n - 1) / 2.0); };
  double num = 0, den = 0;
  for (const StepStats& s : runs) {
    if (s.ctas_per_sm < 2 || s.ctas_per_sm > 8) continue;
    for (int r = 0; r < s.ctas_per_sm; ++r) {
      const double g = slope(s.ctas_per_sm, r);
      num += g * (s.rank_step.at(static_cast<std::size_t>(r)) - 1);
      den += g * g;
    }
  }
  if (den <= 0) throw std::runtime_error("fit_cta_priority: no run of 3 to 8 CTAs per SM");
  const double a = num / den;
  if (worst != nullptr) {
    *worst = 0;
    for (const StepStats& s : runs)
      if (s.ctas_per_sm >= 2 && s.ctas_per_sm <= 8)
        for (int r = 0; r < s.ctas_per_sm; ++r)
          *worst = std::max(*worst, std::abs(1 + a * slope(s.ctas_per_sm, r) - s.rank_step[static_cast<std::size_t>(r)]));
  }
  return a;
}

}  // namespace iosim::calibrate
