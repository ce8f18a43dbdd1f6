#!/usr/bin/env bash
# The device calls of 2026-11-27 (session 7) after the row softmax's staging moved to two planes
# (kernels/standard/standard_attention.cu, softmax_row_vec16): the standard kernels' GPU tests,
# compute-sanitizer memcheck and racecheck on the 16-byte path, the validation grid's standard-attention
# configurations measured again (experiments/validation/run_grid.sh --only '^std-'), and the
# shared-memory wavefronts of the softmax (source_counters.sh); packed into $OUT/softmax-planes-GPU.tar.gz.
#   OUT=DIR GPU=h200|h100 experiments/probes/softmax_planes_run.sh   (BINS, default build-gpu-carry/bins.tar.xz, carried)
set -u
gpu=${GPU:-h200}
work=/tmp/softmax-planes-$gpu
rm -rf $work /tmp/b; mkdir -p /tmp/b $work
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" ${BINS:-build-gpu-carry/bins.tar.xz} /tmp/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $work/device.txt
date -u > $work/date.txt
for t in test_gpu_standard_fa1 test_gpu_standard_eager; do
  /tmp/b/$t --log_level=message --report_level=short > $work/$t.log 2>&1
  echo "$t: exit $? ($(tail -1 $work/$t.log))"
done
vec="--algo standard --pass fwd --batch 1 --heads 2 --kv-heads 1 --seq-q 200 --seq-k 264 --causal"
for tool in memcheck racecheck; do
  for dt in fp16 bf16; do
    compute-sanitizer --tool $tool --error-exitcode 9 /tmp/b/iosim-kernels check $vec --head-dim 64 --dtype $dt \
      > $work/sanitize-$tool-$dt.log 2>&1
    echo "sanitize $tool $dt: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $work/sanitize-$tool-$dt.log | tail -1))"
  done
done
if [ -z "${SKIP_SOURCE:-}" ]; then
  NO_SASS=1 experiments/probes/source_counters.sh /tmp/b/iosim-kernels $work/source \
    "std-softmax-d64-n1024-bh96|softmax_forward|--algo standard --pass fwd --batch 8 --heads 12 --seq 1024 --head-dim 64 --gemm-m 128 --gemm-n 128"
  rm -f $work/source/*.ncu-rep
fi
TAR_TO=$OUT/grid-$gpu-std.tar.gz experiments/validation/run_grid.sh /tmp/b/iosim-kernels $work/grid-$gpu-std --only '^std-' \
  > $work/grid.log 2>&1
tail -3 $work/grid.log
tar -C $work --exclude="grid-$gpu-std" -czf $OUT/softmax-planes-$gpu.tar.gz .
ls -la $OUT
