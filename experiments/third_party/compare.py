#!/usr/bin/env python3
"""iosim's predictions beside PyTorch's attention kernels measured on the GPU (experiments/third_party).

The kernels are not ours: the flash backend is Dao's FlashAttention-2 (cutlass, 4 warps per 128-row
forward tile, 8 per backward tile), the cuDNN backend a Hopper wgmma kernel of NVIDIA's. iosim models
its own kernels (their schedules and warp programs, kernels/); here it gets each PyTorch kernel's
algorithm and tiles (the flash kernels' template arguments, read from their names) and nothing else,
with the profile as shipped. So the DRAM bytes test the memory model on a schedule it shares with
FA2 (same tiles, same CTA order: query blocks fastest, then batch and head), and the times test how
far our kernels' timing transfers to another implementation of the same algorithm. cuDNN's forward
is set against iosim's `fa3` (our FA3-style kernel: wgmma, 128 x 128 tiles, two consumer
warpgroups), the nearest algorithm iosim has; its backward has no iosim counterpart and is listed
as measured only.

Per kernel: Nsight Compute's gpu__time_duration and dram__bytes_{read,write} of one pass with the L2
flushed before each kernel (run.sh), against `iosim simulate ... --cold-l2`; per pass: the CUDA-event
median of bench_attention.py (inputs rotated past the L2) against `iosim simulate` with the L2 kept
across the pass's kernels, as experiments/validation/build_csv.py does for ours.

  experiments/third_party/compare.py RAW_DIR [--iosim build/sim/iosim] [--profile h200-sxm-141gb] [--csv OUT.csv]
"""
import argparse
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def shapes():
    out = []
    for line in open(os.path.join(HERE, "shapes.txt")):
        if line.strip() and not line.startswith("#"):
            name, d, n, b, h, causal = line.split()
            out.append(dict(name=name, d=int(d), n=int(n), b=int(b), h=int(h), causal=causal == "1"))
    return out


def ncu_kernels(path):
    """The profiled kernels of one ncu --csv --page raw file, in launch order."""
    if not os.path.exists(path):
        return []
    lines = [l for l in open(path) if l.startswith('"')]
    rows = list(csv.reader(io.StringIO("".join(lines))))
    if not rows:
        return []
    head = rows[0]
    col = {k: i for i, k in enumerate(head)}

    def num(r, k):
        return float(r[col[k]].replace(",", ""))

    out = []
    for r in rows[1:]:
        if len(r) != len(head) or not r[col["Kernel Name"]] or r[col["ID"]] == "":
            continue
        try:
            out.append(dict(name=r[col["Kernel Name"]], time_s=num(r, "gpu__time_duration.sum") * 1e-9,
                            dram_read=num(r, "dram__bytes_read.sum"), dram_write=num(r, "dram__bytes_write.sum"),
                            lookups=num(r, "lts__t_sectors_srcunit_tex_op_read.sum"),
                            grid=num(r, "launch__grid_size"), block=num(r, "launch__block_size")))
        except ValueError:  # the units row
            continue
    return out


def flash_tile(kernels):
    """(block_m, block_n, warps) from Flash_{fwd,bwd}_kernel_traits<d, M, N, warps, ...> in a kernel's name."""
    for k in kernels:
        m = re.search(r"Flash_(?:fwd|bwd)_kernel_traits<(\d+), (\d+), (\d+), (\d+)", k["name"])
        if m:
            return int(m.group(2)), int(m.group(3)), int(m.group(4))
    return None


def simulate(iosim, profile, s, algo, pass_, tile, cold):
    args = [iosim, "simulate", "--profile", profile, "--algo", algo, "--pass", pass_, "--batch", str(s["b"]),
            "--heads", str(s["h"]), "--seq", str(s["n"]), "--head-dim", str(s["d"]), "--layout", "bshd", "--json"]
    if s["causal"]:
        args.append("--causal")
    if tile:
        args += ["--block-m", str(tile[0]), "--block-n", str(tile[1])]
    if cold:
        args.append("--cold-l2")
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"compare: {' '.join(args)} failed:\n{r.stderr}")
    return json.loads(r.stdout)


