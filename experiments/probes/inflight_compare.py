#!/usr/bin/env python3
"""The in-flight probe measured (inflight.csv, median of the repeats) beside iosim's replay of the same
loads (inflight_trace.py) under a profile: cycles per iteration and bytes per cycle per SM. `one`
and `all` replay 4 MiB of fresh data per CTA; `one_l2` a 4 MiB region read 6 and 12 times over, the
difference being 6 passes of L2 hits (the probe times a launch after a warm-up launch). Cycles are of
the profile's sm.clock (the probe's clock64 runs at the SM clock).
Usage: experiments/probes/inflight_compare.py inflight.csv PROFILE [--iosim build/sim/iosim]"""
import argparse, csv, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_probe import replay_kernel


def replay_cycles(iosim, profile, ctas, threads, k, passes):
    return replay_kernel(iosim, profile, "inflight_trace.py", ctas, threads, k, 4, passes)["time"]["cycles"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("profile")
    ap.add_argument("--iosim", default="build/sim/iosim")
    a = ap.parse_args()
    rows = [r for r in csv.DictReader(l for l in open(a.csv) if not l.startswith("#"))]
    groups = {}
    for r in rows:
        groups.setdefault((r["mode"], int(r["ctas"]), int(r["threads"]), int(r["k"])), []).append(r)
    label = {"one": "DRAM, one SM", "one_l2": "L2-resident, one SM", "all": "DRAM, every SM"}
    print(f"Profile: {os.path.basename(a.profile)}")
    print()
    print("| data | threads | K | measured cycles per iteration | iosim | measured B/cycle per SM | iosim |")
    print("|---|---|---|---|---|---|---|")
    for (mode, ctas, threads, k) in sorted(groups, key=lambda g: ({"one": 0, "one_l2": 1, "all": 2}[g[0]], g[2], g[3])):
        if threads != 512:
            continue
        g = groups[(mode, ctas, threads, k)]
        cpi = statistics.median(float(r["cycles_per_iteration"]) for r in g)
        bpc = statistics.median(float(r["bytes_per_cycle_per_sm"]) for r in g)
        step = k * threads * 16
        steps = (4 << 20) // step
        if mode == "one_l2":
            model = (replay_cycles(a.iosim, a.profile, ctas, threads, k, 12) -
                     replay_cycles(a.iosim, a.profile, ctas, threads, k, 6)) / (6 * steps)
        else:
            model = replay_cycles(a.iosim, a.profile, ctas, threads, k, 1) / steps
        print(f"| {label[mode]} | {threads} | {k} | {cpi:.0f} | {model:.0f} | {bpc:.1f} | {step / model:.1f} |")


if __name__ == "__main__":
    main()
