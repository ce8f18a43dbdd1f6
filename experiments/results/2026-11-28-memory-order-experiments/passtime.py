#!/usr/bin/env python3
"""Pass time predicted / measured per algorithm and pass, and the held-out mean |pred/meas - 1|, of a
validation-grid CSV (build_csv.py's columns): here grid-h100-loadregs64.csv, the experiment's, beside
experiments/validation/h100/grid.csv, the committed model's.

    experiments/results/2026-11-28-memory-order-experiments/passtime.py CSV [CSV ...]
"""
import csv
import statistics
import sys

for path in sys.argv[1:]:
    seen, by, held = set(), {}, []
    for r in csv.DictReader(open(path)):
        if r['config'] in seen or not r['meas_pass_time_s'] or not r['sim_pass_time_s']:
            continue
        seen.add(r['config'])
        ratio = float(r['sim_pass_time_s']) / float(r['meas_pass_time_s'])
        by.setdefault((r['algo'], r['pass']), []).append(ratio)
        if r['set'] == 'heldout':
            held.append(abs(ratio - 1))
    print(f"{path}: held-out mean |pred/meas - 1| {statistics.mean(held):.3f} ({len(held)} configurations)")
    for (algo, pas), v in sorted(by.items()):
        print(f"  {algo} {pas}: {min(v):.2f}-{max(v):.2f} (median {statistics.median(v):.2f}, {len(v)})")
