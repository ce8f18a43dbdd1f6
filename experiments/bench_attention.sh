#!/usr/bin/env bash
# Runs our FA2 kernels (iosim-kernels bench) and PyTorch's SDPA backends
# (bench_attention.py) on the same shapes in the same run, on the GPU machine,
# and writes <outdir>/<date>-<gpu>-attention-bench.{md,json} plus the raw lines.
#   experiments/bench_attention.sh BIN OUTDIR [--quick|--standard]
#     BIN     the iosim-kernels executable (built with -DIOSIM_KERNEL_MENU=full or ci)
#     --quick d=64,128 at N=4096 only, non-causal and causal
# Shapes: d in {64, 128}, N in {2048, 4096, 8192}, batch*N = 16384, heads*d = 2048, fp16.
#
#     --standard  standard attention instead (issue 11), a few minutes: per shape our
#       forward and forward+backward with per-kernel times (std and eager variants),
#       cuBLAS on the same GEMMs (iosim-peer gemm, beside BIN or $IOSIM_PEER), eager
#       PyTorch (bench_standard.py), and once the DRAM copy bandwidth (iosim-peer copy);
#       writes <outdir>/<date>-<gpu>-standard-bench.{md,json}.
#       Shapes (fp16, BHSD): GPT-2 medium B=16 and 64, H=16, N=1024, d=64; B=2, H=16, N=4096, d=128.
#       Our GEMMs run with the 128x128x64 tile (IOSIM_STD_GEMM_TILE="M N K" picks another; it must be
#       compiled, so BIN needs the full menu for this one): the fastest of the full menu's five tiles
#       on every product of these shapes on the H100 (experiments/results/2026-11-25-h100-gemm-tiles).
#       IOSIM_STD_GEMM_IMPL=mma|wgmma picks the GEMM kernel (iosim-kernels --gemm-impl; default mma,
#       the mma.sync kernel; wgmma: the Hopper wgmma + TMA kernel, tile 128x128x64 only).
set -euo pipefail
bin=$1
outdir=$2
quick=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$outdir"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed -e 's/nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/-$//')
date=$(date -u +%Y-%m-%d)

if [ "$quick" = "--standard" ]; then
  peer=${IOSIM_PEER:-$(dirname "$bin")/iosim-peer}
  # cuBLAS: the CUDA Toolkit's when the loader finds one, else the one PyTorch's wheels ship.
  if [ -z "${IOSIM_CUBLAS:-}" ] && ! { ldconfig -p 2>/dev/null || true; } | grep -E 'libcublas\.so\.1[23] ' > /dev/null &&
     [ ! -e /usr/local/cuda/lib64/libcublas.so ]; then
    torch_cublas=$(python3 -c "import glob, os, site; print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(os.path.join(d, 'nvidia', '**', 'libcublas.so.*'), recursive=True))), ''))" || true)
    [ -n "$torch_cublas" ] && export IOSIM_CUBLAS=$torch_cublas
  fi
  shapes="16x16x1024x64 64x16x1024x64 2x16x4096x128"
  timing="--warmup 2 --iters 10"
  ours=$outdir/standard-ours.jsonl
  peer_out=$outdir/standard-peer.jsonl
  torch_out=$outdir/standard-torch.jsonl
  : > "$ours"
  : > "$peer_out"
  : > "$torch_out"
  # A failing step is reported and the rest still runs: the report shows what was measured.
  "$peer" copy $timing >> "$peer_out" || echo "iosim-peer copy failed" >&2
  for shape in $shapes; do
    IFS=x read -r b h n d <<< "$shape"
    problem="--batch $b --heads $h --seq $n --head-dim $d --layout bhsd"
    read -r tm tn tk <<< "${IOSIM_STD_GEMM_TILE:-128 128 64}"
    impl=${IOSIM_STD_GEMM_IMPL:-mma}
    for algo in standard standard-eager; do
      for pass in fwd fwdbwd; do
        "$bin" bench --algo $algo --pass $pass $problem --gemm-m "$tm" --gemm-n "$tn" --gemm-k "$tk" --gemm-impl "$impl" --per-kernel \
          $timing --json >> "$ours" ||
          echo "iosim-kernels bench $algo $pass $shape failed" >&2
      done
    done
    "$peer" gemm --algo standard --pass fwdbwd $problem $timing >> "$peer_out" || echo "iosim-peer gemm $shape failed" >&2
  done
  python3 "$here/bench_standard.py" --shapes "$(echo $shapes | tr ' ' ',')" --out "$torch_out" ||
    echo "bench_standard.py failed" >&2
  python3 "$here/bench_report.py" --standard --ours "$ours" --peer "$peer_out" --torch "$torch_out" --gpu "$gpu" \
    --date "$date" --command "IOSIM_STD_GEMM_TILE='$tm $tn $tk' IOSIM_STD_GEMM_IMPL=$impl experiments/bench_attention.sh $bin $outdir --standard" \
    --notes "Driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)." \
    --prefix "$outdir/${date}-${slug}-standard-bench"
  exit 0
fi

seqs="2048 4096 8192"
[ "$quick" = "--quick" ] && seqs="4096"
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
