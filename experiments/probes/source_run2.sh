#!/usr/bin/env bash
# The second per-instruction device call of 2026-11-27 (session 7): FA1 forward at d 128 (64 x 128 and
# 64 x 64, predicted slow) and d 64 (64 x 64, predicted right), FA2 backward at d 128 128 x 64 (one
# Q/dO stage, predicted fast): calibration rows of the validation grid. Packed into $OUT/source2.tar.xz.
#   OUT=DIR BINS=... experiments/probes/source_run2.sh   (GPU machine; BINS holds a full-menu iosim-kernels)
set -u
work=/tmp/source2
rm -rf $work /tmp/b; mkdir -p /tmp/b $work
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" ${BINS:-build-gpu-carry/bins.tar.xz} /tmp/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $work/device.txt
date -u > $work/date.txt
NO_SASS=1 experiments/probes/source_counters.sh /tmp/b/iosim-kernels $work \
  "fa1-fwd-d128-n4096-bh128-s50-64x128|fa1_forward|--algo fa1 --pass fwd --batch 2 --heads 64 --seq 4096 --head-dim 128 --block-m 64 --block-n 128 --block-density 0.5 --mask-seed 1" \
  "fa1-fwd-d128-n1024x4096-bh128-c-64x64|fa1_forward|--algo fa1 --pass fwd --batch 8 --heads 16 --seq-q 1024 --seq-k 4096 --head-dim 128 --block-m 64 --block-n 64 --causal" \
  "fa1-fwd-d64-n1024-bh128-64x64|fa1_forward|--algo fa1 --pass fwd --batch 8 --heads 16 --seq 1024 --head-dim 64 --block-m 64 --block-n 64" \
  "fa2-bwd-d128-n4096-bh16-s50-128x64|fa2_backward_kernel|--algo fa2 --pass bwd --batch 2 --heads 8 --seq 4096 --head-dim 128 --block-m 128 --block-n 64 --block-density 0.5 --mask-seed 1"
rm -f $work/*.ncu-rep
tar -C $work -cf - . | xz -6 > $OUT/source2.tar.xz
ls -la $OUT
