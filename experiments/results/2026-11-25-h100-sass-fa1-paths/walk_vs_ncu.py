#!/usr/bin/env python3
"""The walked SASS paths (*.walk.txt) against Nsight Compute's counters of three grid
rows, per warp and inner step (at d64 the key block's outer work spread over its 32
steps; the initialisation and the backward's dQ conversion, under 0.4%, left out).

    experiments/results/2026-11-25-h100-sass-fa1-paths/walk_vs_ncu.py
"""
import ast, csv, os, re
HERE = os.path.dirname(os.path.abspath(__file__))
GRID = os.path.join(HERE, "../../validation/h100/grid.csv")


def totals(name, key="total"):
    out = {}
    for line in open(os.path.join(HERE, name)):
        if line.startswith(key + " "):
            for k, v in ast.literal_eval(line.split(None, 2)[-1] if key == "total" else line.split(None, 1)[1]).items():
                out[k] = out.get(k, 0) + v
    return out


rows = {r["config"]: r for r in csv.DictReader(open(GRID))}
outers = {"fa1_fwd": "fwd-outer.walk.txt", "fa1_bwd": "bwd-outer.walk.txt"}
# (kernel, grid row, walk, warp-steps of the kernel: CTAs x key blocks x query blocks (x GQA group)
# x warps, the outer walk (d64 only) and the steps per key block it is spread over)
for kernel, cfg, walk, per, outer_walk in (
        ("fa1_fwd", "fa1-fwd-d64-n2048-bh128-64x64", "fwd-step.walk.txt", 128 * 32 * 32 * 4, "fwd-outer.walk.txt"),
        ("fa1_bwd", "fa1-bwd-d64-n2048-bh128-64x64", "bwd-step.walk.txt", 128 * 32 * 32 * 8, "bwd-outer.walk.txt"),
        ("fa1_bwd", "fa1-bwd-d128-n2048-bh128-kv8-64x32", "bwd-d128-64x32-step.walk.txt", 32 * 64 * 32 * 4 * 8, None)):
    r, w, ops = rows[cfg], totals(walk), totals(walk, "ops")
    steps_per_key = 32
    outer = totals(outer_walk) if outer_walk else {}
    outer_ops = totals(outer_walk, "ops") if outer_walk else {}
    add = {k: v / steps_per_key for k, v in outer.items()}
    add_ops = {k: v / steps_per_key for k, v in outer_ops.items()}
    walked = {k: w.get(k, 0) + add.get(k, 0) for k in set(w) | set(add)}
    meas = {"total": float(r["meas_inst_executed"]), "fma": float(r["meas_inst_fma_pipe"]),
            "xu": float(r["meas_inst_xu"]), "tensor": float(r["meas_inst_tensor"]),
            "shared loads": float(r["meas_inst_shared_ld"]),
            "FFMA+FADD+FMUL": sum(float(r["meas_thread_" + o]) for o in ("ffma", "fadd", "fmul")) / 32}
    print(f"{kernel} {cfg}: per warp and step, walked{' (+ outer / 32)' if add else ''} vs measured")
    print(f"  total  {sum(walked.values()):8.1f} {meas['total'] / per:8.1f}")
    for k in ("fma", "xu", "tensor"):
        print(f"  {k:6} {walked.get(k, 0):8.1f} {meas[k] / per:8.1f}")
    lds = ops.get("LDS", 0) + add_ops.get("LDS", 0)
    fp = sum(ops.get(o, 0) + add_ops.get(o, 0) for o in ("FFMA", "FADD", "FMUL"))
    print(f"  LDS    {lds:8.1f} {meas['shared loads'] / per:8.1f}   (shared loads)")
    print(f"  FFMA+FADD+FMUL {fp:8.1f} {meas['FFMA+FADD+FMUL'] / per:8.1f}   (thread instructions / 32)")

# Issue rate of every FA1 row: warp instructions per cycle per SMSP (132 SMs x 4).
print("FA1 rows: instructions issued per cycle per SMSP (inst_executed / (sm__cycles_elapsed.avg x 528))")
for r in rows.values():
    if r["algo"] == "fa1" and r["meas_cycles"]:
        print(f"  {r['config']:42} {float(r['meas_inst_executed']) / (float(r['meas_cycles']) * 528):.2f}")
