#!/usr/bin/env bash
# On the GPU machine: the L2 write probe (experiments/probes/l2_write_probe.cu) under Nsight Compute, L2
# flushed before each launch (as the validation grid measures kernels): stores alone, into L2-resident
# lines, L2-resident re-reads, and a 32 MiB read with every K-th CTA writing, each config twice.
# Usage: experiments/probes/l2_write_run.sh PROBE_BINARY OUT
set -uo pipefail
probe=$1
out=$2
configs=
for rep in 1 2; do
  for m in 8 16 32 64; do configs="$configs read:$m"; done
  for m in 4 8 16 32 64; do configs="$configs write:$m"; done
  for m in 8 16 32; do configs="$configs copy:$m"; done
  configs="$configs l2read:8:64 l2read:8:256 l2write:8:64 l2write:8:256"
  for k in 1 2 4 8; do configs="$configs mix:32:$k"; done
done
. "$(dirname "$0")/ncu_probe.sh"
ncu_probe "$out" "stream" gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum "$probe" $configs
