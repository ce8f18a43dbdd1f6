#!/usr/bin/env bash
# The device call of 2026-11-27 (session 6): do SHFL and MUFU.EX2 share the MIO's throughput?
#   OUT=DIR experiments/probes/mio_run.sh   (on the GPU machine)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt; date -u > $OUT/date.txt
nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 experiments/probes/pipe_probe.cu -o /tmp/pipe_probe &&
  /tmp/pipe_probe mio > $OUT/mio.txt 2>&1
cat $OUT/mio.txt
