#!/usr/bin/env bash
# Speed of the timing engine (not a test), single thread, for
#   (a) GPT-2 medium attention, B=64 H=16 N=1024 d=64 fp16, forward+backward,
#       standard / FA1 / FA2, on the a100-sxm4-40gb profile;
#   (b) FA2 forward, B=1 H=32 N=16384 d=128 fp16, on the h100-sxm5-80gb profile.
# A small driver linked against libiosim_sim.a builds each case's trace and
# simulates it (counting is not included), once per process. Each case runs
# REPEATS times (default 3) on core CPU (default 1) and the fastest wall time
# is kept, with the CPU time of that run: the machine is shared, and a CPU
# time well below the wall time shows that another job took the core.
#
# With a second build directory (of another checkout, e.g. the code before a
# change), its driver runs the same cases, alternating run by run with the
# first, so both see the same load; the table gives both and the speed-up,
# and says "(results differ)" if the requested sectors, DRAM bytes, dirty
# bytes left, hits or predicted time differ.
#
# Columns: SM->L2 requested sectors; wall and CPU seconds; (row, line) pairs
# looked up one by one ("line visits"); lines of writes to valid tiles that
# only had their dirty bits set ("dirty-only"); requests answered by a tile
# record ("fast-path"); DRAM reads; the predicted GPU time.
#
# SAMPLING="1 16": each case also runs with L2 set sampling 1/16 and prints
# its deviation from the exact run (DRAM bytes, time).
# GOALS=1: also times the command lines of issue 12's speed goals with each
# build's iosim (process start included), best of GOAL_REPEATS (default 1):
# `iosim` with no arguments (fast since 2026-12-02) and with --exact, and
# standard attention B=4 H=16 N=16384 d=64 forward (the default pass; also
# with --fast-forward, and with --l2-sample 16 too) and forward+backward.
#
# Usage: [SAMPLING="1 16"] [REPEATS=3] [CPU=1] [GOALS=1 [GOAL_REPEATS=1]]
#        experiments/bench_engine.sh [build-dir [baseline-build-dir]]   (default: build-engine)
# Results go to stdout; docs/engine.md records them with the machine and date.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
builds=("${1:-$root/build-engine}")
[[ -n ${2:-} ]] && builds+=("$2")
repeats=${REPEATS:-3}
samplings=${SAMPLING:-1}  # L2 set sampling factors to run (1 = exact; the others are compared with it)
cpu=${CPU:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/bench.cpp" <<'CPP'
#include <sys/resource.h>

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

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Usage: bench CASE SAMPLING. Prints: label profile wall cpu sectors line_visits
// dirty_only fast_path dram_read dram_write dirty_left seconds hit_sectors.
int main(int argc, char** argv) {
  const Case cases[] = {
      {"gpt2-medium-standard-fwdbwd", "a100-sxm4-40gb", trace::Algorithm::standard, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"gpt2-medium-fa1-fwdbwd", "a100-sxm4-40gb", trace::Algorithm::fa1, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"gpt2-medium-fa2-fwdbwd", "a100-sxm4-40gb", trace::Algorithm::fa2, workload::Pass::fwdbwd, 64, 16, 1024, 64},
      {"fa2-fwd-B1-H32-N16384-d128", "h100-sxm5-80gb", trace::Algorithm::fa2, workload::Pass::fwd, 1, 32, 16384, 128},
  };
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench CASE SAMPLING\n");
    return 2;
  }
  const Case& c = cases[std::stoi(argv[1])];
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
  engine::EngineOptions eo;
  eo.l2_set_sampling = std::stoi(argv[2]);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  const auto run = trace::build_trace(prob, o);
  const auto r = engine::simulate(run, p, eo);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - c0;
  const auto t = r.total.l2.total();
  std::printf("%s %s %.4f %.4f %lld %lld %lld %lld %lld %lld %lld %.9g %lld\n", c.label, c.profile, wall, cpu,
              static_cast<long long>(t.sectors), static_cast<long long>(r.total.l2.line_visits),
              static_cast<long long>(r.total.l2.dirty_mark_visits), static_cast<long long>(r.total.l2.fast_path_requests),
              static_cast<long long>(r.total.dram_read_bytes), static_cast<long long>(r.total.dram_write_bytes),
              static_cast<long long>(r.total.dirty_left_bytes), r.total.seconds, static_cast<long long>(t.hit_sectors));
  return 0;
}
CPP

# One driver per build directory, compiled against that checkout's headers.
for i in "${!builds[@]}"; do
  b=${builds[$i]}
  src=$(grep -m1 '^CMAKE_HOME_DIRECTORY:' "$b/CMakeCache.txt" | cut -d= -f2)
  yaml_lib=$(grep -m1 '^YAML_CPP_STATIC_LIB:' "$b/CMakeCache.txt" | cut -d= -f2)
  cmake --build "$b" --target iosim_sim iosim -j2 >/dev/null
  g++ -O2 -std=c++20 -I"$src" "$work/bench.cpp" "$b/sim/libiosim_sim.a" "$yaml_lib" -o "$work/bench.$i"
