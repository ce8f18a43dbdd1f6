#!/usr/bin/env bash
# On the GPU machine: experiments/probes/dirty_mix_probe.cu under Nsight Compute (L2 flushed before
# the kernel, clocks as they are) for several write sizes W and read streams R, fresh or hot.
# Writes OUTDIR/device.txt, OUTDIR/ncu-*.csv (raw) and OUTDIR/mix.csv:
#   w_mib,r_mib,mode,order,written,read,dram_read,dram_write,time_ns
# CONFIGS (optional): W:R:MODE[:ORDER] ... (ORDER mixed, reads-first, writes-first; default mixed)
# Usage: experiments/probes/dirty_mix_run.sh PROBE OUTDIR
set -uo pipefail
probe=$1
out=$2
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  ncu --version | tail -1
} > "$out/device.txt"
echo "w_mib,r_mib,mode,order,written,read,dram_read,dram_write,time_ns" > "$out/mix.csv"
configs=${CONFIGS:-"16:0:fresh 16:16:fresh 16:32:fresh 16:64:fresh 16:128:fresh 16:256:fresh 16:64:hot 16:256:hot
32:0:fresh 32:16:fresh 32:32:fresh 32:64:fresh 32:128:fresh 32:256:fresh 32:64:hot 32:256:hot
8:64:fresh 8:256:fresh 64:64:fresh 64:256:fresh"}
for c in $configs; do
  IFS=: read -r w r mode order <<< "$c"
  order=${order:-mixed}
  name="$w-$r-$mode-$order"
  ncu --clock-control none --cache-control all -k regex:write_while_reading --launch-skip 1 --launch-count 1 \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum --csv --page raw \
      --print-units base "$probe" "$w" "$r" "$mode" 16 "$order" > "$out/ncu-$name.csv" 2> "$out/ncu-$name.err"
  python3 - "$out/ncu-$name.csv" "$w" "$r" "$mode" "$order" >> "$out/mix.csv" <<'PY'
import csv, re, sys
text = open(sys.argv[1]).read()
m = re.search(r"written (\d+) read (\d+)", text)
rows = [r for r in csv.DictReader(l for l in text.splitlines() if l.startswith('"')) if r.get("Kernel Name")]
r = rows[-1]
v = lambda k: r[k].replace(",", "")
print(",".join(sys.argv[2:6] + [m.group(1), m.group(2), v("dram__bytes_read.sum"), v("dram__bytes_write.sum"),
                                 v("gpu__time_duration.sum")]))
PY
done
cat "$out/mix.csv"
