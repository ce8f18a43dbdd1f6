#!/usr/bin/env bash
# The device call of 2026-11-28 (session 9) after padding the N x N intermediates' rows to 32 elements
# (sim/schedule/score_layout.h): the standard GPU tests, compute-sanitizer on every standard and
# standard-eager configuration, then the validation grid's standard-attention rows measured again
# (experiments/validation/run_grid.sh --only '^std-'; its archive lands in $OUT).
#   OUT=DIR experiments/probes/pitch_run.sh BINS   (GPU machine; BINS: iosim-kernels and the tests, packed)
set -u
. "$(dirname "$0")/device_steps.sh"
b=/tmp/iosim-pitch-bins
standard_checks "$1" $b
experiments/validation/run_grid.sh $b/iosim-kernels /tmp/std-regrid --only '^std-' > "$OUT/regrid.log" 2>&1
echo "run_grid exit $?"; tail -2 "$OUT/regrid.log"
ls -la "$OUT"
