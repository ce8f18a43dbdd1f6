#!/usr/bin/env python3
"""The stall counts the compiler writes into each instruction's control code, per kernel.

    scripts/sass_stalls.py LISTING.sass [...] > stalls.csv     (cuobjdump -sass output; the GPU machine has cuobjdump)
    scripts/sass_stalls.py --summary stalls.csv

Every sm_70+ instruction carries, in bits 41-44 of its second 64-bit word, the cycles its warp waits
before it may issue its next instruction (the stall count; 0 is read as 1). Nsight Compute reports the
time warps spend so as `wait` stalls. Per kernel function the script prints the instruction count and
the mean of max(1, stall) over all its instructions; --summary prints the median of those means over
the functions of each listing and over all of them: the SM model's warp_issue_interval for sm_90
(sim/engine/sm_model.cpp).
"""
import csv
import re
import statistics
import sys

FUNC = re.compile(r"^\s*Function : (\S+)")
INS = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+.*?;\s*/\* 0x[0-9a-f]+ \*/")
HI = re.compile(r"^\s*/\* (0x[0-9a-f]+) \*/\s*$")


def stalls(path):
    """{function: [stall count of each instruction]}."""
    out, cur, prev_ins = {}, None, False
    for line in open(path):
        m = FUNC.match(line)
        if m:
            cur, prev_ins = m.group(1), False
            out[cur] = []
            continue
        if cur and INS.match(line):
            prev_ins = True
            continue
        m = HI.match(line)
        if cur and prev_ins and m:
            out[cur].append((int(m.group(1), 16) >> 41) & 0xF)
        prev_ins = False
    return out


def listing_rows(paths):
    w = csv.writer(sys.stdout)
    w.writerow(["listing", "function", "instructions", "mean_stall"])
    for path in paths:
        for fn, st in stalls(path).items():
            if st:
                w.writerow([path.rsplit("/", 1)[-1], fn, len(st), f"{sum(max(1, s) for s in st) / len(st):.4f}"])


def summary(path):
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        by.setdefault(r["listing"], []).append(float(r["mean_stall"]))
    for listing, v in by.items():
        print(f"{listing}: {len(v)} functions, median {statistics.median(v):.2f} (min {min(v):.2f}, max {max(v):.2f})")
    allv = [float(r["mean_stall"]) for r in rows]
    print(f"all: {len(allv)} functions, median {statistics.median(allv):.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--summary":
        summary(sys.argv[2])
    else:
        listing_rows(sys.argv[1:])
