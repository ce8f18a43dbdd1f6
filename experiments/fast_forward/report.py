#!/usr/bin/env python3
"""The fast-forward accuracy table of docs/engine.md and its one-sentence summary in the README,
printed from the committed CSV.

usage: report.py [--check DOC]   (CSV: experiments/results/2026-12-02-fast-forward/compare.csv)
With --check, fails (with a diff) when DOC's `fast-forward-table` block (docs/engine.md) or
`fast-forward-summary` block (README.md) is not this printout; without, prints both.
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


def summary(rows):
    def worst(key):
        return 100 * max(abs(float(r[key])) for r in rows)
    dram = max(worst("dram_read_err"), worst("dram_write_err"))
    return (f"over {len(rows)} runs of {len({r['case'] for r in rows})} cases, time within {worst('time_err'):.2f}% "
            f"of the exact engine's and\nDRAM bytes within {dram:.2f}% (read and write).\n")


def main():
    with open(CSV) as f:
        rows = list(csv.DictReader(f))
    blocks = {"fast-forward-table": table(rows), "fast-forward-summary": summary(rows)}
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        doc = open(sys.argv[2], encoding="utf-8").read()
        names = [n for n in blocks if docgen.block_of(doc, n) is not None] or list(blocks)
        sys.exit(max(docgen.check(sys.argv[2], blocks[n], "experiments/fast_forward/report.py", n) for n in names))
    for name, text in blocks.items():
        print(f"{name}:\n{text}")


if __name__ == "__main__":
    main()
