#include "sim/engine/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "sim/common/error.h"
#include "sim/report/json.h"

namespace iosim::engine {

void Timeline::add(int pid, int tid, const std::string& name, double t0, double t1) {
  if (full()) {
    ++dropped_;
    return;
  }
  events_.push_back({pid, tid, name, t0, t1});
}

void Timeline::kernel(const std::string& name, double t0, double t1) { add(0, 0, name, t0, t1); }

void Timeline::slice(int sm, int slot, int lane, const std::string& name, double t0, double t1) {
  add(1 + sm, slot * kLanesPerSlot + lane, name, t0, t1);
}

void Timeline::store_slice(int sm, int slot, double t0, double t1) {
  const size_t key = static_cast<size_t>(sm) * 64 + static_cast<size_t>(slot);
  if (store_lane_end_.size() <= key) store_lane_end_.resize(key + 1, 0);
  t0 = std::max(t0, store_lane_end_[key]);
  if (t1 <= t0) return;
  store_lane_end_[key] = t1;
  slice(sm, slot, kStoreLane, "store", t0, t1);
}

std::string Timeline::note() const {
  if (dropped_ == 0) return "";
  return "timeline truncated: the first " + std::to_string(events_.size()) + " events were kept and " +
         std::to_string(dropped_) + " later ones left out (--timeline-max-events N keeps more)";
}

namespace {
std::string lane_name(int tid) {
  const int slot = tid / Timeline::kLanesPerSlot, lane = tid % Timeline::kLanesPerSlot;
  std::string s = "slot " + std::to_string(slot);
  if (lane == Timeline::kCtaLane) return s;
  if (lane == Timeline::kStoreLane) return s + " stores";
  return s + " loads buf " + std::to_string(lane - Timeline::kLoadLane);
}
}  // namespace

void Timeline::write(const std::string& path) const {
  std::ofstream f(path);
  if (!f) throw InputError("cannot open '" + path + "' for writing the timeline");
  f << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  std::set<std::pair<int, int>> tracks;
  std::set<int> pids;
  char buf[96];
  bool first = true;
  for (const Event& e : events_) {
    tracks.insert({e.pid, e.tid});
    pids.insert(e.pid);
    if (!first) f << ",\n";
    first = false;
    // Whole picoseconds, rounded once per end point, so nested slices stay nested.
    const long long t0 = std::llround(e.t0 / cycles_per_us_ * 1e6);
    const long long t1 = std::max(t0, std::llround(e.t1 / cycles_per_us_ * 1e6));
    std::snprintf(buf, sizeof buf, "\"ts\":%lld.%06lld,\"dur\":%lld.%06lld", t0 / 1000000, t0 % 1000000,
                  (t1 - t0) / 1000000, (t1 - t0) % 1000000);
    f << "{\"ph\":\"X\",\"pid\":" << e.pid << ",\"tid\":" << e.tid << ",\"name\":\"" << report::json_escape(e.name)
      << "\"," << buf << "}";
  }
  for (int pid : pids) {
    f << (first ? "" : ",\n") << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid
      << ",\"args\":{\"name\":\"" << (pid == 0 ? std::string("kernels") : "SM " + std::to_string(pid - 1)) << "\"}}";
    f << ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << pid << ",\"args\":{\"sort_index\":" << pid
      << "}}";
    first = false;
  }
  for (const auto& [pid, tid] : tracks) {
    f << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"args\":{\"name\":\""
      << (pid == 0 ? std::string("kernels") : lane_name(tid)) << "\"}}";
    f << ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << pid << ",\"tid\":" << tid
      << ",\"args\":{\"sort_index\":" << tid << "}}";
  }
  f << "\n],\"otherData\":{\"generator\":\"iosim\",\"events\":" << events_.size() << ",\"dropped_events\":" << dropped_;
  if (dropped_ > 0) f << ",\"note\":\"" << report::json_escape(note()) << "\"";
  f << "}}\n";
  if (!f) throw InputError("error while writing the timeline to '" + path + "'");
}

}  // namespace iosim::engine
