#!/usr/bin/env bash
# The device call of 2026-11-28 (session 8): where an FA3 forward CTA's time goes when it has few key
# blocks (the model predicts short-N FA3 fast: experiments/validation/fa3-blind). Per-instruction
# counters (experiments/probes/source_counters.sh) and the CUDA-event time of FA3 d 128 and d 64 at
# N = 768 (6 key blocks per CTA), configurations in no grid, held-out or blind set; packed into
# $OUT/fa3short.tar.xz. (As it ran, it also measured the blind check's H200 half on an H200; none
# came, and that part is now experiments/probes/h200_pending_run.sh's.)
#   OUT=DIR BINS=.../bins.tar.xz experiments/probes/fa3_short_run.sh   (GPU machine)
set -u
configs=(
  "fa3-d128-n768-bh256|fa3_forward|--algo fa3 --pass fwd --batch 16 --heads 16 --seq 768 --head-dim 128"
  "fa3-d64-n768-bh256|fa3_forward|--algo fa3 --pass fwd --batch 16 --heads 16 --seq 768 --head-dim 64"
)
"$(dirname "$0")/source_bench_run.sh" fa3short.tar.xz "${configs[@]}"
ls -la $OUT
