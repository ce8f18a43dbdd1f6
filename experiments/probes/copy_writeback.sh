#!/usr/bin/env bash
# On the GPU machine: DRAM bytes of a streaming copy at several sizes under Nsight Compute
# (flushed L2 before the kernel), for the L2 write-back model. The copy is `iosim calibrate`'s
# dirty-limit probe (kernels/calibrate/copy_probe.cu, run by `iosim calibrate --probe-copy BYTES`),
# here one ncu run per size with the raw CSV kept. Prints one CSV line per size:
#   bytes,dram_read,dram_write,time_ns
# Usage: IOSIM=path/to/iosim experiments/probes/copy_writeback.sh OUTDIR [SIZES...]
#   IOSIM: the iosim CLI of a CUDA build (default build-gpu/sim/iosim, scripts/gpu_build.sh packs it)
set -uo pipefail
out=$1
shift
sizes=${*:-33554432 67108864 134217728 268435456 536870912 1073741824}
iosim=${IOSIM:-build-gpu/sim/iosim}
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  ncu --version | tail -1
} > "$out/device.txt"
echo "bytes,dram_read,dram_write,time_ns" > "$out/copy.csv"
for b in $sizes; do
  ncu --clock-control none --cache-control all -k regex:copy_chunks --launch-skip 1 --launch-count 1 \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum --csv --page raw \
      --print-units base "$iosim" calibrate --probe-copy "$b" > "$out/ncu-$b.csv" 2> "$out/ncu-$b.err"
  python3 - "$out/ncu-$b.csv" "$b" >> "$out/copy.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')) if r.get("Kernel Name")]
r = rows[-1]
v = lambda k: r[k].replace(",", "")
print(",".join([sys.argv[2], v("dram__bytes_read.sum"), v("dram__bytes_write.sum"), v("gpu__time_duration.sum")]))
PY
done
cat "$out/copy.csv"
