#!/usr/bin/env python3
"""FlashAttention paper, Figure 2, simulated on the A100 40 GB profile: writes results.csv.

Runs the three panels through the Python module `iosim` (the same code as `iosim sweep`):
  left    GPT-2 medium attention (B=64 H=16 N=1024 d=64, fp16, causal), forward+backward:
          eager PyTorch attention (standard-eager; and standard, without its elementwise kernels)
          against FlashAttention (fa1, the paper's block-size rule)
  middle  FlashAttention forward, same shape (not causal), B_c = 64..512 with B_r = 64
  right   FlashAttention forward+backward at N=4096 against the block density of a random block mask
Usage: PYTHONPATH=build/python python3 experiments/fa_paper_fig2/run.py [--panel left,middle,right]
(run.sh sets the path and draws the plots afterwards.)
"""
import argparse
import csv
import os
import sys

import iosim

PROFILE = "a100-sxm4-40gb"
GPT2_MEDIUM = dict(profile=PROFILE, batch=64, heads=16, seq=1024, head_dim=64, dtype="fp16")
# Fig. 2 right: the paper gives only N = 4K; B*H = 32 keeps a run short here (runtime and
# bytes scale with B*H once the grid fills the GPU several times; see README.md).
SPARSE = dict(profile=PROFILE, batch=2, heads=16, seq=4096, head_dim=64, dtype="fp16")

PANELS = {
    "left": lambda: iosim.sweep(**GPT2_MEDIUM, algo=["standard-eager", "standard", "fa1"], pass_="fwdbwd", causal=True),
    "middle": lambda: iosim.sweep(**GPT2_MEDIUM, algo="fa1", pass_="fwd", block_m=64,
                                  block_n=[64, 128, 256, 512]),
    "right": lambda: iosim.sweep(**SPARSE, algo="fa1", pass_="fwdbwd", block_m=64, block_n=128, mask_seed=1,
                                 block_density=[1.0, 0.5, 0.25, 0.125, 0.0625]),
}

# The columns kept, from the sweep's rows (keys of `iosim simulate --json` by path).
COLUMNS = ["algorithm", "pass", "problem.batch", "problem.heads", "problem.seq_q", "problem.seq_k", "problem.head_dim",
           "problem.dtype", "problem.causal", "problem.block_density", "tiling.block_m", "tiling.block_n",
           "tiling.sram_bytes", "tiling.rule", "flops",
           "global.read_bytes", "global.write_bytes", "global.total_bytes", "formula.bytes", "dram.read_bytes",
           "dram.write_bytes", "l2.hit_rate", "time.seconds", "occupancy.ctas_per_sm", "bound"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panel", default="left,middle,right")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.csv"))
    args = parser.parse_args()
    panels = args.panel.split(",")
    unknown = [p for p in panels if p not in PANELS]
    if unknown:
        sys.exit(f"run.py: unknown panel {unknown}; expected some of {list(PANELS)}")
    kept = []
    if os.path.exists(args.out):  # other panels' rows stay
        with open(args.out, newline="") as f:
            kept = [r for r in csv.DictReader(f) if r["panel"] not in panels]
    rows = list(kept)
    # Whether the profile's timing is calibrated, and what its values rest on (iosim profiles).
    provenance = next(p["provenance"] for p in iosim.profiles() if p["name"] == PROFILE)
    for panel in panels:
        for r in PANELS[panel]():
            if r["status"] != "ok":
                sys.exit(f"run.py: panel {panel}: {r['error']}")
            rows.append({"panel": panel, **{c: r[c] for c in COLUMNS}, "profile.provenance": provenance})
            print(f"{panel}: {r['algorithm']} Bc={r['tiling.block_n']} density={r['problem.block_density']}: "
                  f"{r['time.seconds'] * 1e3:.2f} ms", file=sys.stderr)
    order = {p: i for i, p in enumerate(PANELS)}
    rows.sort(key=lambda r: order[r["panel"]])  # stable: grid order within a panel
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["panel", *COLUMNS, "profile.provenance"])
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
