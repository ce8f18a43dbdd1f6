#!/usr/bin/env bash
# The device call of 2026-11-28 (session 8) after the standard GEMM's multi-tile CTAs: the GPU tests the
# GEMM change had not run (test_gpu_standard_eager, test_gpu_launch_checks), then the validation grid's
# standard-attention rows measured again with the new kernels (experiments/validation/run_grid.sh
# --only '^std-'; its archive lands in $OUT).
#   OUT=DIR experiments/probes/std_regrid_run.sh BINS   (GPU machine; BINS: iosim-kernels, iosim-peer, tests)
set -u
. "$(dirname "$0")/device_steps.sh"
b=/tmp/iosim-regrid-bins
unpack_bins "$1" $b
record_device
gpu_tests $b test_gpu_standard_eager test_gpu_launch_checks
experiments/validation/run_grid.sh $b/iosim-kernels /tmp/std-regrid --only '^std-' > "$OUT/regrid.log" 2>&1
echo "run_grid exit $?"; tail -3 "$OUT/regrid.log"
ls -la "$OUT"
