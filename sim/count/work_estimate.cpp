#include "sim/count/work_estimate.h"

#include <algorithm>
#include <chrono>

#include "sim/count/formulas.h"
#include "sim/count/io_count.h"

namespace iosim::count {

namespace {

// Seconds per step of the count walk, measured on the first CTA of each
// kernel in turn until `budget` steps are walked.
double measure_seconds_per_step(const trace::AlgorithmTrace& run, i64 budget) {
  const i64 per_kernel = std::max<i64>(1, budget / std::max<i64>(1, static_cast<i64>(run.kernels.size())));
  IoTotals sink;
  i64 walked = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& entry : run.kernels) {
    auto steps = entry.kernel->cta_steps(0, 0, 0);
    for (i64 n = 0; n < per_kernel && steps.next(); ++n, ++walked) add_step(sink, steps.value(), *run.tensors, 1);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return walked > 0 ? seconds / static_cast<double>(walked) : 0.0;
}

}  // namespace

WorkEstimate estimate_work(const trace::AlgorithmTrace& run, i64 sample_steps) {
  WorkEstimate w;
  w.kernel_steps = kernel_steps(run);
  w.seconds_per_step = measure_seconds_per_step(run, sample_steps);
  for (size_t k = 0; k < w.kernel_steps.size(); ++k) {
    const trace::KernelTrace& kernel = *run.kernels[k].kernel;
    const i64 walked = walked_steps(kernel, w.kernel_steps[k]);
    w.walked_steps.push_back(walked);
    w.steps += w.kernel_steps[k];
    w.walk_steps += walked;
    w.walk_seconds +=
        static_cast<double>(walked) * w.seconds_per_step / static_cast<double>(walk_threads(kernel));
  }
  w.engine_seconds_at_least = static_cast<double>(w.steps) * w.seconds_per_step;
  return w;
}

}  // namespace iosim::count
