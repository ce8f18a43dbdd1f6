// A progress bar with an ETA on stderr, for the long phases of a run (the
// trace walk, the timing engine): drawn only when the stream is a terminal,
// from half a second into a phase on, at most ten times a second, and erased
// when the phase ends, so output redirected to a file or a pipe is unchanged.
#pragma once
#include <functional>
#include <ostream>
#include <string>

#include "sim/common/progress.h"
#include "sim/count/work_estimate.h"

namespace iosim::report {

class ProgressBar final : public ProgressSink {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  static double steady_seconds();
  // `enabled`: draw at all (stderr is a terminal; see stderr_is_terminal()).
  ProgressBar(std::ostream& out, bool enabled, Clock clock = steady_seconds);
  ~ProgressBar() override;
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Starts a phase of `total` units (ends the previous one).
  void start(std::string label, i64 total);
  void add(i64 units) override;
  // Erases the bar, if drawn.
  void finish();

  static constexpr double kDelaySeconds = 0.5;
  static constexpr double kRedrawSeconds = 0.1;

 private:
  void draw(double now);
  std::ostream& out_;
  bool enabled_;
  Clock clock_;
  std::string label_;
  i64 total_ = 0, done_ = 0;
  double start_ = 0, last_draw_ = -1;
  bool drawn_ = false;
};

bool stderr_is_terminal();

// "0.4 s", "42 s", "3.5 min", "2.1 h".
std::string format_duration(double seconds);

// Runs expected to take longer than this are announced on stderr before they start.
inline constexpr double kAnnounceSeconds = 10.0;
// The announcement, or "" when the run is short: the walk and/or the engine
// (exact: `fast_forward` off; with it on, the engine's estimate is no bound).
std::string long_run_notice(const count::WorkEstimate& w, bool walk, bool engine, bool fast_forward = false);

}  // namespace iosim::report
