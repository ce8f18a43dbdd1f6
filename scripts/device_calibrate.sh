#!/usr/bin/env bash
# On the GPU machine: `iosim calibrate` for the GPU found there, written as the
# shipped profile's name (h200-sxm-141gb, h100-sxm5-80gb; other GPUs: the
# name calibrate derives), plus its log, under $OUT.
#   scripts/device_calibrate.sh BINS
# BINS: build-gpu-carry/bins.tar.xz from scripts/gpu_build.sh (unpacked into
# /tmp/iosim-bins when not there yet).
set -uo pipefail
bins=$1
out=${OUT:-/tmp/iosim-out}
mkdir -p "$out"
if [ ! -x /tmp/iosim-bins/iosim ]; then
  mkdir -p /tmp/iosim-bins
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" /tmp/iosim-bins || exit 1
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in
  *H200*) name=h200-sxm-141gb ;;
  *H100*) name=h100-sxm5-80gb ;;
  *) name= ;;
esac
echo "calibrate on $gpu -> ${name:-<derived name>}"
t0=$(date +%s)
/tmp/iosim-bins/iosim calibrate --out "$out/${name:-calibrated}.yaml" ${name:+--name $name} > "$out/calibrate-${name:-gpu}.log" 2>&1
rc=$?
echo "calibrate exit $rc in $(( $(date +%s) - t0 )) s"
tail -5 "$out/calibrate-${name:-gpu}.log"
exit $rc
