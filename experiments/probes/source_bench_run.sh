#!/usr/bin/env bash
# On the GPU machine: per-instruction counters (source_counters.sh, NO_SASS=1) and the CUDA-event median
# of 20 runs (NAME.bench.json) of each configuration, with the GPU's name and the date, packed into
# $OUT/ARCHIVE (xz); the .ncu-rep files stay on the machine.
#   OUT=DIR BINS=.../bins.tar.xz experiments/probes/source_bench_run.sh ARCHIVE 'NAME|KERNEL_REGEX|FLAGS'...
set -u
archive=$1
shift
work=/tmp/source-bench
rm -rf $work /tmp/b; mkdir -p /tmp/b $work
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "${BINS:?}" /tmp/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $work/device.txt
date -u > $work/date.txt
NO_SASS=1 "$(dirname "$0")/source_counters.sh" /tmp/b/iosim-kernels $work "$@"
for c in "$@"; do
  IFS='|' read -r name regex flags <<< "$c"
  /tmp/b/iosim-kernels bench $flags --warmup 3 --iters 20 --json > $work/$name.bench.json 2> $work/$name.bench.err
done
rm -f $work/*.ncu-rep
tar -C $work -cf - . | xz -6 > "$OUT/$archive"
