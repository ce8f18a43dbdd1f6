#!/usr/bin/env bash
# The device call of 2026-11-28 (session 9) after padding the N x N intermediates' rows to 32 elements
# (sim/schedule/score_layout.h): the standard GPU tests, compute-sanitizer on every standard and
# standard-eager configuration, then the validation grid's standard-attention rows measured again
# (experiments/validation/run_grid.sh --only '^std-'; its archive lands in $OUT).
#   OUT=DIR experiments/probes/pitch_run.sh BINS   (GPU machine; BINS: iosim-kernels and the tests, packed)
set -u
b=/tmp/iosim-pitch-bins
rm -rf $b && mkdir -p $b
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" $b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
date -u > "$OUT/date.txt"
for t in test_gpu_standard_fa1 test_gpu_standard_eager; do
  IOSIM_KERNELS_CLI=$b/iosim-kernels $b/$t --log_level=message --report_level=short > "$OUT/$t.log" 2>&1
  echo "$t: exit $? ($(tail -1 "$OUT/$t.log"))"
done
ONLY='^standard' scripts/gpu_sanitize.sh $b/iosim-kernels "$OUT/sanitize-standard.md" > /dev/null 2>&1
echo "sanitize exit $?: $(grep -c '| clean |' "$OUT/sanitize-standard.md") clean rows"
experiments/validation/run_grid.sh $b/iosim-kernels /tmp/std-regrid --only '^std-' > "$OUT/regrid.log" 2>&1
echo "run_grid exit $?"; tail -2 "$OUT/regrid.log"
ls -la "$OUT"
