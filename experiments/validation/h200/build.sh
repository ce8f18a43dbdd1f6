#!/usr/bin/env bash
# Rebuilds h200/grid.csv, its summary and the README's accuracy block from the committed H200
# measurements: the grid and FA3's rows, both measured on 2026-11-27, and the standard-attention
# configurations measured again after the GEMM's multi-tile CTAs and the N x N rows' 32-element pitch
# (2026-11-28-h200-std-pitch-grid-raw, read first; the earlier 2026-11-27-h200-softmax-planes-grid-raw
# measured the kernels before both). The 4 rows with the 128 x 128 x 64 GEMM are stale: that GEMM stopped
# spilling after they were measured (the H100 measured them again: 2026-11-28-h100-std-nospill-grid-raw).
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=experiments/results
exec experiments/validation/rebuild.sh h200 \
  $R/2026-11-28-h200-std-pitch-grid-raw \
  $R/2026-11-27-h200-softmax-planes-grid-raw \
  $R/2026-11-27-h200-validation-grid-raw \
  $R/2026-11-27-h200-validation-grid-fa3-raw \
  --stale '^std-.*128x128x64:measured with the 128x128x64 GEMM before it stopped spilling (2026-11-28), not yet again on an H200'
