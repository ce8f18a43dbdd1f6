#!/usr/bin/env bash
# Runs our FA2 kernels (iosim-kernels bench) and PyTorch's SDPA backends
# (bench_attention.py) on the same shapes in the same run, on the GPU machine,
# and writes <outdir>/<date>-<gpu>-attention-bench.{md,json} plus the raw lines.
#   experiments/bench_attention.sh BIN OUTDIR [--quick]
#     BIN     the iosim-kernels executable (built with -DIOSIM_KERNEL_MENU=full or ci)
#     --quick d=64,128 at N=4096 only, non-causal and causal
# Shapes: d in {64, 128}, N in {2048, 4096, 8192}, batch*N = 16384, heads*d = 2048, fp16.
set -euo pipefail
bin=$1
outdir=$2
quick=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$outdir"
seqs="2048 4096 8192"
[ "$quick" = "--quick" ] && seqs="4096"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed -e 's/nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/-$//')
date=$(date -u +%Y-%m-%d)
ours=$outdir/ours.jsonl
torch_out=$outdir/torch.jsonl
: > "$ours"
: > "$torch_out"
for d in 64 128; do
  h=$((2048 / d))
  for n in $seqs; do
    b=$((16384 / n))
    for causal in "" "--causal"; do
      for pass in fwd bwd; do
        "$bin" bench --algo fa2 --pass $pass --batch $b --heads $h --seq $n --head-dim $d $causal --json \
          | tee -a "$ours"
      done
    done
  done
done
seq_csv=$(echo $seqs | tr ' ' ',')
python3 "$here/bench_attention.py" --seqs "$seq_csv" --out "$torch_out"
python3 "$here/bench_report.py" --ours "$ours" --torch "$torch_out" --gpu "$gpu" --date "$date" \
  --command "experiments/bench_attention.sh $bin $outdir${quick:+ $quick}" \
  --notes "Driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); our kernels: $("$bin" menu | grep -c 'd=') compiled instantiations." \
  --prefix "$outdir/${date}-${slug}-attention-bench"
