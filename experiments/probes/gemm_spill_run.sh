#!/usr/bin/env bash
# The device call of 2026-11-28 (session 9) after the standard GEMM's 128 x 128 x 64 tile with B
# n-contiguous stopped spilling (one 16-deep slice per unrolled body: sim/schedule/gemm_slices.h): the
# standard GPU tests, compute-sanitizer on every standard configuration, the standard bench against
# cuBLAS and eager PyTorch (every GEMM at 128 x 128 x 64), and the validation grid's 128 x 128 x 64
# standard rows measured again (run_grid.sh --only; its archive lands in $OUT).
#   OUT=DIR experiments/probes/gemm_spill_run.sh BINS   (GPU machine; BINS: iosim-kernels and the tests, or
#   iosim-kernels and iosim-peer: a call carries at most ~12 MB besides the tree, so the bench runs
#   in a call of its own, when BINS holds iosim-peer; the rest when it holds the tests)
set -u
. "$(dirname "$0")/device_steps.sh"
b=/tmp/iosim-spill-bins
unpack_bins "$1" $b
record_device
if [ -x $b/iosim-peer ]; then
  experiments/bench_attention.sh $b/iosim-kernels "$OUT/bench" --standard > "$OUT/bench.log" 2>&1
  echo "bench exit $?"; grep -E "Targets met" "$OUT"/bench/*.md
  exit 0
fi
gpu_tests $b test_gpu_standard_fa1 test_gpu_standard_eager
standard_sanitize $b
experiments/validation/run_grid.sh $b/iosim-kernels /tmp/std-spill --only '^std-.*128x128x64' > "$OUT/regrid.log" 2>&1
echo "run_grid exit $?"; tail -1 "$OUT/regrid.log"
