#!/usr/bin/env python3
"""The README's speed-goal figures, printed from committed raw data: farm-bench's output of the goal
commands (experiments/results/2026-12-02-engine-speed-goals/farm-bench.txt: medians of wall time) and
what the approximations change on those runs (experiments/results/2026-12-02-fast-forward/compare.csv).

usage: engine_speed_report.py [--check README.md]
Without --check, prints the `speed-default` and `speed-goals` blocks; with it, fails (with a diff)
when the README's blocks are not this printout.
"""
import csv
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import docgen  # noqa: E402

BENCH = os.path.join(HERE, "results", "2026-12-02-engine-speed-goals", "farm-bench.txt")
COMPARE = os.path.join(HERE, "results", "2026-12-02-fast-forward", "compare.csv")


def medians():
    """{command: (median wall s, runs)} from farm-bench's report (one section per command)."""
    out, cmd, runs = {}, None, 0
    for line in open(BENCH):
        if line.startswith("A = "):
            cmd = line[4:].strip().replace("./build/sim/iosim", "iosim")
        elif m := re.match(r"runs counted: A (\d+)", line):
            runs = int(m.group(1))
        elif line.startswith("A wall s"):
            out[cmd] = (float(line.split()[4]), runs)
    return out


def worst_time_and_dram(rows):
    return 100 * max(max(abs(float(r["time_err"])), abs(float(r["dram_read_err"])), abs(float(r["dram_write_err"])))
                     for r in rows)


def blocks():
    m = medians()
    default, exact = m["iosim"], m["iosim --exact"]
    std = "iosim simulate --algo standard --seq 16384 --batch 4 --heads 16 --head-dim 64 --profile a100"
    ff, ffs = m[std + " --fast-forward"], m[std + " --fast-forward --l2-sample 16"]
    rows = list(csv.DictReader(open(COMPARE)))
    gpt2 = [r for r in rows if r["case"].startswith("gpt2-")]
    n16k = {r["mode"]: float(r["time_err"]) for r in rows if r["case"] == "standard-n16k-a100"}
    speed_default = (f"It ran in a median {default[0]:.2f} s on one core over {default[1]} runs of `farm-bench --pin 1`; "
                     f"`--exact`,\nthe engine without its two approximations, in {exact[0]:.1f} s over {exact[1]} runs "
                     "(`experiments/results/2026-12-02-engine-speed-goals`):")
    speed_goals = (
        "Issue 12's goals: the default run in 1 s, and standard attention at N = 16384 in 3 s.\n"
        "Both are met with the approximations, whose effect on those very runs is measured: the default run\n"
        f"in {default[0]:.2f} s (within {worst_time_and_dram(gpt2):.2f}% of the exact engine in time and DRAM bytes), "
        f"standard attention at N = 16384\nin {ff[0]:.2f} s with `--fast-forward` (time within "
        f"{100 * abs(n16k['fast-forward']):.2f}%) and {ffs[0]:.2f} s with `--l2-sample 16` too (within "
        f"{100 * abs(n16k['fast-forward+sample16']):.2f}%)\n(farm-bench medians on one core, "
        "`experiments/results/2026-12-02-engine-speed-goals`; the errors: `experiments/results/2026-12-02-fast-forward`).\n"
        f"The exact engine is not that fast ({exact[0]:.1f} s for the default run)."
    )
    return {"speed-default": speed_default, "speed-goals": speed_goals}


def main():
    b = blocks()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(max(docgen.check(sys.argv[2], text, "experiments/engine_speed_report.py", name) for name, text in b.items()))
    for name, text in b.items():
        print(f"{name}:\n{text}\n")


if __name__ == "__main__":
    main()
