#!/usr/bin/env python3
"""Print the figures behind README.md's "Where the model misses" (experiments/validation) from the
committed CSVs: per GPU and kernel, over calibration and held-out rows alike, the number of rows,
the true median and range of predicted/measured time, of simulated/measured warp instructions
(sim_inst_total / meas_inst_executed) and of the SM clock the kernel ran at (meas_clock_hz:
Nsight Compute's cycles over its duration); for the DRAM-bound row kernels also the measured DRAM
read + write rate beside the profile's copy rate (dram.peak_bandwidth x dram.copy_fraction).

The wgmma GEMM's grid (<gpu>/grid-wgmma.csv) follows, all six GEMMs apart.

Usage: experiments/validation/misses.py [--check FILE]
--check FILE: exit 1 unless FILE's block between `<!-- misses:begin -->` and `<!-- misses:end -->`
equals what this prints.
"""
import argparse, glob, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from summarize import median, read_rows  # noqa: E402

BEGIN, END = "<!-- misses:begin -->", "<!-- misses:end -->"
KERNELS = ["fa2_fwd", "fa2_bwd_main", "fa1_fwd", "fa1_bwd", "std_fwd_qk", "std_fwd_pv", "std_bwd_dq",
           "std_fwd_softmax", "std_bwd_softmax", "fa3_fwd"]
ROW_KERNELS = ["std_fwd_softmax", "std_bwd_softmax"]


def num(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None


def spread(v, fmt):
    v = [x for x in v if x is not None]
    if not v:
        return "–"
    return f"{fmt(median(v))} ({fmt(min(v))}–{fmt(max(v))})"


def profile_copy_rate(profile_path):
    text = open(os.path.join(ROOT, profile_path)).read()
    peak = float(re.search(r"peak_bandwidth:\s*\{value:\s*([0-9.]+) GB/s", text).group(1)) * 1e9
    frac = float(re.search(r"copy_fraction:\s*\{value:\s*([0-9.]+)", text).group(1))
    return peak * frac


# The wgmma GEMM's grid (grid-wgmma.txt): every GEMM of the pass, each its own row.
WGMMA_KERNELS = ["std_fwd_qk", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_dq", "std_bwd_dk",
                 "std_fwd_softmax", "std_bwd_softmax"]


def block():
    out = ["<!-- printed by experiments/validation/misses.py from <gpu>/grid.csv and <gpu>/grid-wgmma.csv; "
           "do not edit by hand -->", ""]
    paths = [(p, KERNELS, "") for p in sorted(glob.glob(os.path.join(HERE, "*", "grid.csv")))]
    paths += [(p, WGMMA_KERNELS, ", the wgmma GEMM's grid")
              for p in sorted(glob.glob(os.path.join(HERE, "*", "grid-wgmma.csv")))]
    for path, kernels, what in paths:
        if os.path.basename(os.path.dirname(path)).startswith("legacy-"):
            continue
        rows = read_rows(path)
        gpu = rows[0]["gpu"].upper()
        out += [f"**{gpu}{what}** (`{os.path.relpath(path, ROOT)}`, every row):", "",
                "| kernel | rows | time pred/meas | instructions sim/meas | SM clock MHz |",
                "|---|---|---|---|---|"]
        for k in kernels:
            rs = [r for r in rows if r["kernel"] == k and num(r, "meas_time_s")]
            if not rs:
                continue
            t = [num(r, "sim_time_s") / num(r, "meas_time_s") for r in rs]
            inst = [num(r, "sim_inst_total") / num(r, "meas_inst_executed")
                    for r in rs if num(r, "sim_inst_total") and num(r, "meas_inst_executed")]
            clk = [num(r, "meas_clock_hz") / 1e6 for r in rs if num(r, "meas_clock_hz")]
            out.append(f"| {k} | {len(rs)} | {spread(t, lambda x: f'{x:.2f}')} | {spread(inst, lambda x: f'{x:.2f}')} "
                       f"| {spread(clk, lambda x: f'{x:.0f}')} |")
        copy = profile_copy_rate(rows[0]["profile"])
        out += ["", f"Row kernels' measured DRAM read + write rate, TB/s (profile's copy rate "
                f"{copy / 1e12:.2f} TB/s):"]
        for k in ROW_KERNELS:
            rate = [(num(r, "meas_dram_read_bytes") + num(r, "meas_dram_write_bytes")) / num(r, "meas_time_s") / 1e12
                    for r in rows if r["kernel"] == k and num(r, "meas_time_s") and num(r, "meas_dram_read_bytes") is not None]
            out.append(f"- {k}: {spread(rate, lambda x: f'{x:.2f}')}")
        out.append("")
    return "\n".join(out).strip("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check")
    a = ap.parse_args()
    text = block()
    if a.check:
        s = open(a.check).read()
        got = s[s.index(BEGIN) + len(BEGIN):s.index(END)].strip("\n")
        if got != text:
            sys.exit(f"{a.check}: the block between {BEGIN} and {END} differs from misses.py's output")
        print(f"{a.check}'s misses block matches experiments/validation/misses.py")
        return
    print(text)


if __name__ == "__main__":
    main()
