#!/usr/bin/env bash
# Speed of the timing engine (not a test): simulated sector requests per
# second and wall time, single thread, for
#   (a) GPT-2 medium attention, B=64 H=16 N=1024 d=64 fp16, forward+backward,
#       standard / FA1 / FA2, on the a100-sxm4-40gb profile;
#   (b) FA2 forward, B=1 H=32 N=16384 d=128 fp16, on the h100-sxm5-80gb profile.
# Each case runs REPEATS times (default 3) and the fastest wall time is kept,
# with the CPU time of that run: the machine is shared, and CPU time shows
# when another job took the core. Building the trace is included; counting
# is not.
# Columns: requested L2 sectors; wall time; sectors per second; (row, line)
# pairs looked up one by one ("line visits"), lines of writes to valid tiles
# that only had their dirty bits set ("dirty-only"), requests answered by a
# tile record ("fast-path"); the predicted GPU time.
#
# With SAMPLING="1 16", each case also runs with L2 set sampling 1/16 and
# prints its deviation from the exact run (DRAM bytes, time).
#
# Usage: [SAMPLING="1 16"] [REPEATS=3] [CPU=1] experiments/bench_engine.sh [build-dir]   (default: build-engine)
#   CPU: the core to run on (taskset), default 1.
# Results go to stdout; docs/engine.md records them with the machine and date.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-engine}
repeats=${REPEATS:-3}
samplings=${SAMPLING:-1}  # L2 set sampling factors to run, e.g. SAMPLING="1 16" (1 = exact; the others are compared with it)
cmake --build "$build" --target iosim_sim -j2 >/dev/null
yaml_lib=$(grep -m1 '^YAML_CPP_STATIC_LIB:' "$build/CMakeCache.txt" | cut -d= -f2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/bench.cpp" <<'CPP'
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sys/resource.h>
#include <string>
#include <vector>

#include "sim/engine/engine.h"

using namespace iosim;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Case {
  const char* label;
  const char* profile;
  trace::Algorithm algorithm;
  workload::Pass pass;
  i64 batch, heads, n, d;
};

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::stoi(argv[1]) : 3;
  std::vector<int> samplings;  // L2 set sampling factors (1 = exact)
  for (int i = 2; i < argc; ++i) samplings.push_back(std::stoi(argv[i]));
  if (samplings.empty()) samplings.push_back(1);
  const Case cases[] = {
      {"gpt2-medium standard fwd+bwd", "a100-sxm4-40gb", trace::Algorithm::standard, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"gpt2-medium fa1 fwd+bwd", "a100-sxm4-40gb", trace::Algorithm::fa1, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"gpt2-medium fa2 fwd+bwd", "a100-sxm4-40gb", trace::Algorithm::fa2, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"fa2 fwd B1 H32 N16384 d128", "h100-sxm5-80gb", trace::Algorithm::fa2, workload::Pass::fwd, 1, 32, 16384, 128},
  };
  std::printf("%-30s %-15s %6s %12s %9s %9s %12s %12s %11s %11s %11s %8s %11s\n", "case", "profile", "sample", "sectors",
              "wall s", "cpu s", "sectors/s", "line visits", "dirty-only", "fast-path", "DRAM rd MB", "L2 hit", "predicted ms");
  for (const Case& c : cases) {
    const auto p = profile::find_profile(c.profile, profile::default_profile_dir());
    workload::Problem prob;
    prob.batch = c.batch;
    prob.heads = prob.kv_heads = c.heads;
    prob.seq_q = prob.seq_k = c.n;
    prob.head_dim = c.d;
    trace::TraceOptions o;
    o.algorithm = c.algorithm;
    o.pass = c.pass;
    o.sram_limit_bytes = p.smem_per_block_bytes;
    engine::SimulationResult exact;
    for (const int sampling : samplings) {
      engine::EngineOptions eo;
      eo.l2_set_sampling = sampling;
      double best = 1e30, best_cpu = 0;
      engine::SimulationResult r;
      for (int i = 0; i < repeats; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_seconds();
        const auto run = trace::build_trace(prob, o);
        r = engine::simulate(run, p, eo);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (wall < best) {
          best = wall;
          best_cpu = cpu_seconds() - c0;
        }
      }
      const auto t = r.total.l2.total();
      std::printf("%-30s %-15s %6d %12lld %9.3f %9.3f %12.3e %12lld %12lld %11lld %11.1f %7.2f%% %11.3f\n", c.label, c.profile,
                  sampling, static_cast<long long>(t.sectors), best, best_cpu, static_cast<double>(t.sectors) / best,
                  static_cast<long long>(r.total.l2.line_visits), static_cast<long long>(r.total.l2.dirty_mark_visits),
                  static_cast<long long>(r.total.l2.fast_path_requests), static_cast<double>(r.total.dram_read_bytes) / 1e6,
                  100.0 * static_cast<double>(t.hit_sectors) / static_cast<double>(t.sectors), r.total.seconds * 1e3);
      if (sampling == 1) {
        exact = r;
      } else if (!exact.kernels.empty()) {
        auto rel = [](double a, double b) { return b == 0 ? (a == 0 ? 0.0 : 1.0) : a / b - 1; };
        std::printf("%-30s   vs exact: DRAM read %+.3f%%, DRAM write %+.3f%%, dirty left %+.3f%%, time %+.3f%%\n", "",
                    100 * rel(static_cast<double>(r.total.dram_read_bytes), static_cast<double>(exact.total.dram_read_bytes)),
                    100 * rel(static_cast<double>(r.total.dram_write_bytes), static_cast<double>(exact.total.dram_write_bytes)),
                    100 * rel(static_cast<double>(r.total.dirty_left_bytes), static_cast<double>(exact.total.dirty_left_bytes)),
                    100 * rel(r.total.seconds, exact.total.seconds));
      }
    }
  }
  return 0;
}
CPP
g++ -O2 -std=c++20 -I"$root" "$work/bench.cpp" "$build/sim/libiosim_sim.a" "$yaml_lib" -o "$work/bench"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
if command -v taskset >/dev/null; then taskset -c "${CPU:-1}" "$work/bench" "$repeats" $samplings; else "$work/bench" "$repeats" $samplings; fi
