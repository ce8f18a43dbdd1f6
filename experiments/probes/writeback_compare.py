#!/usr/bin/env python3
"""Measured DRAM bytes of the write-back probe (writeback_run.sh's writeback.csv) beside iosim's
replay of the same schedule (writeback_trace.py) under each profile given, one row per distinct
configuration (the median of its repeats). --whole-l2 adds a column per profile for the same profile
without `l2.effective_size` (the model's L2 then holds l2.size). Usage:
  experiments/probes/writeback_compare.py writeback.csv PROFILE [PROFILE ...] [--whole-l2] [--iosim build/sim/iosim]
      [--sms 132]
"""
import argparse, csv, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_probe import replay_kernel


def replay(iosim, profile, config, sms):
    d = replay_kernel(iosim, profile, "writeback_trace.py", config, sms)["dram"]
    return d["write_bytes"], d["read_bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("profiles", nargs="+")
    ap.add_argument("--iosim", default="build/sim/iosim")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--whole-l2", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    columns = []  # (label, profile path)
    for p in a.profiles:
        name = os.path.basename(p)
        if a.whole_l2:
            d = os.path.join(tmp.name, str(len(columns)))
            os.makedirs(d)
            whole = os.path.join(d, name)
            with open(whole, "w") as f:
                f.writelines(l for l in open(p) if "effective_size" not in l)
            columns.append((f"{name[:-5]} with l2.size", whole))
        columns.append((f"{name[:-5]}", p))
    groups = {}
    for r in csv.DictReader(open(a.csv)):
        rm, rr = r.get("read_mib", "0"), r.get("read_rounds", "0")
        key = f"{r['mib']}:{r['rounds']}:{r['gap']}:{r['tail']}" + (f":{rm}:{rr}" if int(rm) else "")
        groups.setdefault(key, []).append(r)
    head = ["config (MiB:rounds:gap:tail[:readMiB:rounds])", "measured DRAM write MB", "measured DRAM read MB"]
    for label, _ in columns:
        head += [f"{label}: write MB", "read MB"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, rows in groups.items():
        med = lambda k: statistics.median(float(r[k]) for r in rows) / 1e6
        cells = [key, f"{med('dram_write_bytes'):.1f}", f"{med('dram_read_bytes'):.1f}"]
        for _, p in columns:
            w, rd = replay(a.iosim, p, key, a.sms)
            cells += [f"{w / 1e6:.1f}", f"{rd / 1e6:.1f}"]
        print("| " + " | ".join(cells) + " |")


main()
