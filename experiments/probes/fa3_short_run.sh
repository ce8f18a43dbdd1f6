#!/usr/bin/env bash
# The device call of 2026-11-28 (session 8): where an FA3 forward CTA's time goes when it has few key
# blocks (the model predicts short-N FA3 fast: experiments/validation/fa3-blind). Per-instruction
# counters (experiments/probes/source_counters.sh) and the CUDA-event time of FA3 d 128 and d 64 at
# N = 768 (6 key blocks per CTA), configurations in no grid, held-out or blind set; packed into
# $OUT/fa3short.tar.xz. On an H200 it also measures the blind check's H200 half
# (experiments/validation/fa3-blind/configs.txt, predictions committed in 1add85e).
#   OUT=DIR BINS=.../bins.tar.xz experiments/probes/fa3_short_run.sh   (GPU machine)
set -u
work=/tmp/fa3short
rm -rf $work /tmp/b; mkdir -p /tmp/b $work
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "${BINS:?}" /tmp/b
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $work/device.txt
date -u > $work/date.txt
configs=(
  "fa3-d128-n768-bh256|fa3_forward|--algo fa3 --pass fwd --batch 16 --heads 16 --seq 768 --head-dim 128"
  "fa3-d64-n768-bh256|fa3_forward|--algo fa3 --pass fwd --batch 16 --heads 16 --seq 768 --head-dim 64"
)
NO_SASS=1 experiments/probes/source_counters.sh /tmp/b/iosim-kernels $work "${configs[@]}"
for c in "${configs[@]}"; do
  IFS='|' read -r name regex flags <<< "$c"
  /tmp/b/iosim-kernels bench $flags --warmup 3 --iters 20 --json > $work/$name.bench.json 2> $work/$name.bench.err
done
rm -f $work/*.ncu-rep
tar -C $work -cf - . | xz -6 > $OUT/fa3short.tar.xz
case $gpu in
  *H200*) experiments/validation/run_grid.sh /tmp/b/iosim-kernels /tmp/fa3-blind-h200 \
            --grid experiments/validation/fa3-blind/configs.txt > $OUT/blind-h200.log 2>&1 ;;
esac
ls -la $OUT
