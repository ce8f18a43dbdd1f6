#!/usr/bin/env bash
# On the GPU machine: the wgmma GEMM's checks in one call - its GPU test, compute-sanitizer (memcheck,
# racecheck) on one causal GQA forward+backward, Nsight Compute's crossbar bytes of one ragged pass (the
# command of experiments/results/2026-11-28-h200-wgmma-gemm-bytes), and the standard bench with it.
#   experiments/probes/wgmma_gemm_run.sh BINS.tar.xz OUT      (BINS: scripts/gpu_build.sh's pack)
set -u
bins=$1
out=$2
B=/tmp/wgmma-bins
mkdir -p "$B" "$out"
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" "$B" || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/device.txt"
date -u > "$out/date.txt"
K=$B/iosim-kernels
G="--gemm-m 128 --gemm-n 128 --gemm-k 64 --gemm-impl wgmma"
timeout 300 "$B/test_gpu_standard_wgmma" --log_level=message --report_level=short > "$out/test_gpu_standard_wgmma.log" 2>&1
echo "test_gpu_standard_wgmma exit $?"; tail -3 "$out/test_gpu_standard_wgmma.log"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 "$K" check --algo standard --pass fwdbwd --batch 1 \
    --heads 4 --kv-heads 2 --seq-q 200 --seq-k 333 --head-dim 64 --causal $G > "$out/sanitize-$tool.txt" 2>&1
  echo "$tool exit $?"; tail -1 "$out/sanitize-$tool.txt"
done
timeout 200 ncu --clock-control none --cache-control all --metrics \
  l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum \
  --csv --page raw --print-units base "$K" check --algo standard --pass fwdbwd --batch 2 --heads 4 --seq 1000 \
  --head-dim 64 --layout bhsd $G > "$out/ncu.csv" 2> "$out/ncu.err"
echo "ncu exit $?"
ncu --version | tail -1 > "$out/ncu-version.txt"
IOSIM_STD_GEMM_IMPL=wgmma timeout 420 experiments/bench_attention.sh "$K" "$out/bench" --standard > "$out/stdbench.log" 2>&1
echo "stdbench exit $?"
sed -n '/^## GEMMs/,/^## Row softmax/p' "$out"/bench/*standard-bench.md
