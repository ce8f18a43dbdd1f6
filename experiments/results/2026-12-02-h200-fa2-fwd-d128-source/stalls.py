#!/usr/bin/env python3
"""The README's first look, printed from the per-instruction CSVs here: per case, the shares of the
warp-state samples by stall reason (Nsight Compute's stall_* columns, all and not-issued alike) and by
opcode (the Warp Stall Sampling (All Samples) column).

    experiments/results/2026-12-02-h200-fa2-fwd-d128-source/stalls.py
"""
import collections, csv, lzma, os

HERE = os.path.dirname(os.path.abspath(__file__))
for tile in ("128x128", "128x64"):
    lines = lzma.open(os.path.join(HERE, f"fa2fwd-d128-n3072-bh32-{tile}-source.csv.xz"), "rt").read().splitlines()
    start = next(i for i, l in enumerate(lines) if "Address" in l[:20])
    rows = list(csv.reader(lines[start:]))
    head, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
    reasons = [i for i, c in enumerate(head) if c.startswith("stall_")]
    by_reason = collections.Counter()
    for r in body:
        for i in reasons:
            by_reason[head[i]] += float(r[i] or 0)
    total = sum(by_reason.values())
    print(f"{tile}: stall reasons (share of samples)")
    for k, v in by_reason.most_common(8):
        print(f"  {k:32s} {v / total:.3f}")
    si, src = head.index("Warp Stall Sampling (All Samples)"), head.index("Source")
    by_op = collections.Counter()
    for r in body:
        words = [w for w in r[src].split() if not w.startswith("@")]
        by_op[words[0].split(".")[0] if words else ""] += float(r[si] or 0)
    total = sum(by_op.values())
    print(f"{tile}: samples by opcode")
    for k, v in by_op.most_common(6):
        print(f"  {k:12s} {v / total:.3f}")
