#!/usr/bin/env bash
# On the GPU machine: where FA2's and FA1's local memory (register spills, LDL/STL) is served.
#   OUT=DIR experiments/probes/local_memory_run.sh BINS.tar.xz
# BINS.tar.xz: a full-menu scripts/gpu_build.sh carry (iosim-kernels, obj/fa2_*_fp16_*.cu.o; the
# FA1 objects, obj/fa1_*.cu.o, when present). Writes to $OUT:
#   fa2-sass.tar.xz, fa1-sass.tar.xz  cuobjdump -sass of the objects (for the walks:
#                                     experiments/probes/fa2_{fwd,bwd}_walk.py)
#   local.csv                         Nsight Compute, one launch of each configuration's kernel:
#                                     local-memory instructions, L1 sectors (hit/miss), crossbar and
#                                     L2 bytes, DRAM bytes, the shared-memory carve-out, time
#   run.log, device.txt, date.txt
set -uo pipefail
bins=$1
out=${OUT:?set OUT}
work=$(mktemp -d)
python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" "$work"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
for fam in fa2 fa1; do
  ls "$work"/obj/${fam}_*.o > /dev/null 2>&1 || continue
  mkdir -p "$work/sass-$fam"
  for o in "$work"/obj/${fam}_*.o; do cuobjdump -sass "$o" > "$work/sass-$fam/$(basename "$o" .cu.o).sass"; done
  tar cf - -C "$work/sass-$fam" . | xz -9 -T4 > "$out/$fam-sass.tar.xz"
done
metrics=smsp__inst_executed_op_local_ld.sum,smsp__inst_executed_op_local_st.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_local_op_st_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st_lookup_miss.sum
metrics+=,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics+=,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum
metrics+=,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,smsp__inst_executed.sum
metrics+=,launch__shared_mem_config_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static
metrics+=,launch__block_size,launch__grid_size,launch__registers_per_thread,launch__occupancy_limit_shared_mem
metrics+=,launch__occupancy_limit_registers,sm__cycles_elapsed.avg.per_second
configs=(
  "fa2-bwd-d128-n1024-bh128-c-128x128|fa2_backward_kernel|--algo fa2 --pass bwd --heads 128 --seq 1024 --head-dim 128 --block-m 128 --block-n 128 --causal"
  "fa2-bwd-d64-n4096-bh32-64x256|fa2_backward_kernel|--algo fa2 --pass bwd --heads 32 --seq 4096 --head-dim 64 --block-m 64 --block-n 256"
  "fa2-bwd-d64-n2048-bh64-128x128|fa2_backward_kernel|--algo fa2 --pass bwd --heads 64 --seq 2048 --head-dim 64 --block-m 128 --block-n 128"
  "fa2-bwd-d128-n2048-bh64-64x128|fa2_backward_kernel|--algo fa2 --pass bwd --heads 64 --seq 2048 --head-dim 128 --block-m 64 --block-n 128"
  "fa2-bwd-d128-n1000-bh256-128x64|fa2_backward_kernel|--algo fa2 --pass bwd --heads 256 --seq 1000 --head-dim 128 --block-m 128 --block-n 64"
  "fa2-fwd-d128-n2048-bh128-256x128|fa2_forward_kernel|--algo fa2 --pass fwd --heads 128 --seq 2048 --head-dim 128 --block-m 256 --block-n 128"
  "fa2-fwd-d64-n2048-bh64-256x256|fa2_forward_kernel|--algo fa2 --pass fwd --heads 64 --seq 2048 --head-dim 64 --block-m 256 --block-n 256"
  "fa1-bwd-d128-n1024-bh64-64x128|fa1_backward_kernel|--algo fa1 --pass bwd --heads 64 --seq 1024 --head-dim 128 --block-m 64 --block-n 128"
)
: > "$out/run.log"
first=1
for c in "${configs[@]}"; do
  IFS='|' read -r name regex flags <<< "$c"
  echo "== $name: $flags" >> "$out/run.log"
  ncu --clock-control none --cache-control all --kernel-name "regex:$regex" --launch-count 1 --metrics "$metrics" \
      --csv --page raw --print-units base "$work/iosim-kernels" bench $flags --warmup 0 --iters 1 \
      > "$work/$name.csv" 2>> "$out/run.log" || { echo "ncu failed: $name" >> "$out/run.log"; continue; }
  # One header (the first file's), then each file's data rows tagged with the configuration.
  python3 - "$work/$name.csv" "$name" "$first" >> "$out/local.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 3]
head = rows.index(next(r for r in rows if r[0] == 'ID'))
w = csv.writer(sys.stdout)
if sys.argv[3] == '1':
    w.writerow(['config'] + rows[head])
for r in rows[head + 1:]:
    if r[0].isdigit():
        w.writerow([sys.argv[2]] + r)
PY
  first=0
done
echo done >> "$out/run.log"
