#!/usr/bin/env bash
# What waits for an H100 (written 2026-12-02, session 18; no H100 was lent in sessions 13-18):
#  1. `iosim calibrate` on the H100 (scripts/gpu_device_run.sh's `calibrate` step): its
#     sm_pipes.step_jitter and sm_pipes.cta_priority go into hw_profiles/h100-sxm5-80gb.yaml with their
#     source (the H100's lookups miss without them: experiments/results/2026-12-01-h100-jitter-diagnosis);
#  2. the validation grid's FA2 backward and FA3 rows with the kernels of 2026-12-02 (FA3's O staged in
#     shared memory, convert_dq's consecutive float4s): then drop the two --stale-counters lines of
#     experiments/validation/h100/build.sh, list the new raw folder first there, rebuild the grid.
# On any other GPU it measures nothing.
#   OUT=DIR experiments/validation/h100/pending_run.sh BINS   (GPU machine)
# BINS: scripts/gpu_build.sh's pack with iosim-kernels, iosim and test_gpu_calibrate
#   (IOSIM_GPU_PACK="iosim-kernels iosim test_gpu_calibrate"; about 15 MB, which fits beside the tree).
# Here afterwards: unpack $OUT/grid-h100.tar.gz into experiments/results/<date>-h100-staged-stores-grid-raw,
# copy the calibrate profile's two sm_pipes keys, `bash experiments/validation/h100/build.sh`.
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $gpu"
case $gpu in
  *H100*) ;;
  *) echo "not an H100: nothing measured"; exit 0 ;;
esac
IOSIM_CALIBRATE_NAME=h100-sxm5-80gb scripts/gpu_device_run.sh "$1" calibrate 2>&1 | tail -16
b=/tmp/iosim-bins  # unpacked there by gpu_device_run.sh
TAR_TO=$OUT/grid-h100.tar.gz experiments/validation/run_grid.sh $b/iosim-kernels /tmp/h100-grid-raw --only 'fa2-bwd' | tail -2
TAR_TO=$OUT/grid-h100.tar.gz experiments/validation/run_grid.sh $b/iosim-kernels /tmp/h100-grid-raw \
  --grid experiments/validation/grid-fa3.txt | tail -2
ls -la "$OUT"
