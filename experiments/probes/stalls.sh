#!/usr/bin/env bash
# On the GPU machine: Nsight Compute's warp-state and scheduler sections (stall reasons per issued
# instruction: wait, branch_resolving, no_instruction, short/long scoreboard, barrier, math and MIO
# throttles, ...) with the SM clock and the control-flow instruction counters, for configurations
# of the validation grid (a NAME of experiments/validation/grid.txt or grid-fa3.txt) or given as
# NAME=FLAGS (flags of `iosim-kernels bench`, every kernel profiled).
#   experiments/probes/stalls.sh IOSIM_KERNELS OUTDIR NAME|NAME=FLAGS...
# Writes OUTDIR/<name>.csv (ncu --csv --page raw) and .err; DRY_RUN=1 prints the commands only.
# Read with experiments/probes/stalls_table.py OUTDIR.
set -uo pipefail
[ $# -ge 3 ] || { sed -n '6p' "$0" >&2; exit 2; }
bin=$1
out=$2
shift 2
here=$(cd "$(dirname "$0")/../validation" && pwd)
[ -n "${DRY_RUN:-}" ] || [ -x "$bin" ] || { echo "stalls: $bin is not an executable" >&2; exit 2; }
mkdir -p "$out"
extra=smsp__inst_executed.sum,smsp__inst_executed_pipe_cbu.sum,smsp__inst_executed_pipe_adu.sum,smsp__sass_inst_executed_op_branch.sum,sm__cycles_elapsed.avg.per_second,smsp__warps_active.avg.per_cycle_active
for arg in "$@"; do
  if [[ $arg == *=* ]]; then
    name=${arg%%=*}
    flags=${arg#*=}
    regex=.
  else
    name=$arg
    line=$(awk -F';' -v n="$name" '$2 == n' "$here/grid.txt" "$here/grid-fa3.txt" | head -1)
    [ -n "$line" ] || { echo "stalls: $name is not in $here/grid.txt or grid-fa3.txt" >&2; exit 2; }
    regex=$(echo "$line" | cut -d';' -f3)
    flags=$(echo "$line" | cut -d';' -f5)
  fi
  base=(ncu --clock-control none --cache-control all --kernel-name "regex:$regex" --section WarpStateStats
        --section SchedulerStats)
  tail_args=(--csv --page raw --print-units base "$bin" bench $flags --warmup 0 --iters 1 --l2-multiple 0.001)
  if [ -n "${DRY_RUN:-}" ]; then
    echo "${base[*]} --metrics $extra ${tail_args[*]} > $out/$name.csv"
    continue
  fi
  # Counters ncu does not list on this GPU are dropped (the sections alone still answer).
  if ! "${base[@]}" --metrics "$extra" "${tail_args[@]}" > "$out/$name.csv" 2> "$out/$name.err"; then
    "${base[@]}" "${tail_args[@]}" > "$out/$name.csv" 2> "$out/$name.err" ||
      echo "stalls: ncu failed for $name (see $out/$name.err)" >&2
  fi
done
