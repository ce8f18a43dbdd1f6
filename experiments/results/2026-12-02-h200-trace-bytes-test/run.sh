#!/usr/bin/env bash
# The device call of 2026-12-02 (session 18, second): test_gpu_trace_bytes as it now stands (the L2's
# sector bytes plus the TMA boxes' zero fill against Nsight Compute's crossbar bytes; FA2 backward and
# FA3 cases, FA3 ragged and causal among them).
#   OUT=DIR experiments/results/2026-12-02-h200-trace-bytes-test/run.sh
# Carried: build-staged-carry/bins.tar.xz (iosim-kernels, iosim, test_gpu_trace_bytes of scripts/gpu_build.sh's
# full-menu build of this tree, packed alone).
set -u
b=/tmp/b
rm -rf $b; mkdir -p $b $OUT/r
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build-staged-carry/bins.tar.xz $b
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/r/device.txt
date -u > $OUT/r/date.txt
ncu --version | tail -1 >> $OUT/r/device.txt
export IOSIM_KERNELS_CLI=$b/iosim-kernels IOSIM_CLI=$b/iosim PATH=$b:$PATH
t0=$(date +%s)
$b/test_gpu_trace_bytes --log_level=test_suite --report_level=short > $OUT/r/test_gpu_trace_bytes.log 2>&1
echo "test_gpu_trace_bytes: exit $? [$(( $(date +%s) - t0 )) s]"
grep -a "RESULT" $OUT/r/test_gpu_trace_bytes.log | sed 's/.*RESULT //' > $OUT/r/results.txt
tail -6 $OUT/r/test_gpu_trace_bytes.log
