#!/usr/bin/env bash
# On the GPU machine: Nsight Compute counters of our kernels for every line of
# experiments/validate_configs.txt (cold caches, ncu's default --cache-control all).
# Usage: experiments/validate_counters.sh IOSIM_KERNELS_BINARY OUTDIR
# Then, here: experiments/compare_counters.py OUTDIR PROFILE
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
grep -v '^#' "$(dirname "$0")/validate_configs.txt" | while IFS=';' read -r name regex count flags; do
  name=$(echo $name); regex=$(echo $regex); count=$(echo $count)
  # shellcheck disable=SC2086
  ncu --clock-control none --metrics "$metrics" --csv --page raw --print-units base \
    -k "regex:$regex" --launch-count "$count" \
    "$bin" bench $flags --warmup 0 --iters 1 > "$out/$name.csv" 2> "$out/$name.err"
  echo "$name: exit $? ($(grep -c '^"' "$out/$name.csv") csv lines)"
done
