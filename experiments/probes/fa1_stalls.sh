#!/usr/bin/env bash
# On the GPU machine: why FA1's warps issue so rarely (0.04-0.47 instructions per cycle per SMSP
# on the H100 grid, walk_vs_ncu.py in experiments/results/2026-11-25-h100-sass-fa1-paths): Nsight
# Compute's warp-state section (stall reasons per issued instruction: no_instruction (instruction
# cache), branch_resolving, short/long scoreboard, barrier, wait, math throttle, ...) for FA1's
# d64 64x64 grid rows, fwd and bwd, and the instruction-cache counters where ncu lists them.
#   experiments/probes/fa1_stalls.sh IOSIM_KERNELS OUTDIR
# IOSIM_KERNELS: the full-menu iosim-kernels binary (scripts/gpu_build.sh). Writes OUTDIR/<name>.csv
# (ncu --csv --page raw) and .err per configuration; DRY_RUN=1 prints the commands only.
set -uo pipefail
[ $# -eq 2 ] || { sed -n '7p' "$0" >&2; exit 2; }
bin=$1
out=$2
here=$(cd "$(dirname "$0")/../validation" && pwd)
[ -n "${DRY_RUN:-}" ] || [ -x "$bin" ] || { echo "fa1_stalls: $bin is not an executable" >&2; exit 2; }
mkdir -p "$out"
for name in fa1-fwd-d64-n2048-bh128-64x64 fa1-bwd-d64-n2048-bh128-64x64; do
  flags=$(awk -F';' -v n="$name" '$2 == n {print $5}' "$here/grid.txt")
  [ -n "$flags" ] || { echo "fa1_stalls: $name is not in $here/grid.txt" >&2; exit 2; }
  cmd=(ncu --clock-control none --cache-control all --section WarpStateStats --section SchedulerStats
       --metrics sm__icc_requests.sum,sm__icc_hits.sum,smsp__pcsamp_warps_issue_stalled_no_instructions
       --csv --page raw --print-units base "$bin" bench $flags --warmup 0 --iters 1 --l2-multiple 0.001)
  if [ -n "${DRY_RUN:-}" ]; then
    echo "${cmd[*]} > $out/$name.csv 2> $out/$name.err"
    continue
  fi
  # Counters ncu does not list on this GPU are dropped (the sections alone still answer).
  if ! "${cmd[@]}" > "$out/$name.csv" 2> "$out/$name.err"; then
    cmd=(ncu --clock-control none --cache-control all --section WarpStateStats --section SchedulerStats
         --csv --page raw --print-units base "$bin" bench $flags --warmup 0 --iters 1 --l2-multiple 0.001)
    "${cmd[@]}" > "$out/$name.csv" 2> "$out/$name.err" || echo "fa1_stalls: ncu failed for $name (see $out/$name.err)" >&2
  fi
done
