#!/usr/bin/env python3
"""Before/after table of the 18 GEMMs: our median ms and cuBLAS time / ours, from the raw records of
experiments/results/2026-11-28-h100-standard-bench (before) and of this folder (after).
   python3 experiments/results/2026-11-28-h100-standard-bench-overlap/compare.py"""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
before_dir = os.path.join(here, "..", "2026-11-28-h100-standard-bench", "r")
after_dir = os.path.join(here, "r")
NAMES = ["std_fwd_qk", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_dq", "std_bwd_dk"]


def load(folder):
    ours, cub = {}, {}
    for line in open(os.path.join(folder, "standard-ours.jsonl")):
        r = json.loads(line)
        if r["algo"] != "standard" or r["pass"] != "fwdbwd":
            continue
        shape = (r["batch"], r["heads"], r["seq_q"], r["head_dim"])
        for k in r["kernels"]:
            ours[(shape, k["name"])] = k["median_ms"]
    for line in open(os.path.join(folder, "standard-peer.jsonl")):
        r = json.loads(line)
        if r.get("source") == "cublas":
            cub[((r["batch"], r["heads"], r["seq_q"], r["head_dim"]), r["kernel"])] = r["median_ms"]
    return ours, cub


b_ours, b_cub = load(before_dir)
a_ours, a_cub = load(after_dir)
print("| shape | kernel | before ms | before ratio | after ms | after ratio | after / before |")
print("|---|---|---|---|---|---|---|")
for shape in sorted({s for s, _ in a_ours}, key=lambda s: (-s[3], s[0])):
    for n in NAMES:
        key = (shape, n)
        bo, ao = b_ours[key], a_ours[key]
        print("| B=%d H=%d N=%d d=%d | %s | %.3f | %.2f | %.3f | %.2f | %.3f |"
              % (*shape, n, bo, b_cub[key] / bo, ao, a_cub[key] / ao, ao / bo))
