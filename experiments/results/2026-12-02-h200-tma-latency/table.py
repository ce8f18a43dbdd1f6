#!/usr/bin/env python3
"""The TMA latency probe's rows (tma.csv) as a table, and the two values the profiles take from them:
sm_pipes.tma_load_per_sm = a 16 KB box over the cycles per box of one CTA keeping 8 boxes in flight
(contiguous), and sm_pipes.tma_latency = one box alone (1 in flight) less its bytes at that rate.

    experiments/results/2026-12-02-h200-tma-latency/table.py [tma.csv]
"""
import csv, os, sys

BOX = 64 * 128 * 2
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "tma.csv")
rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
print("| pattern | CTAs (one per SM) | boxes in flight | cycles per box | implied latency | B/cycle per SM | total TB/s |")
print("|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['pattern']} | {r['ctas']} | {r['stages']} | {float(r['cycles_per_box']):.0f} | "
          f"{float(r['implied_latency_cycles']):.0f} | {float(r['bytes_per_cycle_per_sm']):.1f} | {float(r['total_tbps']):.2f} |")
one = {int(r["stages"]): float(r["cycles_per_box"]) for r in rows if r["pattern"] == "contiguous" and r["ctas"] == "1"}
rate = BOX / one[8]
print(f"\ntma_load_per_sm = {BOX} B / {one[8]:.1f} cycles = {rate:.2f} B/cycle")
print(f"tma_latency = {one[1]:.1f} - {BOX} / {rate:.2f} = {one[1] - BOX / rate:.1f} cycles")
