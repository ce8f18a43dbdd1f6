#!/usr/bin/env bash
# On the GPU machine (sm_90): the checks of the plan-named wgmma GEMM in one call, and the TMA latency probe.
#   experiments/probes/wgmma_gemm_check_run.sh BINS.tar.xz TMA_PROBE OUT
# BINS: scripts/gpu_build.sh's pack with iosim-kernels, iosim, test_gpu_standard_wgmma,
# test_gpu_trace_bytes; TMA_PROBE: experiments/probes/tma_latency_probe.cu built
# (its header). Writes OUT/{device,date}.txt, the tests' logs, compute-sanitizer's (memcheck, racecheck)
# on one causal GQA ragged forward+backward with --gemm-impl wgmma, and OUT/tma.csv.
set -u
bins=$1
probe=$2
out=$3
B=/tmp/wgmma-check-bins
mkdir -p "$B" "$out"
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" "$B" || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/device.txt"
date -u > "$out/date.txt"
"$probe" > "$out/tma.csv" 2> "$out/tma.err"
echo "tma probe exit $?"
export IOSIM_KERNELS_CLI=$B/iosim-kernels IOSIM_CLI=$B/iosim
for t in test_gpu_standard_wgmma test_gpu_trace_bytes; do
  timeout 240 "$B/$t" --log_level=message --report_level=short > "$out/$t.log" 2>&1
  echo "$t exit $?"; tail -2 "$out/$t.log"
done
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 "$B/iosim-kernels" check --algo standard --pass fwdbwd \
    --batch 1 --heads 4 --kv-heads 2 --seq-q 200 --seq-k 336 --head-dim 64 --causal --gemm-impl wgmma \
    > "$out/sanitize-$tool.txt" 2>&1
  echo "$tool exit $?"; tail -1 "$out/sanitize-$tool.txt"
done
