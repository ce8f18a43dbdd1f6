#!/usr/bin/env bash
# Rebuilds h200/grid.csv, its summary and the README's accuracy block from the committed H200
# measurements: the grid and FA3's rows, both measured on 2026-11-27, and the standard-attention
# configurations measured again after the row softmax's staging moved to two planes
# (2026-11-27-h200-softmax-planes-grid-raw, read first). The standard-attention rows are stale since
# the GEMM kernel's multi-tile CTAs (2026-11-28): no H200 was lent to measure them again
# (experiments/probes/h200_pending_run.sh does), so they count in no metric until then.
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=experiments/results
exec experiments/validation/rebuild.sh h200 \
  $R/2026-11-27-h200-softmax-planes-grid-raw \
  $R/2026-11-27-h200-validation-grid-raw \
  $R/2026-11-27-h200-validation-grid-fa3-raw \
  --stale '^std-:measured with the standard GEMM before its multi-tile CTAs (2026-11-28), not yet again on an H200'
