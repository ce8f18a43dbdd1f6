#!/usr/bin/env python3
"""Cycles per warp instruction per SMSP by loop-body size and warps per SMSP, from icache.csv.

    python3 table.py [icache.csv]
"""
import csv
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "icache.csv"
rows = [r for r in csv.DictReader(l for l in open(path) if not l.startswith("#"))]
warps = sorted({int(r["warps_per_smsp"]) for r in rows})
print("| body (FFMA) | KiB | " + " | ".join(f"{w} warp{'s' if w > 1 else ''} / SMSP" for w in warps) + " |")
print("|---|---|" + "---|" * len(warps))
for n in sorted({int(r["n_instr"]) for r in rows}):
    v = {int(r["warps_per_smsp"]): float(r["cycles_per_instr_per_smsp"]) for r in rows if int(r["n_instr"]) == n}
    print(f"| {n} | {16 * n // 1024} | " + " | ".join(f"{v[w]:.2f}" for w in warps) + " |")
