#!/usr/bin/env python3
"""Held-out mean |pred/meas - 1| per metric and algorithm: the committed H100 grid beside the same
grid predicted with the H200's step jitter and CTA priority (a diagnosis, not a model: those are the
H200's measurements, and nothing may be fitted or borrowed for the H100).

Usage: compare.py [COMMITTED_CSV] [DIAGNOSIS_CSV]
"""
import csv, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
METRICS = {"time": ("sim_time_s", "meas_time_s"), "lookups": ("sim_lookups", "meas_lookups"),
           "dram": (("sim_dram_read_bytes", "sim_dram_write_bytes"), ("meas_dram_read_bytes", "meas_dram_write_bytes"))}


def value(r, k):
    return sum(float(r[x]) for x in k) if isinstance(k, tuple) else float(r[k])


def table(path):
    rows = [r for r in csv.DictReader(open(path)) if r["set"] == "heldout"]
    out = {}
    for algo in ["fa2", "fa1", "standard", "fa3", "all"]:
        sel = [r for r in rows if algo == "all" or r["algo"] == algo]
        for m, (p, q) in METRICS.items():
            e = [abs(value(r, p) / value(r, q) - 1) for r in sel if value(r, q) > 0]
            out[(algo, m)] = sum(e) / len(e)
        passes = {r["config"]: abs(float(r["sim_pass_time_s"]) / float(r["meas_pass_time_s"]) - 1)
                  for r in sel if r.get("sim_pass_time_s") and r.get("meas_pass_time_s")}
        out[(algo, "pass")] = sum(passes.values()) / len(passes)
    return out


a = table(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "experiments/validation/h100/grid.csv"))
b = table(sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "grid-h100-h200-jitter.csv"))
print("| algorithm | metric | committed | with the H200's jitter and priority |")
print("|---|---|---:|---:|")
for (algo, m), v in a.items():
    print(f"| {algo} | {m} | {100 * v:.1f}% | {100 * b[(algo, m)]:.1f}% |")
