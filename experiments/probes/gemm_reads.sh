#!/usr/bin/env bash
# On the GPU machine: why do the standard GEMMs deliver 1.5x the trace's bytes over the L2->SM
# crossbar (l1tex__m_xbar2l1tex_read_bytes) while FA2, with the same 16-byte cp.async.cg, delivers 1.00x?
# Collects Nsight Compute's full metric set (raw page, every metric) for one GEMM launch of three
# tilings and for FA2's forward kernel on the same problem.
#   experiments/probes/gemm_reads.sh BINS OUTDIR     (BINS: build-gpu-carry/bins.tar.xz or a folder)
set -uo pipefail
bins=$1; out=$2
mkdir -p "$out"
if [ -f "$bins" ]; then
  mkdir -p /tmp/probe-bins
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" /tmp/probe-bins
  bin=/tmp/probe-bins/iosim-kernels
else
  bin=$bins/iosim-kernels
fi
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; date -u; } > "$out/device.txt"
shape="--batch 1 --heads 8 --seq 1024 --head-dim 64"
run() {  # name regex skip flags...
  local name=$1 regex=$2 skip=$3; shift 3
  timeout 200 ncu --clock-control none --cache-control all --set full --csv --page raw --print-units base \
    -k "regex:$regex" --launch-skip "$skip" --launch-count 1 \
    "$bin" bench "$@" --warmup 0 --iters 1 --l2-multiple 0.001 > "$out/$name.csv" 2> "$out/$name.err"
  echo "$name rc=$?" >> "$out/log.txt"
}
run gemm-qk-128x128x32 gemm_kernel 0 --algo standard --pass fwd $shape --gemm-m 128 --gemm-n 128
run gemm-qk-128x128x64 gemm_kernel 0 --algo standard --pass fwd $shape --gemm-m 128 --gemm-n 128 --gemm-k 64
run gemm-pv-128x128x32 gemm_kernel 1 --algo standard --pass fwd $shape --gemm-m 128 --gemm-n 128
run fa2-fwd-128x128 fa2_forward 0 --algo fa2 --pass fwd $shape --block-m 128 --block-n 128
