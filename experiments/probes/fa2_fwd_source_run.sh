#!/usr/bin/env bash
# The device call of 2026-11-28 (session 8): per-instruction counters of FA2 forward at the tiles the
# model predicts slow (d 128 128 x 128, causal rows 1.13-1.18; d 64 256 x 64, 1.22), non-causal, at
# configurations in no grid, held-out or blind set; packed into $OUT/fa2fwd.tar.xz.
#   OUT=DIR BINS=.../bins.tar.xz experiments/probes/fa2_fwd_source_run.sh   (GPU machine; full menu)
set -u
configs=(
  "fa2-fwd-d128-n3072-bh32-128x128|fa2_forward|--algo fa2 --pass fwd --batch 2 --heads 16 --seq 3072 --head-dim 128 --block-m 128 --block-n 128"
  "fa2-fwd-d64-n3072-bh32-256x64|fa2_forward|--algo fa2 --pass fwd --batch 2 --heads 16 --seq 3072 --head-dim 64 --block-m 256 --block-n 64"
)
"$(dirname "$0")/source_bench_run.sh" fa2fwd.tar.xz "${configs[@]}"
ls -la $OUT
