#!/usr/bin/env python3
"""Extra cycles per step by variant and REDs per warp (k), from red_spread.csv (one CTA on every SM).

    python3 table.py [red_spread.csv]
"""
import csv
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "red_spread.csv"
rows = [r for r in csv.DictReader(l for l in open(path) if not l.startswith("#"))]
table, ks = {}, set()
for r in rows:
    name = r["variant"] if r["variant"].startswith("nowar") else f"{r['variant']} {r['param']}"
    if r["variant"].startswith("nowar") and r["param"] != "132":
        continue  # the one-SM rows: the same within 3%
    k = int(r["k_per_warp"])
    if k == 0:
        continue
    ks.add(k)
    table.setdefault(name, {})[k] = float(r["extra_cycles_per_step"])
ks = sorted(ks)
print("| variant | " + " | ".join(f"k = {k} ({k * 256 * 8 // 1024} KiB/CTA)" for k in ks) + " |")
print("|---|" + "---|" * len(ks))
for name, v in table.items():
    print(f"| {name} | " + " | ".join(f"{v[k]:.0f}" if k in v else "-" for k in ks) + " |")
