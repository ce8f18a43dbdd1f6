#!/usr/bin/env bash
# The device call of 2026-12-02 (session 18, third): FA3 with its O staged through shared memory, beside
# our FA2 and PyTorch's cuDNN backend in the same call (issue 11's targets), as 2026-11-27-h200-fa3 did.
#   OUT=DIR experiments/results/2026-12-02-h200-fa3/run.sh   (carried: build-staged-carry/bins.tar.xz,
#   iosim-fa3-bench of scripts/gpu_build.sh's full-menu build of this tree, packed alone)
set -u
b=/tmp/b
rm -rf $b; mkdir -p $b
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build-staged-carry/bins.tar.xz $b
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u; echo "## iosim-fa3-bench 20"; \
  $b/iosim-fa3-bench 20; } > $OUT/bench.txt 2>&1
echo "fa3 bench exit $?"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; date -u; echo "## sdpa_bench.py 20"; \
  python3 experiments/results/2026-11-25-h100-fa3/sdpa_bench.py 20; } > $OUT/sdpa-cudnn.txt 2>&1
echo "sdpa exit $?"
tail -3 $OUT/bench.txt
