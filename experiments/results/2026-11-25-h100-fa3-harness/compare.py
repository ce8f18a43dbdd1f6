#!/usr/bin/env python3
"""FA3 measured (this folder: iosim-kernels bench JSON, ncu CSV) beside iosim's prediction (h100 profile).

    python3 experiments/results/2026-11-25-h100-fa3-harness/compare.py [IOSIM]   (default build/sim/iosim)
"""
import csv
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
iosim = sys.argv[1] if len(sys.argv) > 1 else "build/sim/iosim"
print("| config | measured ms (bench) | TFLOP/s | ncu DRAM MB | iosim ms | iosim DRAM MB | time sim/meas | DRAM sim/meas |")
print("|---|---|---|---|---|---|---|---|")
for line in open(os.path.join(HERE, "configs.txt")):
    name, flags = line.split(":", 1)
    bench = json.load(open(os.path.join(HERE, name + ".bench.json")))
    txt = open(os.path.join(HERE, name + ".csv")).read()
    rows = list(csv.reader(io.StringIO(txt[txt.index('"ID"'):])))
    h, vals = rows[0], rows[2]
    v = {h[i]: vals[i] for i in range(len(h))}
    dram = float(v["dram__bytes_read.sum"].replace(",", "")) + float(v["dram__bytes_write.sum"].replace(",", ""))
    sim = json.loads(subprocess.run([iosim, "simulate", "--profile", "h100-sxm5-80gb", *flags.split(), "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    k = sim["kernels"][0]
    sim_ms = k["time"]["seconds"] * 1e3
    sim_dram = k["dram"]["read_bytes"] + k["dram"]["write_bytes"]
    print(f"| {name} | {bench['median_ms']:.3f} | {bench['tflops']:.0f} | {dram / 1e6:.1f} | {sim_ms:.3f} | "
          f"{sim_dram / 1e6:.1f} | {sim_ms / bench['median_ms']:.2f} | {sim_dram / dram:.2f} |")
