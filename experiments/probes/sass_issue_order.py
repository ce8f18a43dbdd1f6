#!/usr/bin/env python3
"""Where the compiler puts a kernel's exponentials: per MUFU.EX2 of one function's SASS, how many
instructions separate it from the previous one, and how many of the instructions between two
exponentials depend on the first (read its destination register). Source order issues each
exponential's packing and sum right behind it (gap 3-4, dependent); a list scheduler issues the
independent scaling FFMAs of later scores there instead (gap ~ the MUFU pipe's interval in
instructions, none dependent).
    sass_issue_order.py LISTING FUNCTION-SUBSTRING [--max N]
LISTING: cuobjdump -sass output (e.g. of kernels/fa2's fp16 objects; kept outside the repository).
"""
import argparse, collections, re, sys


def function_body(path, name):
    lines, inside = [], False
    for ln in open(path, errors="replace"):
        if "Function :" in ln:
            if inside:
                break
            inside = name in ln
            continue
        if inside:
            m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", ln)
            if m:
                lines.append(m.group(2).strip())
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("listing")
    ap.add_argument("function")
    ap.add_argument("--max", type=int, default=64, help="exponentials to report (the first step's)")
    a = ap.parse_args()
    code = function_body(a.listing, a.function)
    if not code:
        sys.exit(f"no function matching {a.function!r} in {a.listing}")
    mufu = [i for i, ins in enumerate(code) if ins.split()[0].startswith("MUFU.EX2")][: a.max]
    gaps = collections.Counter()
    dependent = 0
    between = 0
    for p, q in zip(mufu, mufu[1:]):
        gaps[q - p] += 1
        dst = code[p].split()[1].rstrip(",")
        for ins in code[p + 1:q]:
            between += 1
            ops = ins.split(None, 1)[1] if " " in ins else ""
            if re.search(r"\b" + re.escape(dst) + r"\b", ops.split(",", 1)[1] if "," in ops else ""):
                dependent += 1
    print(f"function: {a.function} ({len(code)} instructions)")
    print(f"MUFU.EX2 reported: {len(mufu)} (instructions {mufu[0]}..{mufu[-1]})")
    print("gap to the previous MUFU.EX2 (instructions): count")
    for g in sorted(gaps):
        print(f"  {g:3d}: {gaps[g]}")
    print(f"instructions between consecutive MUFU.EX2 that read the earlier one's result: {dependent} of {between}")


if __name__ == "__main__":
    main()
