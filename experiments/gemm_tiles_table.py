#!/usr/bin/env python3
"""Per-product GEMM times of the standard attention pass for each GEMM tile, as a Markdown table.

    experiments/gemm_tiles_table.py RUNS.jsonl

RUNS.jsonl: lines of `iosim-kernels bench --algo standard --per-kernel --json`, one per (shape,
tile), the tiles of each shape in TILES' order (the JSON does not name the GEMM tile; the order is
that of experiments/results/2026-11-25-h100-gemm-tiles/README.md's command). Prints, per shape,
the median ms of every GEMM kernel under every tile, the fastest tile per kernel marked with *.
"""
import json
import sys

TILES = ["128x128x32", "128x64x32", "64x128x32", "128x128x64", "64x64x32"]  # the sweep's order


def main(path):
    runs = [json.loads(line) for line in open(path) if line.strip()]
    by_shape = {}
    for i, r in enumerate(runs):
        shape = f"B={r['batch']} H={r['heads']} N={r['seq_q']} d={r['head_dim']}"
        tile = TILES[i % len(TILES)]
        gemms = {k["name"]: k["median_ms"] for k in r["kernels"] if "softmax" not in k["name"]}
        by_shape.setdefault(shape, {})[tile] = gemms
    for shape, tiles in by_shape.items():
        kernels = list(next(iter(tiles.values())))
        print(f"\n{shape} ({runs[0]['device']}), median ms per GEMM kernel; * = fastest\n")
        print("| tile | " + " | ".join(kernels) + " |")
        print("|---" * (len(kernels) + 1) + "|")
        best = {k: min(t[k] for t in tiles.values()) for k in kernels}
        for tile, t in tiles.items():
            cells = [f"{t[k]:.3f}{'*' if t[k] == best[k] else ''}" for k in kernels]
            print(f"| {tile} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
