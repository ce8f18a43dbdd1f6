#!/usr/bin/env python3
"""One tile across the explore validation's measured shapes: today's predicted time over the measured
median, shape by shape, from the committed raw benches (no GPU).

    experiments/explore/tile_check.py RAW_DIR SHAPES_FILE TILE [TILE ...] [--match REGEX]
        [--profile h200] [--iosim build/sim/iosim]

RAW_DIR: an explore validation's raw folder (validate.sh's OUTDIR, e.g.
experiments/results/2026-11-28-h200-explore-blind-raw: <shape>/<BRxBC>.bench.json); SHAPES_FILE: the
shapes it measured (NAME;FLAGS, e.g. experiments/explore/shapes-blind-2026-11-28.txt); TILE: BRxBC.
Prints, per shape whose name matches --match (default: all) and tile, `iosim simulate FLAGS --block-m
BR --block-n BC --profile P --json`'s time over the bench's median_ms (the bench's device is printed
with it).
"""
import argparse, json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw")
    ap.add_argument("shapes")
    ap.add_argument("tiles", nargs="+")
    ap.add_argument("--match", default="")
    ap.add_argument("--profile", default="h200")
    ap.add_argument("--iosim", default=os.path.join(ROOT, "build/sim/iosim"))
    a = ap.parse_args()
    print("| shape | tile | measured ms | predicted ms | predicted / measured | device |")
    print("|---|---|---:|---:|---:|---|")
    for line in open(a.shapes):
        if not line.strip() or line.startswith("#"):
            continue
        name, flags = [x.strip() for x in line.split(";", 1)]
        if not re.search(a.match, name):
            continue
        for tile in a.tiles:
            path = os.path.join(a.raw, name, tile + ".bench.json")
            if not os.path.exists(path):
                continue
            bench = json.load(open(path))
            bm, bn = tile.split("x")
            cmd = [a.iosim, "simulate", *flags.split(), "--block-m", bm, "--block-n", bn, "--profile", a.profile,
                   "--json"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"tile_check: {' '.join(cmd)} failed: {r.stderr.strip()}")
            pred = json.loads(r.stdout)["time"]["seconds"] * 1e3
            meas = bench["median_ms"]
            print(f"| {name} | {tile} | {meas:.4f} | {pred:.4f} | {pred / meas:.3f} | {bench.get('device', '')} |")


if __name__ == "__main__":
    main()
