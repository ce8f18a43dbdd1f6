#!/usr/bin/env python3
"""SM<->L2 bytes of the wgmma GEMM run (ncu.csv, or the CSV given) beside iosim's trace of the same pass.
Usage: python3 table.py [IOSIM [NCU_CSV [SIMULATE FLAGS...]]]   (flags default: the ncu.csv run's)"""
import csv, json, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
iosim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../build/sim/iosim")
flags = (" ".join(sys.argv[3:]) if len(sys.argv) > 3 else
         "--algo standard --pass fwdbwd --batch 2 --heads 4 --seq 1000 --head-dim 64 --layout bhsd --gemm-m 128 --gemm-n 128 --gemm-k 64")
sim = json.loads(subprocess.run([iosim, "simulate", *flags.split(), "--profile", "h200", "--json", "--counts-only"],
                                check=True, capture_output=True, text=True).stdout)
csv_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "ncu.csv")
lines = [l for l in open(csv_path) if l.startswith('"')]
rows = list(csv.DictReader(lines))[1:]  # the first row holds the units
num = lambda s: float(s.replace(",", "")) if s else float("nan")
print("| kernel (launch order) | trace read B | ncu read B | ratio | trace write B | ncu write B | ratio |")
print("|---|---|---|---|---|---|---|")
for k, r in zip(sim["kernels"], rows):
    tr, tw = k["global"]["read_bytes"], k["global"]["write_bytes"]
    mr, mw = num(r.get("l1tex__m_xbar2l1tex_read_bytes.sum")), num(r.get("l1tex__m_l1tex2xbar_write_bytes.sum"))
    print(f"| {k['name']} ({r['Kernel Name'][:40]}) | {tr:,} | {mr:,.0f} | {mr / tr:.3f} | {tw:,} | {mw:,.0f} | {mw / tw:.3f} |")
