#include "sim/report/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>


namespace iosim::report {

namespace {

std::string scientific(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 1e5 ? "%.0f" : "%.2g", v);
  return buf;
}

}  // namespace


double ProgressBar::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::ostream& out, bool enabled, Clock clock)
    : out_(out), enabled_(enabled), clock_(std::move(clock)) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::start(std::string label, i64 total) {
  finish();
  label_ = std::move(label);
  total_ = std::max<i64>(1, total);
  done_ = 0;
  if (enabled_) start_ = clock_();
  last_draw_ = -1;
}

void ProgressBar::add(i64 units) {
  done_ += units;
  if (!enabled_) return;
  const double now = clock_();
  if (now - start_ < kDelaySeconds || now - last_draw_ < kRedrawSeconds) return;
  draw(now);
}

void ProgressBar::draw(double now) {
  constexpr int kWidth = 30;
  const double f = std::clamp(static_cast<double>(done_) / static_cast<double>(total_), 0.0, 1.0);
  const int filled = static_cast<int>(f * kWidth);
  const double elapsed = now - start_;
  std::string line = "\r" + label_ + " [" + std::string(static_cast<size_t>(filled), '#') +
                     std::string(static_cast<size_t>(kWidth - filled), '.') + "] ";
  line += std::to_string(static_cast<int>(f * 100)) + "%  ";
  line += f > 0 ? format_duration(elapsed * (1 - f) / f) + " left" : "estimating";
  out_ << line << "\033[K" << std::flush;
  drawn_ = true;
  last_draw_ = now;
}

void ProgressBar::finish() {
  if (drawn_) out_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

std::string format_duration(double s) {
  char buf[32];
  if (s < 10) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 120) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else if (s < 2 * 86400) std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  else std::snprintf(buf, sizeof buf, "%.1f days", s / 86400);
  return buf;
}

std::string long_run_notice(const count::WorkEstimate& w, bool walk, bool engine, bool fast_forward) {
  const double ns = w.seconds_per_step * 1e9;
  char rate[48];
  std::snprintf(rate, sizeof rate, "%.0f ns", ns);
  if (engine && !fast_forward && w.engine_seconds_at_least + (walk ? w.walk_seconds : 0) > kAnnounceSeconds)
    return "iosim: a long run: the timing engine replays " + scientific(static_cast<double>(w.steps)) +
           " trace steps, at least " + format_duration(w.engine_seconds_at_least) + " here (" + rate +
           " a step for the trace alone, measured on a sample); --counts-only answers from the closed form at once; "
           "--fast-forward skips most of long kernels' steady middles (approximate: docs/engine.md)";
  if (walk && w.walk_seconds > kAnnounceSeconds)
    return "iosim: walking the trace takes about " + format_duration(w.walk_seconds) + " here (" +
           scientific(static_cast<double>(w.walk_steps)) + " steps, " + rate +
           " each, measured on a sample); --count-by formula gives the totals at once";
  return {};
}

}  // namespace iosim::report