def bench_medians(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            rec = json.loads(line)
            if "median_ms" in rec:
                key = (rec["head_dim"], rec["seq"], rec["batch"], rec["heads"], bool(rec["causal"]), rec["backend"],
                       rec["pass"])
                out[key] = rec["median_ms"] * 1e-3
    return out


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(x, spec=".2f"):
    return "" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--iosim", default="build/sim/iosim")
    ap.add_argument("--profile", default="h200-sxm-141gb")
    ap.add_argument("--csv", help="write every row here too")
    a = ap.parse_args()
    bench = bench_medians(os.path.join(a.raw, "bench.jsonl"))
    rows = []
    passes = []
    for s in shapes():
        key = (s["d"], s["n"], s["b"], s["h"], s["causal"])
        for backend, pass_, algo in (("flash", "fwd", "fa2"), ("flash", "bwd", "fa2"), ("cudnn", "fwd", "fa3"),
                                     ("cudnn", "bwd", None)):
            meas = ncu_kernels(os.path.join(a.raw, f"ncu-{s['name']}-{backend}-{pass_}.csv"))
            meas_pass = bench.get(key + (backend, pass_))
            if algo is None:
                passes.append(dict(shape=s["name"], backend=backend, pass_=pass_, tile="", meas=meas_pass, sim=None))
                continue
            tile = flash_tile(meas) if backend == "flash" else None
            if backend == "flash" and tile is None:
                raise SystemExit(f"compare: no Flash_*_kernel_traits in the kernels of {s['name']} {pass_}")
            cold = simulate(a.iosim, a.profile, s, algo, pass_, tile, True)
            warm = simulate(a.iosim, a.profile, s, algo, pass_, tile, False)
            tile_text = f"{tile[0]}x{tile[1]}, {tile[2]} warps" if tile else "128x128 (ours)"
            passes.append(dict(shape=s["name"], backend=backend, pass_=pass_, tile=tile_text, meas=meas_pass,
                               sim=warm["time"]["seconds"]))
            # cuDNN's forward is one kernel; PyTorch's flash passes launch exactly FA2's kernels (the
            # backward's three in FA2's order) and may add small elementwise ones, which have no trace.
            ours = [m for m in meas if backend == "cudnn" or "flash_" in m["name"]]
            if len(ours) != len(cold["kernels"]):
                raise SystemExit(f"compare: {s['name']} {backend} {pass_}: ncu has {len(ours)} kernels, iosim "
                                 f"{len(cold['kernels'])}")
            for m, k in zip(ours, cold["kernels"]):
                dram = k["dram"]
                rows.append(dict(
                    shape=s["name"], backend=backend, pass_=pass_, tile=tile_text, kernel=k["name"],
                    ncu_kernel=re.sub(r"<.*", "", m["name"]).replace("void ", "")[:60],
                    meas_time_s=m["time_s"], sim_time_s=k["time"]["seconds"],
                    meas_dram=m["dram_read"] + m["dram_write"], sim_dram=dram["read_bytes"] + dram["write_bytes"],
                    meas_dram_read=m["dram_read"], sim_dram_read=dram["read_bytes"],
                    meas_dram_write=m["dram_write"], sim_dram_write=dram["write_bytes"],
                    meas_lookups=m["lookups"], sim_lookups=k["l2"]["by_kind"]["read"]["lookups"],
                    meas_grid=m["grid"], sim_ctas=k.get("ctas", "")))
            extra = [m for m in meas if m not in ours]
            if extra:
                print(f"note: {s['name']} {backend} {pass_}: {len(extra)} more kernel(s) without an iosim "
                      f"counterpart: " + ", ".join(re.sub(r"<.*", "", x["name"])[:50] for x in extra), file=sys.stderr)

    print(f"## Per kernel (Nsight Compute, L2 flushed before each; iosim --cold-l2, profile {a.profile})\n")
    print("| shape | backend | pass | tile | kernel | time sim/meas | DRAM sim/meas | DRAM GB meas | lookups sim/meas | grid meas / iosim CTAs |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['shape']} | {r['backend']} | {r['pass_']} | {r['tile']} | {r['ncu_kernel']} "
              f"| {fmt(ratio(r['sim_time_s'], r['meas_time_s']))} | {fmt(ratio(r['sim_dram'], r['meas_dram']))} "
              f"| {r['meas_dram'] / 1e9:.3f} | {fmt(ratio(r['sim_lookups'], r['meas_lookups']))} "
              f"| {int(r['meas_grid'])} / {r['sim_ctas']} |")

    print("\n## Per pass (CUDA events, median of 30, inputs rotated past the L2; iosim with the L2 kept across the pass)\n")
    print("| shape | backend | pass | iosim's algorithm and tile | measured ms | iosim ms | iosim / measured |")
    print("|---|---|---|---|---:|---:|---:|")
    for p in passes:
        algo = {"flash": "fa2", "cudnn": "fa3"}[p["backend"]] if p["sim"] is not None else "none"
        print(f"| {p['shape']} | {p['backend']} | {p['pass_']} | {algo} {p['tile']} | {fmt(p['meas'] and p['meas'] * 1e3, '.3f')} "
              f"| {fmt(p['sim'] and p['sim'] * 1e3, '.3f')} | {fmt(ratio(p['sim'], p['meas']))} |")

    print("\n## Summary (mean |iosim / measured - 1|, worst in brackets)\n")
    print("| what | rows | time | DRAM read + write | L2 read lookups |")
    print("|---|---:|---:|---:|---:|")

    def err(vals):
        v = [abs(x - 1) for x in vals if x is not None]
        return f"{100 * statistics.mean(v):.1f}% ({100 * max(v):.1f}%)" if v else ""

    for label, sel in (("flash fwd kernels (fa2)", lambda r: r["backend"] == "flash" and r["pass_"] == "fwd"),
                       ("flash bwd main kernels (fa2)", lambda r: r["backend"] == "flash" and r["kernel"] == "fa2_bwd_main"),
                       ("flash bwd row kernels (fa2)", lambda r: r["backend"] == "flash" and r["pass_"] == "bwd"
                        and r["kernel"] != "fa2_bwd_main"),
                       ("cuDNN fwd kernels (fa3)", lambda r: r["backend"] == "cudnn")):
        sel_rows = [r for r in rows if sel(r)]
        print(f"| {label} | {len(sel_rows)} | {err([ratio(r['sim_time_s'], r['meas_time_s']) for r in sel_rows])} "
              f"| {err([ratio(r['sim_dram'], r['meas_dram']) for r in sel_rows])} "
              f"| {err([ratio(r['sim_lookups'], r['meas_lookups']) for r in sel_rows])} |")
    for label, sel in (("flash fwd passes", ("flash", "fwd")), ("flash bwd passes", ("flash", "bwd")),
                       ("cuDNN fwd passes", ("cudnn", "fwd"))):
        ps = [p for p in passes if (p["backend"], p["pass_"]) == sel]
        print(f"| {label} | {len(ps)} | {err([ratio(p['sim'], p['meas']) for p in ps])} | | |")

    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
