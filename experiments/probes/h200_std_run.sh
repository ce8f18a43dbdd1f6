#!/usr/bin/env bash
# The standard-attention measurements still owed on an H200 (2026-11-28, session 9), with the kernels of
# 2026-11-28's fixes (multi-tile GEMM, padded N x N rows, the 128 x 128 x 64 GEMM without its spill, the
# row softmax's uniform store loops): the standard bench against cuBLAS and eager PyTorch, the grid's 20
# standard rows, and Figure 2's two standard-eager points. On any other GPU it measures nothing.
#   OUT=DIR experiments/probes/h200_std_run.sh BINS   (GPU machine; BINS: iosim-kernels and iosim-peer)
set -u
. "$(dirname "$0")/device_steps.sh"
b=/tmp/iosim-h200std-bins
case $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) in
  *H200*) ;;
  *) echo "not an H200: nothing measured"; exit 0 ;;
esac
unpack_bins "$1" $b
record_device
experiments/bench_attention.sh $b/iosim-kernels "$OUT/bench" --standard > "$OUT/bench.log" 2>&1
echo "bench exit $?"; grep -E "Targets met" "$OUT"/bench/*.md
experiments/validation/run_grid.sh $b/iosim-kernels /tmp/std-h200 --only '^std-' > "$OUT/regrid.log" 2>&1
echo "run_grid exit $?"; tail -1 "$OUT/regrid.log"
experiments/fa_paper_fig2/measure.sh $b/iosim-kernels /tmp/fig2-eager-h200 --only '^eager-' > "$OUT/fig2.log" 2>&1
echo "fig2 exit $?"; tail -1 "$OUT/fig2.log"
