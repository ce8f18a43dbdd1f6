#!/usr/bin/env bash
# On the GPU machine: measure the Figure 2 points that our kernels can run (points.txt) with the
# real kernels.
#   experiments/fa_paper_fig2/measure.sh BINS OUTDIR [--part K/N] [--only REGEX]
# BINS: the iosim-kernels executable, a folder holding it, or scripts/gpu_build.sh's
#   build-gpu-carry/bins.tar.xz, built with the FULL menu (gpu_build.sh's default): the middle
#   panel's tiles are only in the full menu.
# The measuring is experiments/validation/run_grid.sh's, run on points.txt instead of the
# validation grid: per point, Nsight Compute (`ncu --clock-control none --cache-control all`, one
# launch of the pass, dram__bytes_read/write.sum and gpu__time_duration.sum among its metrics)
# into OUTDIR/<name>.csv, and the CUDA-event median of `iosim-kernels bench FLAGS --json` into
# OUTDIR/<name>.bench.json; device-part*.txt (GPU, clocks, date, binary), log-part*.txt, and
# OUTDIR packed into $OUT/<OUTDIR's name>-partKofN.tar.gz after every point. This script adds
# OUTDIR/measure.txt (its command, the date and points.txt's sha256).
# Env: BENCH_ITERS [10 here], BENCH_WARMUP [3], DRY_RUN=1 (print the commands; no GPU needed),
#      and run_grid.sh's others (SKIP_NCU, SKIP_BENCH, TAR_TO, CONFIG_TIMEOUT, REDO).
# Then, here: experiments/fa_paper_fig2/measured.py OUTDIR (writes measured-<gpu>.csv).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { sed -n '2,4p' "$0" >&2; exit 2; }
bins=$1
out=$2
shift 2
points=$here/points.txt
[ -f "$points" ] || { echo "measure: no points file $points" >&2; exit 2; }
export BENCH_ITERS=${BENCH_ITERS:-10}
if [ -z "${DRY_RUN:-}" ]; then
  mkdir -p "$out"
  {
    echo "command: $0 $bins $out $* (BENCH_ITERS=$BENCH_ITERS BENCH_WARMUP=${BENCH_WARMUP:-3})"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "points: $points ($(sha256sum "$points" | cut -c1-16))"
  } >> "$out/measure.txt"
fi
exec "$here/../validation/run_grid.sh" "$bins" "$out" --grid "$points" "$@"
