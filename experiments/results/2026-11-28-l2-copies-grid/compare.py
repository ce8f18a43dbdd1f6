#!/usr/bin/env python3
"""The validation grids predicted with `--l2-copies` (grid-<gpu>-copies.csv here) beside the committed
default ones (experiments/validation/<gpu>/grid.csv): per metric and set, the mean |pred/meas - 1| and
the range of pred/meas over the measured rows; then the kernels whose DRAM error moved most.
Usage: python3 experiments/results/2026-11-28-l2-copies-grid/compare.py"""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")


def load(path):
    return [r for r in csv.DictReader(open(path)) if r["status"] == "ok"]


def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None


def ratios(rows, s, metric):
    out, seen = [], set()
    for r in rows:
        if r["set"] != s:
            continue
        if metric == "pass time":
            if r["config"] in seen:
                continue
            seen.add(r["config"])
            p, q = f(r, "sim_pass_time_s"), f(r, "meas_pass_time_s")
        elif metric == "kernel time":
            p, q = f(r, "sim_time_s"), f(r, "meas_time_s")
        elif metric == "DRAM read+write":
            p = f(r, "sim_dram_read_bytes") + f(r, "sim_dram_write_bytes")
            q = f(r, "meas_dram_read_bytes") + f(r, "meas_dram_write_bytes")
        elif metric == "DRAM write":
            p, q = f(r, "sim_dram_write_bytes"), f(r, "meas_dram_write_bytes")
        else:
            p, q = f(r, "sim_lookups"), f(r, "meas_lookups")
        if p is None or not q:
            continue
        out.append(p / q)
    return out


def cell(v):
    return f"{sum(abs(x - 1) for x in v) / len(v):.3f} ({min(v):.2f}-{max(v):.2f})" if v else "-"


for gpu in ("h200", "h100"):
    base = load(os.path.join(ROOT, "experiments", "validation", gpu, "grid.csv"))
    cop = load(os.path.join(HERE, f"grid-{gpu}-copies.csv"))
    print(f"\n{gpu.upper()}: mean |pred/meas - 1| (range)\n")
    print("| metric | set | default | --l2-copies |\n|---|---|---|---|")
    for metric in ("pass time", "kernel time", "DRAM read+write", "DRAM write", "L2 read lookups"):
        for s in ("calibration", "heldout"):
            print(f"| {metric} | {s} | {cell(ratios(base, s, metric))} | {cell(ratios(cop, s, metric))} |")
    b = {(r["config"], r["kernel"]): r for r in base}
    moved = []
    for r in cop:
        o = b.get((r["config"], r["kernel"]))
        if o is None:
            continue
        m = f(r, "meas_dram_read_bytes") + f(r, "meas_dram_write_bytes")
        s0 = (f(o, "sim_dram_read_bytes") + f(o, "sim_dram_write_bytes")) / m
        s1 = (f(r, "sim_dram_read_bytes") + f(r, "sim_dram_write_bytes")) / m
        moved.append((abs(s1 - 1) - abs(s0 - 1), r["config"], r["kernel"], r["set"], s0, s1))
    moved.sort()
    print("\nDRAM read+write, pred/meas, the kernels that moved most (better first):\n")
    print("| config | kernel | set | default | --l2-copies |\n|---|---|---|---|---|")
    for d, c, k, s, s0, s1 in moved[:8] + moved[-5:]:
        print(f"| {c} | {k} | {s} | {s0:.3f} | {s1:.3f} |")
