#!/usr/bin/env python3
"""README.md's table from latency.csv (loaded_latency_probe.cu's output): per row the stream's TB/s, its
share of the highest, and the chase's mean (median) cycles over the idle row's (streamers = 0).

Usage: table.py [latency.csv]
"""
import csv, os, sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "latency.csv")
rows = list(csv.DictReader(open(path)))
idle = float(next(r for r in rows if r["streamers"] == "0")["mean_cycles"])
peak = max(float(r["stream_tbps"]) for r in rows)
print("| streamer SMs | stream TB/s | share of the peak stream | chase latency, mean (median) cycles | over idle |")
print("|---:|---:|---:|---:|---:|")
for r in rows:
    b, m = float(r["stream_tbps"]), float(r["mean_cycles"])
    print(f"| {r['streamers']} | {b:.2f} | {b / peak:.2f} | {m:.0f} ({r['median_cycles']}) | {m / idle:.2f} |")
