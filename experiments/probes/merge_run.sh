#!/usr/bin/env bash
# On the GPU machine: the merge probe (experiments/probes/merge_probe.cu) under Nsight Compute, L2
# flushed before each launch. Writes OUT/device.txt, OUT/ncu.csv (raw, the probe's lines mixed in),
# OUT/configs.csv and OUT/merge.csv (joined: lookups, requests, merged fraction).
# Usage: experiments/probes/merge_run.sh PROBE_BINARY OUT [CONFIG...]
set -uo pipefail
probe=$1
out=$2
shift 2
deltas="0 8 16 32 64 128 256 512 1024 2048 4096 8192"
configs=
for w in 1 0; do for d in $deltas; do configs="$configs $d:$w"; done; done
configs=${*:-$configs $configs}
. "$(dirname "$0")/ncu_probe.sh"
ncu_probe "$out" pair_reads lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,gpu__time_duration.sum "$probe" $configs
python3 - "$out" "$(dirname "$0")" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[2])
from ncu_probe import launches
out = sys.argv[1]
with open(os.path.join(out, "merge.csv"), "w") as f:
    f.write("index,delta,warm,reads,lookup_sectors,lookup_hit_sectors,requests,dram_read_bytes,time_ns,timed_sectors_if_unmerged,merged_fraction\n")
    for c, v in launches(out):
        warm_sectors = int(c["pairs"]) * int(c["rounds"]) * 4 if c["warm"] == "1" else 0
        lookups = v("lts__t_sectors_srcunit_tex_op_read.sum")
        timed = int(c["sectors_if_unmerged"])
        merged = 1 - (lookups - warm_sectors) / timed
        f.write(",".join([c["index"], c["delta"], c["warm"], c["reads"], "%d" % lookups,
                          "%d" % v("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"),
                          "%d" % v("lts__t_requests_srcunit_tex_op_read.sum"), "%d" % v("dram__bytes_read.sum"),
                          "%d" % v("gpu__time_duration.sum"), str(timed), "%.4f" % merged]) + "\n")
print(open(os.path.join(out, "merge.csv")).read())
PY
