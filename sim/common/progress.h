// A hook for progress bars: long computations (the trace walk, the timing
// engine) report work units done as they go. Reporting is cheap (a call per
// few thousand trace steps) and optional (a null sink costs one branch).
#pragma once
#include "sim/common/hd.h"

namespace iosim {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // `units` more units of work are done (trace steps, or what the sink was
  // told to expect). Called from one thread at a time.
  virtual void add(i64 units) = 0;
};

// How many steps a reporter lets pass between calls.
inline constexpr i64 kProgressEverySteps = 4096;

}  // namespace iosim
