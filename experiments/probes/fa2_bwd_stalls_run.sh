#!/usr/bin/env bash
# The device call of 2026-11-27 (session 6): stall reasons of FA2 backward tiles with one and two Q/dO stages, and the d64 FA2 forward SASS
# (for fa2_fwd_walk.py).   OUT=DIR experiments/probes/fa2_bwd_stalls_run.sh   (build-gpu-carry/bins.tar.xz carried)
set -u
work=/tmp/dev2; rm -rf $work; mkdir -p /tmp/b $work/stalls $work/sass
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" build-gpu-carry/bins.tar.xz /tmp/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $work/device.txt; date -u > $work/date.txt
cuobjdump -sass /tmp/b/obj/fa2_fwd_fp16_d64.cu.o > $work/sass/fa2_fwd_fp16_d64.sass 2>&1
experiments/probes/stalls.sh /tmp/b/iosim-kernels $work/stalls fa2-bwd-d128-n4096-bh16-s50-128x64 fa2-bwd-d128-n8192-bh16-64x128 fa2-bwd-d128-n1024-bh128-c-128x128 fa2-bwd-d64-n1024-bh192-64x64
python3 experiments/probes/stalls_table.py $work/stalls > $work/stalls/table.md; cut -d'|' -f2-20 $work/stalls/table.md
xz -T8 -6 $work/sass/fa2_fwd_fp16_d64.sass
tar -C $work -cf $OUT/dev2.tar .
