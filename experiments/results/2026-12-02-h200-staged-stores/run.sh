#!/usr/bin/env bash
# The device call of 2026-12-02 (session 18): FA3's O staged through shared memory and FA2
# convert_dq's consecutive float4 loads, checked and measured on the GPU machine.
#   OUT=DIR experiments/results/2026-12-02-h200-staged-stores/run.sh   (carried: build-staged-carry/bins.tar.xz, scripts/gpu_build.sh's iosim-kernels, iosim, test_gpu_fa3, test_gpu_fa2, test_gpu_trace_bytes repacked alone: the whole pack no longer fits a call beside the tree; and fa2_rows.cu.o)
# 1. the GPU tests of both kernels and of the trace bytes (test_gpu_fa3, test_gpu_fa2, test_gpu_trace_bytes);
# 2. compute-sanitizer memcheck and racecheck on small FA3 forward and FA2 backward passes;
# 3. per-instruction counters (experiments/probes/source_counters.sh) of FA3 at the configurations of
#    2026-11-27-h200-source-counters and of convert_dq at 4 of the grid's (row block, d);
# 4. the validation grid's FA2 backward and FA3 configurations again (run_grid.sh --only).
# Everything lands in $OUT/staged.tar.gz (the grid parts in their own archives).
set -u
here=experiments/results/2026-12-02-h200-staged-stores
work=/tmp/staged
b=/tmp/b
rm -rf $work $b; mkdir -p $work $b
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build-staged-carry/bins.tar.xz $b
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $work/device.txt
date -u > $work/date.txt
git rev-parse HEAD > $work/commit.txt 2>/dev/null || true
# The row kernels' object (carried as build-staged-carry/fa2_rows.cu.o): SASS for experiments/probes/row_sass.py.
cuobjdump -sass build-staged-carry/fa2_rows.cu.o > $work/fa2_rows.sass 2> $work/cuobjdump.err
export IOSIM_KERNELS_CLI=$b/iosim-kernels IOSIM_CLI=$b/iosim PATH=$b:$PATH
t0=$(date +%s)
for t in test_gpu_fa3 test_gpu_fa2 test_gpu_trace_bytes; do
  $b/$t --log_level=test_suite --report_level=short > $work/$t.log 2>&1
  echo "$t: exit $? ($(tail -1 $work/$t.log)) [$(( $(date +%s) - t0 )) s]"
done
k=$b/iosim-kernels
for tool in memcheck racecheck; do
  for flags in "--algo fa3 --pass fwd --batch 1 --heads 2 --seq 1000 --head-dim 128 --causal" \
               "--algo fa3 --pass fwd --batch 1 --heads 2 --kv-heads 1 --seq-q 300 --seq-k 700 --head-dim 64" \
               "--algo fa2 --pass bwd --batch 1 --heads 2 --seq-q 300 --seq-k 700 --head-dim 64 --block-m 64 --block-n 64 --causal" \
               "--algo fa2 --pass bwd --batch 1 --heads 2 --seq 1000 --head-dim 128 --block-m 128 --block-n 64"; do
    compute-sanitizer --tool $tool --error-exitcode 9 $k bench $flags --warmup 0 --iters 1 > $work/san.tmp 2>&1
    echo "$tool exit $? : $flags : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $work/san.tmp | tail -1)" | tee -a $work/sanitize.txt
  done
done
echo "sanitize done [$(( $(date +%s) - t0 )) s]"
NO_SASS=1 experiments/probes/source_counters.sh $k $work/source \
  "fa3-d128-n4096-bh32|fa3_forward|--algo fa3 --pass fwd --batch 2 --heads 16 --seq 4096 --head-dim 128" \
  "fa3-d64-n4096-bh32-c|fa3_forward|--algo fa3 --pass fwd --batch 2 --heads 16 --seq 4096 --head-dim 64 --causal" \
  "cdq-d64-64|fa2_bwd_convert|--algo fa2 --pass bwd --batch 16 --heads 12 --seq 1024 --head-dim 64 --block-m 64 --block-n 64" \
  "cdq-d64-128|fa2_bwd_convert|--algo fa2 --pass bwd --batch 2 --heads 16 --seq 4096 --head-dim 64 --block-m 128 --block-n 128 --causal" \
  "cdq-d128-64|fa2_bwd_convert|--algo fa2 --pass bwd --batch 2 --heads 16 --seq 8192 --head-dim 128 --block-m 64 --block-n 128" \
  "cdq-d128-128|fa2_bwd_convert|--algo fa2 --pass bwd --batch 8 --heads 16 --seq 1024 --head-dim 128 --block-m 128 --block-n 128 --causal"
rm -f $work/source/*.ncu-rep
echo "source counters done [$(( $(date +%s) - t0 )) s]"
tar -C /tmp -cJf $OUT/staged.tar.xz staged
# The grid's FA2 backward and FA3 rows with these kernels.
TAR_TO=$OUT/grid-fa2bwd.tar.gz experiments/validation/run_grid.sh $b/iosim-kernels $work/grid-raw --only 'fa2-bwd' | tail -3
TAR_TO=$OUT/grid-fa3.tar.gz experiments/validation/run_grid.sh $b/iosim-kernels $work/grid-raw --grid experiments/validation/grid-fa3.txt | tail -3
echo "grid done [$(( $(date +%s) - t0 )) s]"
