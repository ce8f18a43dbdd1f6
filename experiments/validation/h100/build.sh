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
# FA3's O stores and FA2 convert_dq's loads changed on 2026-12-02 (through shared memory; consecutive
# float4s) and no H100 has measured them since: their SM<->L2 bytes, lookups and instruction counts are
# left out (--stale-counters); their time and DRAM bytes stay, as the H200 measured the change to move
# neither (kernel time after/before 0.995 and 1.002 median, DRAM bytes 0.98-1.00:
# experiments/results/2026-12-02-h200-staged-stores/README.md).
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=experiments/results
exec experiments/validation/rebuild.sh h100 \
  --stale-counters " fa3_fwd$:O stored through shared memory since 2026-12-02, not measured on an H100 since" \
  --stale-counters " fa2_bwd_convert_dq$:consecutive float4 loads since 2026-12-02, not measured on an H100 since" \
  $R/2026-11-28-h100-std-softmax-bwd-stores-grid-raw \
  $R/2026-11-28-h100-std-softmax-stores-grid-raw \
  $R/2026-11-28-h100-std-nospill-grid-raw \
  $R/2026-11-28-h100-std-pitch-grid-raw \
  $R/2026-11-28-h100-std-multitile-grid-raw \
  $R/2026-11-27-h100-softmax-planes-grid-raw \
  $R/2026-11-27-h100-validation-grid-raw \
  $R/2026-11-27-h100-validation-grid-fa3-raw
