#!/usr/bin/env python3
"""The fast-forward accuracy table of docs/engine.md, printed from the committed CSV.

usage: report.py [--check DOC]   (CSV: experiments/results/2026-12-02-fast-forward/compare.csv)
With --check, fails (with a diff) when DOC's `fast-forward-table` block is not this printout.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import docgen  # noqa: E402

CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", "2026-12-02-fast-forward", "compare.csv")


def pct(v):
    return f"{100 * float(v):+.2f}%"


def table(rows):
    out = ["| case | mode | host s exact → approx | steps run | time | DRAM read | DRAM write | L2 hit rate | lookup hit rate | kernel off most (time) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        run_share = 1 - int(r["skipped_steps"]) / int(r["steps"])
        out.append(f"| {r['case']} | {r['mode']} | {float(r['exact_host_s']):.2f} → {float(r['approx_host_s']):.2f} | "
                   f"{100 * run_share:.0f}% | {pct(r['time_err'])} | {pct(r['dram_read_err'])} | {pct(r['dram_write_err'])} | "
                   f"{float(r['hit_rate_points']):+.2f} pt | {float(r['lookup_hit_rate_points']):+.2f} pt | "
                   f"{r['worst_kernel']} {pct(r['worst_kernel_time_err'])} |")
    def worst(key):
        return max(abs(float(r[key])) for r in rows)
    out.append("")
    out.append(f"Largest over these {len(rows)} runs: time {100 * worst('time_err'):.2f}%, DRAM read "
               f"{100 * worst('dram_read_err'):.2f}%, DRAM write {100 * worst('dram_write_err'):.2f}%, L2 hit rate "
               f"{worst('hit_rate_points'):.2f} points, lookup hit rate {worst('lookup_hit_rate_points'):.2f} points.")
    return "\n".join(out) + "\n"


def main():
    with open(CSV) as f:
        rows = list(csv.DictReader(f))
    text = table(rows)
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(docgen.check(sys.argv[2], text, "experiments/fast_forward/report.py", "fast-forward-table"))
    print(text, end="")


if __name__ == "__main__":
    main()
