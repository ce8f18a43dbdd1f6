#!/usr/bin/env python3
"""Stall reasons per issued instruction from experiments/probes/stalls.sh's CSVs, one row per
kernel: warps active per SMSP, cycles per issued instruction per warp (CPI: the stall reasons'
sum, 'selected' included), the SM clock, and each reason.

Usage: experiments/probes/stalls_table.py DIR [--reasons a,b,...]
"""
import csv, glob, os, sys

REASONS = ["selected", "wait", "branch_resolving", "no_instruction", "long_scoreboard", "short_scoreboard",
           "barrier", "math_pipe_throttle", "mio_throttle", "lg_throttle", "not_selected", "dispatch_stall",
           "membar", "sleeping", "misc", "drain", "tex_throttle", "imc_miss"]


def rows(path):
    lines = list(csv.reader(open(path)))
    head = next((i for i, r in enumerate(lines) if "Kernel Name" in r), None)
    if head is None:
        return
    h = lines[head]
    for r in lines[head + 2:]:
        if len(r) == len(h):
            yield dict(zip(h, r))


def num(d, key):
    try:
        return float(d.get(key, "").replace(",", ""))
    except ValueError:
        return float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("| config | kernel | warps/SMSP | CPI | MHz | branch instr % | " + " | ".join(REASONS) + " |")
    print("|---" * (6 + len(REASONS)) + "|")
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
        name = os.path.basename(path)[:-4]
        seen = {}
        for d in rows(path):
            kernel = d["Kernel Name"].replace("<unnamed>", "").split("(")[0].split("<")[0].split("::")[-1].replace("void ", "")
            st = {k.split("stalled_")[1].split("_per_issue")[0]: num(d, k) for k in d
                  if k.startswith("smsp__average_warps_issue_stalled_") and k.endswith("_per_issue_active.ratio")}
            cpi = sum(v for v in st.values() if v == v)
            inst = num(d, "smsp__inst_executed.sum")
            br = num(d, "smsp__sass_inst_executed_op_branch.sum")
            line = (f"| {name} | {kernel} | {num(d, 'smsp__warps_active.avg.per_cycle_active'):.2f} | {cpi:.2f} | "
                    f"{num(d, 'sm__cycles_elapsed.avg.per_second') / 1e6:.0f} | {100 * br / inst:.1f} | " +
                    " | ".join(f"{st.get(r, float('nan')):.2f}" for r in REASONS) + " |")
            if seen.get(kernel) != line:  # repeated launches of one kernel: first of each distinct line
                print(line)
                seen[kernel] = line


if __name__ == "__main__":
    main()
