// A Chrome Trace Event file (JSON) of a simulated run, for Perfetto
// (ui.perfetto.dev) or chrome://tracing. Layout: process 0 holds one slice
// per kernel; process 1 + s is SM s. Inside an SM, each CTA slot has a track
// with a slice per CTA and, nested in it, its compute slices and "wait"
// slices (the CTA is ready to compute but its tiles have not arrived, or the
// SM's pipes are busy with another CTA); beside it, one track per pipeline
// buffer with the tile loads into that buffer (issue -> data in shared
// memory), and one with the stores (issue -> accepted by L2; clipped so
// successive stores do not overlap on the track).
//
// Events are kept in memory up to a cap; past it, recording stops and the
// file says how many events were left out (the first part of the run stays
// complete, which is what a timeline is read for).
#pragma once
#include <string>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::engine {

class Timeline {
 public:
  // `cycles_per_us`: SM clock in cycles per microsecond.
  Timeline(i64 max_events, double cycles_per_us) : max_events_(max_events), cycles_per_us_(cycles_per_us) {}

  enum Lane : int { kCtaLane = 0, kLoadLane = 1, kStoreLane = 15 };
  static constexpr int kLanesPerSlot = 16;  // CTA, up to 13 load buffers, stores

  void kernel(const std::string& name, double t0, double t1);
  // A slice on SM `sm`, slot `slot`, lane `lane`; times in cycles.
  void slice(int sm, int slot, int lane, const std::string& name, double t0, double t1);
  void store_slice(int sm, int slot, double t0, double t1);

  i64 recorded() const { return static_cast<i64>(events_.size()); }
  i64 dropped() const { return dropped_; }
  bool full() const { return static_cast<i64>(events_.size()) >= max_events_; }
  // Empty when complete, else a sentence saying what was left out.
  std::string note() const;
  // Throws iosim::InputError when the file cannot be written.
  void write(const std::string& path) const;

 private:
  struct Event {
    int pid, tid;
    std::string name;
    double t0, t1;  // cycles
  };
  void add(int pid, int tid, const std::string& name, double t0, double t1);

  i64 max_events_;
  double cycles_per_us_;
  std::vector<Event> events_;
  std::vector<std::pair<int, int>> tracks_;  // (pid, tid) seen, for names
  std::vector<double> store_lane_end_;       // per (sm, slot) track index
  i64 dropped_ = 0;
};

}  // namespace iosim::engine
