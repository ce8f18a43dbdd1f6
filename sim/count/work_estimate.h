// How long a run will take, known before it starts: the trace steps of every
// kernel come from the closed form (count::kernel_steps, exact and cheap for
// any size), the cost of a step from walking a small sample of the run's own
// trace here. The timing engine does at least that walk's work per step (it
// replays the same steps and adds the memory model), so its estimate is a
// lower bound.
#pragma once
#include <vector>

#include "sim/trace/algorithms.h"

namespace iosim::count {

struct WorkEstimate {
  std::vector<i64> kernel_steps;  // per kernel, over all its CTAs: what the engine replays
  std::vector<i64> walked_steps;  // per kernel: what the count walk visits (replica CTAs once)
  i64 steps = 0;                  // sum of kernel_steps
  i64 walk_steps = 0;             // sum of walked_steps
  double walk_seconds = 0;        // the count walk, at the measured rate and its threads
  double engine_seconds_at_least = 0;
  double seconds_per_step = 0;    // measured on the sample
};

// Walks at most `sample_steps` steps of the run's kernels (a few milliseconds).
WorkEstimate estimate_work(const trace::AlgorithmTrace& run, i64 sample_steps = 20000);

}  // namespace iosim::count
