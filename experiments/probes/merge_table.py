#!/usr/bin/env python3
"""The merge probe's table (merge_run.sh's merge.csv): per delta and warm/cold, the merged fraction of
the pair's second reads (1 - extra lookups / the second read's sectors), median over repeats.
  experiments/probes/merge_table.py merge.csv
"""
import csv, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault((int(r["delta"]), r["warm"]), []).append(float(r["merged_fraction"]))
deltas = sorted({d for d, _ in groups})
print("| delta (SM cycles) | hit (warm): second reads merged | miss (cold): second reads merged |")
print("|---:|---:|---:|")
for d in deltas:
    cells = []
    for w in ("1", "0"):
        v = groups.get((d, w))
        # merged_fraction counts both reads' sectors: the second read alone merges at twice it.
        cells.append("%.0f%%" % (200 * statistics.median(v)) if v else "")
    print(f"| {d} | {cells[0]} | {cells[1]} |")
