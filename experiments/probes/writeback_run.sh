#!/usr/bin/env bash
# On the GPU machine: the write-back probe (experiments/probes/writeback_probe.cu) under Nsight
# Compute, L2 flushed before each kernel. Writes OUT/device.txt, OUT/configs.csv (the probe's
# stdout: one line per profiled launch), OUT/ncu.csv (raw) and OUT/writeback.csv (joined).
# Usage: [SET=all|reads|both] experiments/probes/writeback_run.sh PROBE_BINARY OUT [CONFIG...]
set -uo pipefail
probe=$1
out=$2
shift 2
once="2:1:2000:0 4:1:2000:0 6:1:2000:0 8:1:2000:0 12:1:2000:0 16:1:2000:0 24:1:2000:0 32:1:2000:0 48:1:2000:0"
idle="4:1:0:0 4:1:0:400000 8:1:0:0 8:1:0:400000 16:1:0:0 16:1:0:400000 32:1:0:0 32:1:0:400000"
rate="32:1:500:0 32:1:8000:0 32:1:32000:0 16:1:32000:0 8:1:32000:0"
rewrite="16:2:2000:0 16:4:2000:0 16:16:2000:0 8:16:2000:0 4:16:2000:0 32:4:2000:0 16:16:0:0 8:16:0:0"
reads="8:1:0:0:16:1 8:1:0:0:32:1 8:1:0:0:48:1 8:1:0:0:64:1 8:1:0:0:128:1 16:1:0:0:16:1 16:1:0:0:32:1 16:1:0:0:48:1 16:1:0:0:64:1 16:1:0:0:128:1 24:1:0:0:32:1 24:1:0:0:64:1 4:1:0:0:32:2 4:1:0:0:48:2 8:1:0:0:32:2 8:1:0:0:40:2"
case "${SET:-all}" in
  all) configs="$once $idle $rate $rewrite $once $idle $rate $rewrite" ;;
  reads) configs="$reads $reads" ;;
  both) configs="$once $rewrite $reads $once $rewrite $reads" ;;
esac
[ $# -gt 0 ] && configs="$*"
. "$(dirname "$0")/ncu_probe.sh"
ncu_probe "$out" slow_write dram__bytes_write.sum,dram__bytes_read.sum,lts__t_sectors_op_write.sum,gpu__time_duration.sum "$probe" $configs
python3 - "$out" "$(dirname "$0")" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[2])
from ncu_probe import launches
out = sys.argv[1]
with open(os.path.join(out, "writeback.csv"), "w") as f:
    f.write("index,mib,rounds,gap,tail,read_mib,read_rounds,bytes_per_round,read_bytes_per_round,l2_write_bytes,dram_write_bytes,dram_read_bytes,time_ns,dirty_left_bytes\n")
    for c, v in launches(out):
        for k in ("read_mib", "read_rounds", "read_bytes_per_round"):  # the probe's first version wrote none
            c.setdefault(k, "0")
        w = v("dram__bytes_write.sum"); l2w = 32 * v("lts__t_sectors_op_write.sum")
        f.write(",".join([c["index"], c["mib"], c["rounds"], c["gap"], c["tail"], c["read_mib"], c["read_rounds"],
                          c["bytes_per_round"], c["read_bytes_per_round"],
                          "%d" % l2w, "%d" % w, "%d" % v("dram__bytes_read.sum"), "%d" % v("gpu__time_duration.sum"),
                          "%d" % (int(c["bytes_per_round"]) - w)]) + "\n")
print(open(os.path.join(out, "writeback.csv")).read())
PY
