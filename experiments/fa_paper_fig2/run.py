#!/usr/bin/env python3
"""FlashAttention paper, Figure 2, simulated on the A100, H100 and H200 profiles: writes results-<gpu>.csv.

Runs the three panels through the Python module `iosim` (the same code as `iosim sweep`):
  left    GPT-2 medium attention (B=64 H=16 N=1024 d=64, fp16, causal), forward+backward:
          eager PyTorch attention (standard-eager; and standard, without its elementwise kernels)
          against FlashAttention (fa1, the paper's block-size rule)
  middle  FlashAttention forward, same shape (not causal), B_c = 64..512 with B_r = 64
  right   FlashAttention forward+backward at N=4096 against the block density of a random block mask
and, as panel `points`, every point of points.txt (what measure.sh measures with the real kernels)
twice: L2 carried across the pass's kernels (l2=warm: the time set against the CUDA-event median)
and emptied before each kernel (l2=cold: the DRAM bytes set against ncu --cache-control all).
Usage: PYTHONPATH=build/python python3 experiments/fa_paper_fig2/run.py [--profile a100,h100,h200]
       [--panel left,middle,right,points]
(run.sh sets the path and draws the plots afterwards.)
"""
import argparse
import csv
import os
import sys

import iosim

from points import PROFILES, read_points

HERE = os.path.dirname(os.path.abspath(__file__))
GPT2_MEDIUM = dict(batch=64, heads=16, seq=1024, head_dim=64, dtype="fp16")
# Fig. 2 right: the paper gives only N = 4K; B*H = 32 keeps a run short here (runtime and
# bytes scale with B*H once the grid fills the GPU several times; see README.md).
SPARSE = dict(batch=2, heads=16, seq=4096, head_dim=64, dtype="fp16")

PANELS = {
    "left": lambda prof: iosim.sweep(profile=prof, **GPT2_MEDIUM, algo=["standard-eager", "standard", "fa1"],
                                     pass_="fwdbwd", causal=True),
    "middle": lambda prof: iosim.sweep(profile=prof, **GPT2_MEDIUM, algo="fa1", pass_="fwd", block_m=64,
                                       block_n=[64, 128, 256, 512]),
    "right": lambda prof: iosim.sweep(profile=prof, **SPARSE, algo="fa1", pass_="fwdbwd", block_m=64, block_n=128,
                                      mask_seed=1, block_density=[1.0, 0.5, 0.25, 0.125, 0.0625]),
}

# The columns kept, from the sweep's rows (keys of `iosim simulate --json` by path).
COLUMNS = ["algorithm", "pass", "problem.batch", "problem.heads", "problem.seq_q", "problem.seq_k", "problem.head_dim",
           "problem.dtype", "problem.causal", "problem.block_density", "tiling.block_m", "tiling.block_n",
           "tiling.sram_bytes", "tiling.rule", "flops",
           "global.read_bytes", "global.write_bytes", "global.total_bytes", "formula.bytes", "dram.read_bytes",
           "dram.write_bytes", "l2.hit_rate", "time.seconds", "occupancy.ctas_per_sm", "bound"]
HEADER = ["panel", "point", "point_panel", "l2", *COLUMNS, "profile.provenance"]


def results_path(gpu):
    return os.path.join(HERE, f"results-{gpu}.csv")


def point_rows(profile):
    """Each point of points.txt, simulated with the L2 warm and cold: (point, its panel, l2, sweep row)."""
    out = []
    for p in read_points():
        kernels = len(iosim.simulate(profile=profile, **p.module_kwargs(), counts_only=True)["kernels"])
        if kernels != p.launches:  # ncu would profile the wrong launches
            sys.exit(f"run.py: points.txt: {p.name} gives LAUNCHES {p.launches}, its pass has {kernels} kernels")
        for l2 in ("warm", "cold"):
            extra = {"cold_l2": True} if l2 == "cold" else {}
            (r,) = iosim.sweep(profile=profile, **p.module_kwargs(), **extra)
            out.append((p.name, p.panel, l2, r))
    return out


def simulate(gpu, panels):
    profile = PROFILES[gpu]
    path = results_path(gpu)
    kept = []
    if os.path.exists(path):  # other panels' rows stay
        with open(path, newline="") as f:
            kept = [r for r in csv.DictReader(f) if r["panel"] not in panels]
    rows = list(kept)
    # Whether the profile's timing is calibrated, and what its values rest on (iosim profiles).
    provenance = next(p["provenance"] for p in iosim.profiles() if p["name"] == profile)
    for panel in panels:
        sims = point_rows(profile) if panel == "points" else [("", "", "warm", r) for r in PANELS[panel](profile)]
        for point, point_panel, l2, r in sims:
            if r["status"] != "ok":
                sys.exit(f"run.py: {gpu} panel {panel} {point}: {r['error']}")
            rows.append({"panel": panel, "point": point, "point_panel": point_panel, "l2": l2,
                         **{c: r[c] for c in COLUMNS}, "profile.provenance": provenance})
            print(f"{gpu} {panel} {point}: {r['algorithm']} {r['pass']} Bc={r['tiling.block_n']} "
                  f"density={r['problem.block_density']} L2 {l2}: {r['time.seconds'] * 1e3:.2f} ms", file=sys.stderr)
    order = {p: i for i, p in enumerate([*PANELS, "points"])}
    rows.sort(key=lambda r: order[r["panel"]])  # stable: grid order within a panel
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=",".join(PROFILES), help=f"some of {','.join(PROFILES)}")
    parser.add_argument("--panel", default="left,middle,right,points")
    args = parser.parse_args()
    gpus, panels = args.profile.split(","), args.panel.split(",")
    bad = [g for g in gpus if g not in PROFILES] + [p for p in panels if p not in [*PANELS, "points"]]
    if bad:
        print(f"run.py: unknown {bad}; --profile takes some of {list(PROFILES)}, --panel some of "
              f"{[*PANELS, 'points']}", file=sys.stderr)
        sys.exit(2)
    for gpu in gpus:
        simulate(gpu, panels)


if __name__ == "__main__":
    main()
