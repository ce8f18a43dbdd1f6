#!/usr/bin/env python3
"""The dirty-mix probe's kernel as an iosim trace, replayed on a profile: what iosim predicts for
each row of mix.csv beside what the GPU did.

Usage: mirror.py MIX_CSV [--iosim build/sim/iosim] [--profile h200] [--flags '...'] [--write-slots X]
Prints, per row: written and read bytes, measured DRAM writes and dirty bytes left at the end
(written - DRAM writes), and iosim's (replay --cold-l2: the L2 empty and clean at the start, as
ncu --cache-control all leaves it).
"""
import argparse, csv, json, os, subprocess, sys, tempfile

HOT = 8 << 20
VEC = 16


def trace(w_mib, r_mib, mode, order="mixed", sms=132, steps=16, threads=256, write_slots=0.0):
    ctas = 4 * sms
    slots = ctas * steps
    rps = (r_mib << 20) // VEC // slots // 8 * 8  # vectors read per CTA and step (whole lines)
    wps = (w_mib << 20) // VEC // slots // 8 * 8
    hot = mode == "hot"
    in_bytes = HOT if hot else max(r_mib << 20, 16)
    out = ["iosim-trace 3", "dtype fp16",
           f"tensor 0 in 10000000 {in_bytes}", f"tensor 1 out 40000000 {max(w_mib << 20, 16)}",
           f"tensor 2 slots 80000000 {max(w_mib << 20, 16)}",
           f"kernel write_while_reading pass=fwd grid={ctas},1,1 threads={threads} smem=0 regs=32 stages=1"]
    hot_vecs = HOT // VEC
    for c in range(ctas):
        out.append(f"cta {c} 0 0")
        phases = [(True, True)] if order == "mixed" else [(True, False), (False, True)]
        if order == "writes-first":
            phases.reverse()
        for k, (reads, writes) in enumerate(p for p in phases for _ in range(steps)):
            s = k % steps
            out.append("s 0 0 0")
            if hot and k == 0:  # the hot set's first pass: this CTA's share
                share = hot_vecs // ctas
                out.append(f"r 0 {0x10000000 + c * share * VEC:x} {share * VEC}")
            chunk = s * ctas + c
            if rps and reads:
                v0 = chunk * rps
                if hot:
                    v0 %= hot_vecs
                    first = min(rps, hot_vecs - v0)
                    out.append(f"r 0 {0x10000000 + v0 * VEC:x} {first * VEC}")
                    if first < rps:
                        out.append(f"r 0 {0x10000000:x} {(rps - first) * VEC}")
                else:
                    out.append(f"r 0 {0x10000000 + v0 * VEC:x} {rps * VEC}")
            if wps and writes:
                out.append(f"w 1 {0x40000000 + chunk * wps * VEC:x} {wps * VEC}")
                # --write-slots X: after each write, clean lines of a dummy tensor read for X slots per
                # written line (a read line takes 1.5 slots: its home, and a copy for a far reader)
                extra = int(wps * VEC * write_slots / 1.5) // 128 * 128
                if extra:
                    out.append(f"r 2 {0x80000000 + chunk * wps * VEC:x} {extra}")
    out.append("end")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mix")
    ap.add_argument("--iosim", default="build/sim/iosim")
    ap.add_argument("--profile", default="h200")
    ap.add_argument("--flags", default="")
    ap.add_argument("--write-slots", type=float, default=0.0,
                    help="extra clean L2 slots per written line (a test of writes that also take a near slot)")
    a = ap.parse_args()
    print("| W MiB | R MiB | reads | order | written MB | read MB | DRAM writes MB, measured | iosim | dirty left MB, measured | iosim |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for r in csv.DictReader(open(a.mix)):
        with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as f:
            f.write(trace(int(r["w_mib"]), int(r["r_mib"]), r["mode"], r.get("order") or "mixed",
                          write_slots=a.write_slots))
        res = subprocess.run([a.iosim, "replay", f.name, "--profile", a.profile, "--cold-l2", "--json", *a.flags.split()],
                             capture_output=True, text=True)
        os.unlink(f.name)
        if res.returncode:
            sys.exit(res.stderr)
        k = json.loads(res.stdout)["kernels"][0]
        written = int(r["written"])
        mw, sw = float(r["dram_write"]), k["dram"]["write_bytes"]
        print(f"| {r['w_mib']} | {r['r_mib']} | {r['mode']} | {r.get('order') or 'mixed'} | {written / 1e6:.1f} | {int(r['read']) / 1e6:.1f} | "
              f"{mw / 1e6:.1f} | {sw / 1e6:.1f} | {(written - mw) / 1e6:.1f} | {(written - sw) / 1e6:.1f} |")


if __name__ == "__main__":
    main()
