#!/usr/bin/env bash
# Rebuilds h200/grid.csv, its summary and the README's accuracy block from the committed H200
# measurements: the grid and FA3's rows, both measured on 2026-11-27, and the standard-attention
# configurations measured again with 2026-11-28's kernels (multi-tile GEMM, padded N x N rows, the unspilled
# 128 x 128 x 64 GEMM, the row softmax's uniform store loops: 2026-11-28-h200-std-final-grid-raw, read first;
# the earlier standard folders measured the kernels before these changes), and FA2's backward and FA3's
# configurations measured again on 2026-12-02 after FA3's O went through shared memory and convert_dq's
# loads became consecutive float4s (2026-12-02-h200-staged-stores-grid-raw, read first).
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=experiments/results
exec experiments/validation/rebuild.sh h200 \
  $R/2026-12-02-h200-staged-stores-grid-raw \
  $R/2026-11-28-h200-std-final-grid-raw \
  $R/2026-11-28-h200-std-pitch-grid-raw \
  $R/2026-11-27-h200-softmax-planes-grid-raw \
  $R/2026-11-27-h200-validation-grid-raw \
  $R/2026-11-27-h200-validation-grid-fa3-raw
