#!/usr/bin/env python3
"""Prints the A/B table of experiments/ab_bench.sh from its ab.jsonl: per shape,
the median over rounds of each binary's bench median (ms), B/A, and the spread
of each binary's rounds (max/min - 1), so a difference can be read against
the noise.

  python3 experiments/ab_report.py ab.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    runs = defaultdict(lambda: {"A": [], "B": []})
    order = []
    for line in open(path):
        r = json.loads(line)
        if r["shape"] not in runs:
            order.append(r["shape"])
        runs[r["shape"]][r["binary"]].append(r["median_ms"])
    print("| shape | A ms | B ms | B/A | spread A | spread B |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for shape in order:
        a, b = runs[shape]["A"], runs[shape]["B"]
        if not a or not b:
            print(f"| `{shape}` | {a} | {b} | - | - | - |")
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        ratios.append(mb / ma)
        print(f"| `{shape}` | {ma:.3f} | {mb:.3f} | {mb / ma:.3f} | {max(a) / min(a) - 1:.1%} | {max(b) / min(b) - 1:.1%} |")
    if ratios:
        print(f"\nB/A over {len(ratios)} shapes: median {statistics.median(ratios):.3f}, "
              f"min {min(ratios):.3f}, max {max(ratios):.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
