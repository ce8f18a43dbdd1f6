#!/usr/bin/env python3
"""Compare Nsight Compute counters (experiments/validate_counters.sh) with iosim's predictions.

Usage: experiments/compare_counters.py NCU_DIR PROFILE [--iosim build/sim/iosim] [--md OUT.md]
                                      [--configs experiments/validate_configs.txt]
For each configuration of the configuration file (default experiments/validate_configs.txt), runs
`iosim simulate FLAGS --profile PROFILE --cold-l2 --json` (ncu flushes caches before each kernel)
and prints, per kernel, measured vs predicted:
  SM<->L2 bytes (l1tex xbar counters vs the trace's exact count),
  DRAM read / write bytes, L2 read lookups and their hit rate, and time.
experiments/validation/build_csv.py GPU MEASURED_DIR --legacy and summarize.py give the same
comparison with the bench medians and summary statistics.
"""
import argparse, csv, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def configs(path):
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            name, regex, count, flags = [x.strip() for x in line.split(";")]
            yield name, flags.split()


def ncu_rows(path):
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [r for r in rows if r.get("Kernel Name") and r.get("gpu__time_duration.sum", "").replace(",", "").replace(".", "").isdigit()]


def num(r, k):
    return float(r[k].replace(",", ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ncu_dir")
    ap.add_argument("profile")
    ap.add_argument("--iosim", default="build/sim/iosim")
    ap.add_argument("--md")
    ap.add_argument("--configs", default=os.path.join(HERE, "validate_configs.txt"))
    a = ap.parse_args()
    out = []
    p = out.append
    name_file = os.path.join(a.ncu_dir, "device-name.txt")  # validate_counters.sh since 2026-11-22
    dev = open(name_file if os.path.exists(name_file) else os.path.join(a.ncu_dir, "device.txt")).read().strip()
    p(f"Device: {dev}; iosim profile: {a.profile} (cold L2 per kernel, as ncu measures)\n")
    p("| config | kernel | SM<->L2 MB meas / pred | DRAM rd MB meas / pred | DRAM wr MB meas / pred | L2 rd lookups M meas / pred | lookup hit % meas / pred | time us meas / pred |")
    p("|---|---|---|---|---|---|---|---|")
    ratios = {"dram_rd": [], "time": []}
    for name, flags in configs(a.configs):
        path = os.path.join(a.ncu_dir, name + ".csv")
        if not os.path.exists(path):
            p(f"| {name} | (no ncu output) | | | | | | |")
            continue
        rows = ncu_rows(path)
        sim = json.loads(subprocess.run([a.iosim, "simulate", *flags, "--profile", a.profile, "--cold-l2", "--json"],
                                        check=True, capture_output=True, text=True).stdout)
        kernels = sim["kernels"]
        if len(rows) != len(kernels):
            p(f"| {name} | ncu saw {len(rows)} kernels, iosim {len(kernels)} | | | | | | |")
            continue
        for r, k in zip(rows, kernels):
            xbar = num(r, "l1tex__m_xbar2l1tex_read_bytes.sum") + num(r, "l1tex__m_l1tex2xbar_write_bytes.sum")
            pred_xbar = k["global"]["read_bytes"] + k["global"]["write_bytes"]
            drd, dwr = num(r, "dram__bytes_read.sum"), num(r, "dram__bytes_write.sum")
            look = num(r, "lts__t_sectors_srcunit_tex_op_read.sum")
            hit = num(r, "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")
            t = num(r, "gpu__time_duration.sum") / 1e3
            l2 = k["l2"]
            rd = l2["by_kind"]["read"]  # ncu's counters below are read lookups only
            plook = rd["lookups"]
            phit = 100.0 * rd["lookup_hits"] / rd["lookups"] if rd["lookups"] else 0.0
            pt = k["time"]["seconds"] * 1e6
            ratios["dram_rd"].append(k["dram"]["read_bytes"] / drd if drd else float("nan"))
            ratios["time"].append(pt / t if t else float("nan"))
            p(f"| {name} | {k['name']} | {xbar/1e6:.1f} / {pred_xbar/1e6:.1f} | {drd/1e6:.1f} / {k['dram']['read_bytes']/1e6:.1f} | "
              f"{dwr/1e6:.1f} / {k['dram']['write_bytes']/1e6:.1f} | {look/1e6:.2f} / {plook/1e6:.2f} | "
              f"{100*hit/look if look else 0:.1f} / {phit:.1f} | {t:.1f} / {pt:.1f} |")
    for key, v in ratios.items():
        v = [x for x in v if x == x]
        if v:
            p(f"\npredicted/measured {key}: min {min(v):.2f}, median {sorted(v)[len(v)//2]:.2f}, max {max(v):.2f} over {len(v)} kernels")
    text = "\n".join(out)
    print(text)
    if a.md:
        open(a.md, "w").write(text + "\n")


if __name__ == "__main__":
    main()
