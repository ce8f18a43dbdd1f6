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

# The window that merges as much: a read arriving d cycles after a hit merges with probability p(d), so
# for arrival gaps spread evenly over more than the curve's reach, a window of W = integral of p(d) dd
# merges the same share. The trapezoid over the probe's deltas, p clipped at 0 (the -1% baseline),
# up to the first delta with nothing merged: l2.merge_window (docs/engine.md, "Request merging").
share = [(d, max(0.0, 2 * statistics.median(groups[(d, "1")]))) for d in deltas if (d, "1") in groups]
window = 0.0
for (d0, p0), (d1, p1) in zip(share, share[1:]):
    window += (p0 + p1) / 2 * (d1 - d0)
    if p1 == 0:
        break
print(f"\nhit-merge window with the same merged share (integral of the warm column over delta): {window:.1f} cycles")
