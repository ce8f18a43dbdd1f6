#!/usr/bin/env bash
# On the GPU machine: the step-jitter probe's three runs as recorded for the H200
# (experiments/results/2026-11-28-h200-step-jitter-probe): the default configurations
# (jitter.csv: sm_pipes.step_jitter is the 2-CTA rows' step sd / mean) and the rank runs
# (ranks.csv, ranks2.csv: sm_pipes.cta_priority is printed by
# `experiments/probes/step_jitter_table.py ranks.csv --fit ranks2.csv`).
# Usage: experiments/probes/step_jitter_run.sh PROBE_BINARY OUT
#   (build here: nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90
#    experiments/probes/step_jitter_probe.cu -o build-probe-carry/step_jitter_probe)
set -euo pipefail
probe=$1
out=$2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/device.txt"
date -u > "$out/date.txt"
"$probe" > "$out/jitter.csv" 2> "$out/jitter.err"
"$probe" 1:16:64:8:160 2:16:64:8:160 3:16:64:8:160 4:16:64:8:160 5:16:64:8:160 6:8:64:8:160 8:8:64:8:160 \
  4:8:32:8:160 5:8:32:8:160 2:16:0:8:160 5:16:16:8:160 > "$out/ranks.csv" 2> "$out/ranks.err"
"$probe" 7:8:64:8:160 10:8:64:8:160 12:8:64:8:160 16:4:64:8:160 3:8:32:8:160 6:8:32:8:160 8:4:32:8:160 \
  > "$out/ranks2.csv" 2> "$out/ranks2.err"
cat "$out"/*.err
