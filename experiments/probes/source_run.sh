#!/usr/bin/env bash
# The device call of 2026-11-27 (session 7): per-instruction counters of FA3 forward (d 128 and
# 64; configurations outside the validation grid), the row softmax forward and FA2 backward at a
# one-stage d 128 tile (calibration rows); packed into $OUT/source.tar.xz (the .ncu-rep files, which ncu
# alone reads, into $OUT/reps.tar.gz; the 20 MB SASS listing stays on the machine: the source CSVs
# hold the SASS of each profiled kernel).
#   OUT=DIR experiments/probes/source_run.sh   (GPU machine, build-gpu-carry/bins.tar.xz carried)
set -u
work=/tmp/source
rm -rf $work /tmp/b; mkdir -p /tmp/b $work
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build-gpu-carry/bins.tar.xz /tmp/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $work/device.txt
date -u > $work/date.txt
experiments/probes/source_counters.sh /tmp/b/iosim-kernels $work \
  "fa3-d128-n4096-bh32|fa3_forward|--algo fa3 --pass fwd --batch 2 --heads 16 --seq 4096 --head-dim 128" \
  "fa3-d64-n4096-bh32-c|fa3_forward|--algo fa3 --pass fwd --batch 2 --heads 16 --seq 4096 --head-dim 64 --causal" \
  "std-softmax-d64-n1024-bh96|softmax_forward|--algo standard --pass fwd --batch 8 --heads 12 --seq 1024 --head-dim 64 --gemm-m 128 --gemm-n 128" \
  "fa2-bwd-d128-n1024-bh128-c-128x128|fa2_backward_kernel|--algo fa2 --pass bwd --batch 8 --heads 16 --seq 1024 --head-dim 128 --block-m 128 --block-n 128 --causal"
ls -la $work
xzcat $work/fa3-d128-n4096-bh32-source.csv.xz | head -c 1500
tar -C $work --exclude='*.ncu-rep' --exclude='kernels.sass.gz' -cf - . | xz -6 > $OUT/source.tar.xz
tar -C $work -czf $OUT/reps.tar.gz $(cd $work && ls *.ncu-rep)
