#!/usr/bin/env bash
# Speed of the timing engine (not a test): simulated sector requests per
# second and wall time, single thread, for
#   (a) GPT-2 medium attention, B=64 H=16 N=1024 d=64 fp16, forward+backward,
#       standard / FA1 / FA2, on the a100-sxm4-40gb profile;
#   (b) FA2 forward, B=1 H=32 N=16384 d=128 fp16, on the h100-sxm5-80gb profile.
# Each case runs REPEATS times (default 3) and the fastest wall time is kept:
# the machine is shared. Building the trace is included; counting is not.
# Columns: requested L2 sectors; wall time; sectors per second; (row, line)
# pairs looked up one by one ("line visits"), lines of writes to valid tiles
# that only had their dirty bits set ("dirty-only"), requests answered by a
# tile record ("fast-path"); the predicted GPU time.
#
# Usage: experiments/bench_engine.sh [build-dir]   (default: build-engine)
# Results go to stdout; docs/engine.md records them with the machine and date.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-engine}
repeats=${REPEATS:-3}
cmake --build "$build" --target iosim_sim -j2 >/dev/null
yaml_lib=$(grep -m1 '^YAML_CPP_STATIC_LIB:' "$build/CMakeCache.txt" | cut -d= -f2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/bench.cpp" <<'CPP'
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "sim/engine/engine.h"

using namespace iosim;

struct Case {
  const char* label;
  const char* profile;
  trace::Algorithm algorithm;
  workload::Pass pass;
  i64 batch, heads, n, d;
};

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::stoi(argv[1]) : 3;
  const Case cases[] = {
      {"gpt2-medium standard fwd+bwd", "a100-sxm4-40gb", trace::Algorithm::standard, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"gpt2-medium fa1 fwd+bwd", "a100-sxm4-40gb", trace::Algorithm::fa1, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"gpt2-medium fa2 fwd+bwd", "a100-sxm4-40gb", trace::Algorithm::fa2, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"fa2 fwd B1 H32 N16384 d128", "h100-sxm5-80gb", trace::Algorithm::fa2, workload::Pass::fwd, 1, 32, 16384, 128},
  };
  std::printf("%-30s %-15s %12s %10s %14s %12s %12s %12s %12s\n", "case", "profile", "sectors", "wall s", "sectors/s",
              "line visits", "dirty-only", "fast-path", "predicted ms");
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
    double best = 1e30;
    engine::SimulationResult r;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto run = trace::build_trace(prob, o);
      r = engine::simulate(run, p, {});
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const auto t = r.total.l2.total();
    std::printf("%-30s %-15s %12lld %10.3f %14.3e %12lld %12lld %12lld %12.3f\n", c.label, c.profile,
                static_cast<long long>(t.sectors), best, static_cast<double>(t.sectors) / best,
                static_cast<long long>(r.total.l2.line_visits), static_cast<long long>(r.total.l2.dirty_mark_visits),
                static_cast<long long>(r.total.l2.fast_path_requests), r.total.seconds * 1e3);
  }
  return 0;
}
CPP
g++ -O2 -std=c++20 -I"$root" "$work/bench.cpp" "$build/sim/libiosim_sim.a" "$yaml_lib" -o "$work/bench"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v taskset >/dev/null; then taskset -c 0 "$work/bench" "$repeats"; else "$work/bench" "$repeats"; fi
