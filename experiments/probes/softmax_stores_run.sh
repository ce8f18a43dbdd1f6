#!/usr/bin/env bash
# The device calls of 2026-11-28 (session 9) after the row softmax's 16-byte store loops got a trip count
# uniform over the row's threads (they wrote one sector in 16 twice where chunks % threads != 0): the
# standard GPU tests, compute-sanitizer on every standard configuration, and the validation grid's
# standard rows matching ONLY measured again (run_grid.sh --only ONLY; its archive lands in $OUT).
#   OUT=DIR experiments/probes/softmax_stores_run.sh BINS [ONLY]   (GPU machine; BINS: iosim-kernels and
#   the tests; ONLY: default '^std-fwd-', the forward's call; the backward's passed '^std-bwd-')
set -u
. "$(dirname "$0")/device_steps.sh"
b=/tmp/iosim-softmax-bins
standard_checks "$1" $b
experiments/validation/run_grid.sh $b/iosim-kernels /tmp/std-softmax --only "${2:-^std-fwd-}" > "$OUT/regrid.log" 2>&1
echo "run_grid exit $?"; tail -1 "$OUT/regrid.log"
