#!/usr/bin/env bash
# On the GPU machine: the stream-size probe (experiments/probes/stream_size_probe.cu) under Nsight
# Compute, L2 flushed before each launch (as the validation grid measures kernels): time and DRAM
# bytes of a read-only and a copy stream of 4-512 MiB, each twice.
# Usage: experiments/probes/stream_size_run.sh PROBE_BINARY OUT
set -uo pipefail
probe=$1
out=$2
configs=
for rep in 1 2; do for k in read copy; do for m in 4 8 16 32 64 128 256 512; do configs="$configs $k:$m"; done; done; done
. "$(dirname "$0")/ncu_probe.sh"
ncu_probe "$out" "stream_read|copy_chunks" gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second "$probe" $configs
