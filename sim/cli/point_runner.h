// Runs independent points (simulate runs) on threads and hands their results
// back in index order on the calling thread, with one progress bar over all
// of them: `iosim sweep` (one row per grid point) and `iosim explore` (one
// result per candidate tiling).
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/common/error.h"
#include "sim/common/progress.h"
#include "sim/report/progress_bar.h"

namespace iosim::cli {

// A point's walk and engine steps, added to the shared count as they go.
class PointProgress final : public ProgressSink {
 public:
  explicit PointProgress(std::atomic<i64>& shared) : shared_(shared) {}
  void add(i64 units) override {
    shared_.fetch_add(units);
    mine_ += units;
  }
  // At the point's end: the rest of its weight (the estimate may exceed the steps reported).
  void complete(i64 weight) { add(std::max<i64>(0, weight - mine_)); }

 private:
  std::atomic<i64>& shared_;
  i64 mine_ = 0;
};

// Runs `work` on `threads` threads and `meanwhile` on this one; joins them
// however `meanwhile` ends.
template <typename Work, typename Meanwhile>
void on_threads(i64 threads, const Work& work, const Meanwhile& meanwhile) {
  std::vector<std::jthread> pool;
  for (i64 t = 0; t < threads; ++t) pool.emplace_back(work);
  meanwhile();
}

// Runs points 0..weights.size()-1 on `jobs` threads: `point(i, progress)`
// returns point i's Row; `emit(row)` gets each row in index order, on the
// calling thread, as soon as it and all before it are done. The bar advances
// by the steps the points report, each point in all by its weight. An
// exception from a point stops every thread and is rethrown here, once.
template <typename Row, typename Point, typename Emit>
void run_points_in_order(const std::vector<i64>& weights, i64 jobs, const Point& point, Emit emit,
                         report::ProgressBar& bar) {
  const i64 count = static_cast<i64>(weights.size());
  if (count == 0) return;
  std::vector<std::optional<Row>> rows(weights.size());
  std::atomic<i64> next{0}, steps{0};
  std::mutex m;
  std::condition_variable done;
  std::exception_ptr failure;
  auto work = [&] {
    for (i64 i; (i = next.fetch_add(1)) < count;) {
      try {
        PointProgress progress(steps);
        Row row = point(i, progress);
        progress.complete(weights[static_cast<std::size_t>(i)]);
        const std::lock_guard lock(m);
        rows[static_cast<std::size_t>(i)] = std::move(row);
      } catch (...) {  // stop every thread, report it once
        const std::lock_guard lock(m);
        if (!failure) failure = std::current_exception();
        next.store(count);
      }
      done.notify_one();
    }
  };
  // The rows ready in index order are taken under the lock and emitted outside it.
  auto emit_in_order = [&] {
    i64 emitted = 0, reported = 0;
    while (true) {
      std::vector<Row> ready;
      {
        std::unique_lock lock(m);
        if (emitted == count || failure) return;
        done.wait_for(lock, std::chrono::milliseconds(100),
                      [&] { return failure || rows[static_cast<std::size_t>(emitted)].has_value(); });
        for (; emitted < count && rows[static_cast<std::size_t>(emitted)]; ++emitted) {
          ready.push_back(std::move(*rows[static_cast<std::size_t>(emitted)]));
          rows[static_cast<std::size_t>(emitted)].reset();
        }
      }
      const i64 now_finished = steps.load();
      for (const Row& r : ready) emit(r);
      bar.add(now_finished - reported);
      reported = now_finished;
    }
  };
  on_threads(std::min(jobs, count), work, emit_in_order);
  if (failure) std::rethrow_exception(failure);
}

// Each point's share of the progress bar: the steps of its walk and its
// timing engine, from `plan(i)` (a SimulateRun; planned on `jobs` threads),
// 1 for a point that cannot be planned (its run reports why, at once).
template <typename Plan>
std::vector<i64> plan_weights(i64 count, i64 jobs, const Plan& plan, report::ProgressBar& bar) {
  std::vector<i64> weights(static_cast<std::size_t>(count), 1);
  if (count == 0) return weights;
  std::atomic<i64> next{0}, planned{0};
  bar.start("planning", count);
  on_threads(
      std::min(jobs, count),
      [&] {
        for (i64 i; (i = next.fetch_add(1)) < count; planned.fetch_add(1)) {
          try {
            const auto r = plan(i);
            weights[static_cast<std::size_t>(i)] = std::max<i64>(1, r.work.steps + (r.walk ? r.work.walk_steps : 0));
          } catch (...) {  // the run reports it
          }
        }
      },
      [&] {
        for (i64 shown = 0; shown < count;) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          const i64 now = planned.load();
          bar.add(now - shown);
          shown = now;
        }
      });
  return weights;
}

// --jobs N: 1 to 1024 threads, the hardware's by default.
inline i64 jobs_from_flag(std::optional<i64> flag) {
  const i64 cores = std::max<i64>(1, static_cast<i64>(std::thread::hardware_concurrency()));
  const i64 jobs = flag.value_or(cores);
  if (jobs < 1 || jobs > 1024) throw InputError("--jobs " + std::to_string(jobs) + ": expected 1 to 1024 threads");
  return jobs;
}

}  // namespace iosim::cli
