#!/usr/bin/env python3
"""Before and after, per kernel, from Nsight Compute's CSVs of the same grid configurations measured on
the H200 with the kernels of 2026-11-27 (BEFORE) and of 2026-12-02 (AFTER: FA3's O staged in shared
memory, convert_dq's consecutive float4 loads): SM<->L2 read and write bytes, DRAM bytes, kernel time,
and the pass's bench median.
    before_after.py BEFORE_DIR AFTER_DIR [NAME_REGEX]"""
import csv, json, os, re, sys, statistics

MET = {"xbar_read": "l1tex__m_xbar2l1tex_read_bytes.sum", "xbar_write": "l1tex__m_l1tex2xbar_write_bytes.sum",
       "dram_read": "dram__bytes_read.sum", "dram_write": "dram__bytes_write.sum", "time": "gpu__time_duration.sum"}


def ncu(path):
    lines = [l for l in open(path) if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    out = []
    for r in rows:
        try:
            int(r["ID"])
        except (KeyError, ValueError):
            continue
        k = re.sub(r"^void |<.*$|\(.*$", "", r["Kernel Name"]).split("::")[-1]
        out.append((k, {m: float(r[c].replace(",", "")) for m, c in MET.items() if r.get(c, "") not in ("", None)}))
    return out


def bench(path):
    return json.load(open(path))["median_ms"] * 1e3 if os.path.exists(path) else None


def main():
    before, after = sys.argv[1], sys.argv[2]
    rx = re.compile(sys.argv[3] if len(sys.argv) > 3 else ".")
    names = sorted(f[:-4] for f in os.listdir(after) if f.endswith(".csv") and rx.search(f))
    print("| config | kernel | xbar read a/b | xbar write a/b | DRAM a/b | time a/b (us) |")
    print("|---|---|---|---|---|---|")
    ratios = {}
    for n in names:
        b, a = ncu(os.path.join(before, n + ".csv")), ncu(os.path.join(after, n + ".csv"))
        for (kb, mb), (ka, ma) in zip(b, a):
            dr = lambda m: (m["dram_read"] + m["dram_write"])
            cells = [ma["xbar_read"] / mb["xbar_read"], ma["xbar_write"] / mb["xbar_write"], dr(ma) / dr(mb)]
            ratios.setdefault(ka, []).append(ma["time"] / mb["time"])
            print(f"| {n} | {ka} | " + " | ".join(f"{x:.4f}" for x in cells) +
                  f" | {ma['time'] / 1e3:.1f} / {mb['time'] / 1e3:.1f} |")
        pb, pa = bench(os.path.join(before, n + ".bench.json")), bench(os.path.join(after, n + ".bench.json"))
        if pb and pa:
            ratios.setdefault("pass (bench median)", []).append(pa / pb)
    print()
    print("| kernel | n | time after/before: median (min-max) |")
    print("|---|---|---|")
    for k, v in ratios.items():
        print(f"| {k} | {len(v)} | {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}) |")


main()
