#!/usr/bin/env bash
# On the GPU machine: Nsight Compute counters and bench medians of the article's configurations.
#   experiments/hbm_article/measure.sh BINS OUTDIR
# BINS as for experiments/validation/run_grid.sh, which this runs on grid.txt beside it: the
# iosim-kernels executable, a folder holding it, or scripts/gpu_build.sh's
# build-gpu-carry/bins.tar.xz (the full menu has every tile of grid.txt; the CI menu lacks FA2
# 128 x 128, whose line then fails on its own). OUTDIR receives, per configuration, NAME.csv
# (ncu, --cache-control all) and NAME.bench.json, plus device-name.txt and the part's log; with
# $OUT set (the device machine) it is also packed into $OUT/<OUTDIR's name>-part1of1.tar.gz.
# Then, here: experiments/hbm_article/build.sh BUILD_DIR OUTDIR (commit OUTDIR under
# experiments/results/ first). Env: as run_grid.sh (DRY_RUN=1 prints the commands).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { sed -n '2,3p' "$0" >&2; exit 2; }
exec "$here/../validation/run_grid.sh" "$1" "$2" --grid "$here/grid.txt"
