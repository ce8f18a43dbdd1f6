#!/usr/bin/env python3
"""The in-flight probe's table (experiments/probes/inflight_probe.cu): per mode, threads and K, the
median over the repeats of bytes per cycle per SM and cycles per iteration, and the iteration's
cycles over K = 1's (1.0 while the SM takes all K x threads loads at once; ~2 when half wait).
Usage: experiments/probes/inflight_table.py inflight.csv"""
import csv, statistics, sys


def main():
    rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
    groups = {}
    for r in rows:
        groups.setdefault((r["mode"], int(r["threads"]), int(r["k"])), []).append(r)
    print("| data | CTAs | threads | K (16 B loads per thread) | bytes requested at once per SM | B/cycle per SM | cycles per iteration | / K = 1 |")
    print("|---|---|---|---|---|---|---|---|")
    order = {"one": 0, "one_l2": 1, "all": 2}
    label = {"one": "DRAM, one SM", "one_l2": "L2-resident, one SM", "all": "DRAM, every SM"}
    for (mode, threads, k) in sorted(groups, key=lambda g: (order[g[0]], g[1], g[2])):
        g = groups[(mode, threads, k)]
        bpc = statistics.median(float(r["bytes_per_cycle_per_sm"]) for r in g)
        cpi = statistics.median(float(r["cycles_per_iteration"]) for r in g)
        base = statistics.median(float(r["cycles_per_iteration"]) for r in groups[(mode, threads, 1)])
        print(f"| {label[mode]} | {g[0]['ctas']} | {threads} | {k} | {int(g[0]['requested_in_flight_bytes']) // 1024} KiB | "
              f"{bpc:.1f} | {cpi:.0f} | {cpi / base:.2f} |")


if __name__ == "__main__":
    main()
