#!/usr/bin/env bash
# On the GPU machine: `iosim calibrate` for the GPU found there, written as the
# shipped profile's name (h200-sxm-141gb, h100-sxm5-80gb; other GPUs: the
# name calibrate derives), plus its log, then the GPU test of the
# microbenchmarks (test_gpu_calibrate), all under $OUT.
#   scripts/device_calibrate.sh BINS
# BINS: build-gpu-carry/bins.tar.xz from scripts/gpu_build.sh, unpacked into
# /tmp/iosim-bins every time (a warm machine may hold an older build there).
set -uo pipefail
bins=$1
out=${OUT:-/tmp/iosim-out}
bindir=/tmp/iosim-bins
mkdir -p "$out" "$bindir"
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" "$bindir" || exit 1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in
  *H200*) name=h200-sxm-141gb ;;
  *H100*) name=h100-sxm5-80gb ;;
  *) name= ;;
esac
echo "calibrate on $gpu -> ${name:-<derived name>}"
log=$out/calibrate-${name:-gpu}.log
t0=$(date +%s)
"$bindir/iosim" calibrate --out "$out/${name:-calibrated}.yaml" ${name:+--name $name} > "$log" 2>&1
rc=$?
echo "calibrate exit $rc in $(( $(date +%s) - t0 )) s"
tail -8 "$log"
if [ $rc -eq 134 ]; then
  # An abort (the first H100 run died in free() at exit): once more with glibc's heap checks, which stop
  # at the first corrupted chunk, after the log line of the step that corrupted it. glibc >= 2.34 keeps
  # them in libc_malloc_debug.so.
  debug=$(ls /lib/x86_64-linux-gnu/libc_malloc_debug.so.0 /usr/lib64/libc_malloc_debug.so.0 2>/dev/null | head -1)
  MALLOC_CHECK_=3 LD_PRELOAD=$debug "$bindir/iosim" calibrate --out "$out/heapcheck.yaml" ${name:+--name $name} \
    > "$out/calibrate-heapcheck.log" 2>&1
  echo "with heap checks (${debug:-MALLOC_CHECK_ only}): exit $?"
  tail -4 "$out/calibrate-heapcheck.log"
fi
IOSIM_CLI=$bindir/iosim "$bindir/test_gpu_calibrate" --log_level=message --report_level=short \
  > "$out/test_gpu_calibrate.log" 2>&1
echo "test_gpu_calibrate: exit $? ($(tail -1 "$out/test_gpu_calibrate.log"))"
exit $rc
