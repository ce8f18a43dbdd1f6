#!/usr/bin/env bash
# On the GPU machine: PyTorch's attention kernels (the flash backend: Dao's FlashAttention-2; the
# cuDNN backend) on the shapes of shapes.txt, counted by Nsight Compute (one pass each, the L2
# flushed before every kernel, as the validation grid measures ours) and timed with CUDA events
# (experiments/bench_attention.py). compare.py then sets iosim's predictions beside them, here.
#   experiments/third_party/run.sh OUT
# Writes OUT/device.txt, OUT/ncu-<name>-<backend>-<pass>.csv (+ .err) per shape and pass,
# OUT/bench.jsonl.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; ncu --version | tail -1; date -u;
  python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())"; } > "$out/device.txt" 2>&1
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,launch__grid_size,launch__block_size
grep -v '^#' "$here/shapes.txt" | while read -r name d n b h causal; do
  [ -n "$name" ] || continue
  flag=; [ "$causal" = 1 ] && flag=--causal
  for bp in flash:fwd flash:bwd cudnn:fwd; do
    backend=${bp%:*}; pass=${bp#*:}
    timeout 300 ncu --profile-from-start off --clock-control none --cache-control all --metrics "$metrics" \
      --csv --page raw --print-units base python3 "$here/torch_counters.py" --backend "$backend" --pass "$pass" \
      --head-dim "$d" --seq "$n" --batch "$b" --heads "$h" $flag \
      > "$out/ncu-$name-$backend-$pass.csv" 2> "$out/ncu-$name-$backend-$pass.err"
    echo "$name $backend $pass: exit $?"
  done
done
# Timing: each shape's d, N, B, H through bench_attention.py (its own shape loop takes tokens and hidden size).
grep -v '^#' "$here/shapes.txt" | while read -r name d n b h causal; do
  [ -n "$name" ] || continue
  python3 "$here/../bench_attention.py" --head-dims "$d" --seqs "$n" --tokens $((n * b)) --hidden $((h * d)) \
    --causal "$causal" --passes fwd,bwd --backends flash,cudnn --iters 30 --out "$out/bench.jsonl" > /dev/null 2>&1
  echo "$name bench: exit $?"
done
