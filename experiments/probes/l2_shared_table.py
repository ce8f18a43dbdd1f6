#!/usr/bin/env python3
"""Prints, per sweep (l2_shared_sweep.cu's `share`: warps on different SMs reading each line, or
l2_home_sweep.cu's `mode`), the working set at which it still hits on half its loads (linear between
the points around 0.5, as iosim calibrate finds l2.effective_size) and the hit fraction at a few sizes.
Usage: l2_shared_table.py sweep.csv"""
import csv
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
key = 'share' if 'share' in rows[0] else 'mode'
by = defaultdict(list)
for r in rows:
    by[int(r[key]) if key == 'share' else r[key]].append((float(r['working_set_mib']), float(r['hit_fraction'])))
print(f"GPU: {rows[0]['gpu']}\n")
title = 'warps per line (SMs)' if key == 'share' else 'sweep'
print(f"| {title} | half-hit working set (MiB) | hit at 27.5 MiB | at 30 MiB | at 32.7 MiB | at 42.4 MiB | at 60 MiB |")
print("|---:|---:|---:|---:|---:|---:|---:|")
order = ['mixed', 'own', 'other', 'cross']
for share, pts in sorted(by.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else kv[0]):
    pts.sort()
    half = None
    for (w0, f0), (w1, f1) in zip(pts, pts[1:]):
        if f0 >= 0.5 > f1:
            half = w0 + (f0 - 0.5) / (f0 - f1) * (w1 - w0)
            break
    at = {round(w, 1): f for w, f in pts}
    cols = ' | '.join(f"{at.get(x, float('nan')):.2f}" for x in (27.5, 30.0, 32.7, 42.4, 60.0))
    print(f"| {share} | {half:.1f} | {cols} |" if half else f"| {share} | - | {cols} |")
