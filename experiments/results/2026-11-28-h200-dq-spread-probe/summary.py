#!/usr/bin/env python3
"""Per number of REDs a warp: the 8 warps' spread at the end of their GEMM, the step's length, and each warp's
RED phase (median over the recorded CTAs and steps), from dq_spread.csv.

    python3 summary.py [dq_spread.csv]
"""
import collections
import csv
import statistics
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "dq_spread.csv"
rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
steps = collections.defaultdict(list)
for r in rows:
    steps[(r.get("shared_rows", "0"), int(r["reds"]), r["cta"], r["step"])].append(r)
print("| rows reduced into | REDs a warp (bytes a CTA) | GEMM end: spread of the 8 warps, cycles | step, cycles "
      "| a warp's RED phase, cycles |")
print("|---|---|---|---|---|")
for shared, reds in sorted({k[:2] for k in steps}):
    spread, length, phase = [], [], []
    for (sh, rd, _, _), ws in steps.items():
        if (sh, rd) != (shared, reds):
            continue
        ends = [int(w["gemm_end"]) for w in ws]
        spread.append(max(ends) - min(ends))
        length.append(int(ws[0]["step_length"]))
        phase.append(statistics.median(int(w["reds_end"]) - int(w["gemm_end"]) for w in ws))
    where = "the same 64 rows for every CTA" if shared == "1" else "each CTA its own"
    print(f"| {where} | {reds} ({reds * 256 * 8 // 1024} KiB) | {statistics.median(spread):.0f} ({min(spread)}-{max(spread)}) "
          f"| {statistics.median(length):.0f} | {statistics.median(phase):.0f} |")
