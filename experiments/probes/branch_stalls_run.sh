#!/usr/bin/env bash
# The device calls of 2026-11-27 (session 6): branch_probe.cu (built with the machine's nvcc, its SASS
# dumped) and stalls.sh on a calibration row of every kernel kind; everything packed into
# $OUT/branch-stalls.tar.gz (a call brings back only a few files).
#   OUT=DIR experiments/probes/branch_stalls_run.sh   (on the GPU machine, build-gpu-carry/bins.tar.xz carried)
set -u
work=/tmp/branch-stalls
rm -rf $work; mkdir -p /tmp/b $work/stalls $work/branch
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build-gpu-carry/bins.tar.xz /tmp/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $work/device.txt
date -u > $work/date.txt
nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/branch_probe.cu -o /tmp/branch_probe &&
  /tmp/branch_probe > $work/branch/branch.csv 2>&1
cuobjdump -sass /tmp/branch_probe > $work/branch/branch_probe.sass 2>&1
cat $work/branch/branch.csv
if [ -z "${SKIP_STALLS:-}" ]; then
experiments/probes/stalls.sh /tmp/b/iosim-kernels $work/stalls fa1-fwd-d64-n1024-bh128-64x64 fa1-fwd-d128-n512-bh256-128x64 \
  fa1-bwd-d64-n1024-bh128-64x64 fa1-bwd-d128-n512-bh256-64x128 fa2-fwd-d64-n1024-bh256-128x128 \
  fa2-fwd-d128-n512-bh512-128x64 fa2-bwd-d64-n1024-bh192-64x64 fa2-bwd-d128-n8192-bh16-64x128 \
  std-fwd-d64-n1024-bh96-128x128 std-fwd-d128-n4096-bh16-c-64x64 std-bwd-d64-n1024-bh128-128x128 \
  "fa3-fwd-d128-n4096-bh32=--algo fa3 --pass fwd --batch 2 --heads 16 --seq 4096 --head-dim 128" \
  "fa3-fwd-d64-n4096-bh32-c=--algo fa3 --pass fwd --batch 2 --heads 16 --seq 4096 --head-dim 64 --causal"
python3 experiments/probes/stalls_table.py $work/stalls > $work/stalls/table.md
fi
tar -C $work -czf $OUT/branch-stalls.tar.gz .
