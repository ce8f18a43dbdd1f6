#!/usr/bin/env bash
# The H200 measurements that waited for an H200 (written 2026-11-28, session 8; run in session 9 as
# separate calls, see experiments/results/2026-11-28-h200-*): `iosim calibrate` with the store
# benchmark (scripts/device_calibrate.sh; its profile's sm_pipes.store_* go into the H200 profile), the
# validation grid's standard-attention rows with the multi-tile GEMM (run_grid.sh --only '^std-'), and
# the FA3 blind check's H200 half (experiments/validation/fa3-blind/configs.txt, predictions committed
# in 1add85e). On any other GPU it measures nothing.
#   OUT=DIR experiments/probes/h200_pending_run.sh CALIBRATE_BINS KERNELS_BINS   (GPU machine)
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $gpu"
case $gpu in
  *H200*) ;;
  *) echo "not an H200: nothing measured"; exit 0 ;;
esac
mkdir -p "$OUT/cal"
OUT=$OUT/cal bash scripts/device_calibrate.sh "$1" 2>&1 | tail -4
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/cal/device.txt"
date -u > "$OUT/cal/date.txt"
tar -C "$OUT" -czf "$OUT/cal.tar.gz" cal && rm -rf "$OUT/cal"
rm -rf /tmp/kb && mkdir -p /tmp/kb
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$2" /tmp/kb
experiments/validation/run_grid.sh /tmp/kb/iosim-kernels /tmp/std-regrid-h200 --only '^std-' > "$OUT/regrid-h200.log" 2>&1
tail -2 "$OUT/regrid-h200.log"
experiments/validation/run_grid.sh /tmp/kb/iosim-kernels /tmp/fa3-blind-h200 \
  --grid experiments/validation/fa3-blind/configs.txt > "$OUT/blind-h200.log" 2>&1
tail -3 "$OUT/blind-h200.log"
ls -la "$OUT"
