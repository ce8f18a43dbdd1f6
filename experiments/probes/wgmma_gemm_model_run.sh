#!/usr/bin/env bash
# On the GPU machine (sm_90): what the simulator's model of the wgmma GEMM is built and judged on, in one
# call:
#   1. the SASS of kernels/standard/sm90a's wgmma_gemm_kernel instantiations (cuobjdump), gzipped;
#   2. Nsight Compute's per-instruction counters (SourceCounters) of one launch of each operand
#      orientation at d 64 and 128: S = Q K^T (A, B k-contiguous), O = P V (B n-contiguous),
#      dV = P^T dO (A m-contiguous, B n-contiguous);
#   3. the wgmma grid (experiments/validation/grid-wgmma.txt) by run_grid.sh.
#   experiments/probes/wgmma_gemm_model_run.sh BINS.tar.xz OUT      (SKIP_GRID=1: 1 and 2 only)
# Read with experiments/probes/source_table.py NAME-source.csv.xz; the grid with
# experiments/validation/build_csv.py.
set -u
bins=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
B=/tmp/wgmma-model-bins
mkdir -p "$B" "$out/source"
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" "$B" || exit 1
K=$B/iosim-kernels
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt"
date -u > "$out/date.txt"
ncu --version | tail -1 > "$out/ncu-version.txt"
cuobjdump -sass "$K" 2> "$out/source/cuobjdump.err" |
  awk '/Function : /{keep = ($0 ~ /wgmma_gemm_kernel/)} keep' | gzip > "$out/source/wgmma_gemm.sass.gz"
G="--gemm-m 128 --gemm-n 128 --gemm-k 64 --gemm-impl wgmma"
P="--batch 4 --heads 16 --seq 2048"
# NAME|PASS|HEAD_DIM|LAUNCH_SKIP|PROBLEM: LAUNCH_SKIP counts the wgmma kernels launched before, in
# order (a backward bench runs S = Q K^T first for P, then dV, dP, dQ, dK). CASES (cases separated
# by ';') overrides the list. (The first run, 2026-12-02 04:08 UTC, profiled "dv" at skip 2: that
# launch is dP, not dV.)
cases=${CASES:-"qk-d64|fwd|64|0|$P;pv-d64|fwd|64|1|$P;qk-d128|fwd|128|0|$P;pv-d128|fwd|128|1|$P"}
IFS=';' read -r -a list <<< "$cases"
for c in "${list[@]}"; do
  IFS='|' read -r name pass d skip problem <<< "$c"
  flags="--algo standard --pass $pass $problem --head-dim $d $G"
  echo "$name: $flags (wgmma launch $skip)" >> "$out/source/commands.txt"
  timeout 120 ncu --clock-control none --cache-control all --kernel-name "regex:wgmma_gemm_kernel" \
    --launch-skip "$skip" --launch-count 1 --section SourceCounters --section WarpStateStats \
    --section SchedulerStats --import-source no -f -o "$out/source/$name" "$K" bench $flags --warmup 0 --iters 1 \
    > "$out/source/$name.log" 2>&1 || { echo "ncu failed: $name"; continue; }
  ncu --import "$out/source/$name.ncu-rep" --page source --print-source sass --csv > "$out/source/$name-source.csv" \
    2> "$out/source/$name-source.err"
  xz -9 -f "$out/source/$name-source.csv"
  ncu --import "$out/source/$name.ncu-rep" --page raw --csv --print-units base > "$out/source/$name-raw.csv" \
    2>> "$out/source/$name-source.err"
  rm -f "$out/source/$name.ncu-rep"
  echo "source $name done"
done
(cd "$out" && tar czf "$OUT/${TAR_NAME:-source}.tar.gz" source device.txt date.txt ncu-version.txt)
[ -n "${SKIP_GRID:-}" ] && exit 0
"$here/../validation/run_grid.sh" "$bins" /tmp/grid-wgmma --grid "$here/../validation/grid-wgmma.txt"
echo "grid exit $?"
tail -25 /tmp/grid-wgmma/log-part1of1.txt
