#!/usr/bin/env bash
# The device call of 2026-11-28 (session 8) after the standard GEMM's multi-tile CTAs: the GPU tests the
# GEMM change had not run (test_gpu_standard_eager, test_gpu_launch_checks), then the validation grid's
# standard-attention rows measured again with the new kernels (experiments/validation/run_grid.sh
# --only '^std-'; its archive lands in $OUT).
#   OUT=DIR experiments/probes/std_regrid_run.sh BINS   (GPU machine; BINS: iosim-kernels, iosim-peer, tests)
set -u
b=/tmp/iosim-regrid-bins
rm -rf $b && mkdir -p $b
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" $b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
date -u > "$OUT/date.txt"
for t in test_gpu_standard_eager test_gpu_launch_checks; do
  IOSIM_KERNELS_CLI=$b/iosim-kernels $b/$t --log_level=message --report_level=short > "$OUT/$t.log" 2>&1
  echo "$t: exit $? ($(tail -1 "$OUT/$t.log"))"
done
experiments/validation/run_grid.sh $b/iosim-kernels /tmp/std-regrid --only '^std-' > "$OUT/regrid.log" 2>&1
echo "run_grid exit $?"; tail -3 "$OUT/regrid.log"
ls -la "$OUT"