done
pin() { if command -v taskset >/dev/null; then taskset -c "$cpu" "$@"; else "$@"; fi; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u '+%F %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "build: ${builds[0]}${builds[1]:+, baseline: ${builds[1]}}; best of $repeats runs on core $cpu"
for c in 0 1 2 3; do
  for s in $samplings; do
    for ((r = 0; r < repeats; ++r))
    do
      for i in "${!builds[@]}"; do echo "$i $s $(pin "$work/bench.$i" "$c" "$s")"; done
    done
  done
done >"$work/runs"

# Best run per (build, case, sampling); then the table.
python3 - "$work/runs" "${#builds[@]}" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
nbuilds = int(sys.argv[2])
best = {}
for r in rows:
    key = (int(r[0]), r[2], int(r[1]))
    if key not in best or float(r[4]) < float(best[key][4]):
        best[key] = r
cases = list(dict.fromkeys(r[2] for r in rows))
samplings = list(dict.fromkeys(int(r[1]) for r in rows))
head = f"{'case':<28} {'profile':<15} {'sample':>6} {'sectors':>12} {'wall s':>8} {'cpu s':>8}"
if nbuilds > 1:
    head += f" {'base wall':>9} {'base cpu':>8} {'speed-up':>8}"
head += f" {'line visits':>12} {'dirty-only':>11} {'fast-path':>10} {'DRAM rd MB':>11} {'L2 hit':>7} {'predicted ms':>12}"
print(head)
for c in cases:
    for s in samplings:
        r = best[(0, c, s)]
        line = f"{c:<28} {r[3]:<15} {s:>6} {int(r[6]):>12} {float(r[4]):>8.3f} {float(r[5]):>8.3f}"
        if nbuilds > 1:
            b = best[(1, c, s)]
            same = [r[k] for k in (6, 10, 11, 12, 13, 14)] == [b[k] for k in (6, 10, 11, 12, 13, 14)]  # results, not work done
            line += f" {float(b[4]):>9.3f} {float(b[5]):>8.3f} {float(b[4]) / float(r[4]):>7.2f}x"
            if not same:
                line += " (results differ)"
        line += (f" {int(r[7]):>12} {int(r[8]):>11} {int(r[9]):>10} {int(r[10]) / 1e6:>11.1f}"
                 f" {100 * int(r[14]) / int(r[6]):>6.2f}% {float(r[13]) * 1e3:>12.3f}")
        print(line)
        if s != 1 and (0, c, 1) in best:
            x = best[(0, c, 1)]
            rel = lambda a, b: 0.0 if float(b) == 0 else float(a) / float(b) - 1
            print(f"{'':<28}   vs exact: DRAM read {100 * rel(r[10], x[10]):+.3f}%, DRAM write {100 * rel(r[11], x[11]):+.3f}%,"
                  f" dirty left {100 * rel(r[12], x[12]):+.3f}%, time {100 * rel(r[13], x[13]):+.3f}%")
PY

if [[ -n ${GOALS:-} ]]; then
  # Issue 12's goals as command lines: wall and CPU seconds, best of REPEATS.
  # (The default run is approximate since 2026-12-02; --exact is the exact one.)
  std16k="simulate --algo standard --batch 4 --heads 16 --seq 16384 --head-dim 64"
  goals=("" "--exact" "$std16k" "$std16k --fast-forward" "$std16k --fast-forward --l2-sample 16"
         "simulate --algo standard --pass fwdbwd --batch 4 --heads 16 --seq 16384 --head-dim 64")
  echo
  goal_repeats=${GOAL_REPEATS:-1}
  note=""
  [[ ${#builds[@]} -gt 1 ]] && note="; then the same for the baseline"
  echo "command lines (best of $goal_repeats: wall s, CPU s$note)"
  for g in "${goals[@]}"; do
    line=""
    for i in "${!builds[@]}"; do
      best=""
      for ((r = 0; r < goal_repeats; ++r)); do
        # shellcheck disable=SC2086
        t=$( { /usr/bin/time -f "%e %U %S" taskset -c "$cpu" "${builds[$i]}/sim/iosim" $g >/dev/null; } 2>&1 | tail -1)
        w=$(echo "$t" | awk '{print $1}')
        if [[ -z $best ]] || awk "BEGIN{exit !($w < ${best%% *})}"; then best="$w $(echo "$t" | awk '{print $2 + $3}')"; fi
      done
      line+=$(printf ' %8.2f %8.2f' $best)
    done
    printf '%-90s%s\n' "iosim ${g:-(no arguments)}" "$line"
  done
fi
