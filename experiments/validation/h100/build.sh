#!/usr/bin/env bash
# Rebuilds h100/grid.csv, its summary and the README's accuracy block from the committed H100
# measurements: the grid measured on 2026-11-27 with the kernels of the H200 grid (the 2026-11-25
# folders measured earlier kernels; see experiments/results/2026-11-27-h100-validation-grid-raw/NOTE.md)
# and FA3's rows; the standard-attention configurations measured again after the row softmax's
# staging moved to two planes (2026-11-27-h100-softmax-planes-grid-raw), and again after the GEMM's
# multi-tile CTAs (2026-11-28-h100-std-multitile-grid-raw), and again after the N x N rows' 32-element
# pitch (2026-11-28-h100-std-pitch-grid-raw), and the 128 x 128 x 64 rows again after that GEMM stopped
# spilling (2026-11-28-h100-std-nospill-grid-raw), and the forward rows again after the row softmax's
# store loop fix (2026-11-28-h100-std-softmax-stores-grid-raw), and the backward rows again after the
# backward's (2026-11-28-h100-std-softmax-bwd-stores-grid-raw, read first).
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=experiments/results
exec experiments/validation/rebuild.sh h100 \
  $R/2026-11-28-h100-std-softmax-bwd-stores-grid-raw \
  $R/2026-11-28-h100-std-softmax-stores-grid-raw \
  $R/2026-11-28-h100-std-nospill-grid-raw \
  $R/2026-11-28-h100-std-pitch-grid-raw \
  $R/2026-11-28-h100-std-multitile-grid-raw \
  $R/2026-11-27-h100-softmax-planes-grid-raw \
  $R/2026-11-27-h100-validation-grid-raw \
  $R/2026-11-27-h100-validation-grid-fa3-raw
