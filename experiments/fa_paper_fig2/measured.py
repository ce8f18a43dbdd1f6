#!/usr/bin/env python3
"""Turns measure.sh's raw files into measured-<gpu>.csv: one row per point of points.txt, the
measured time and DRAM bytes beside the simulated ones (results-<gpu>.csv, from run.py).

Usage: experiments/fa_paper_fig2/measured.py OUTDIR [OUTDIR ...] [--gpu h100|h200]
       experiments/fa_paper_fig2/measured.py --rejoin [--gpu h100|h200]
OUTDIR: what measure.sh wrote (several: e.g. one per part, read as one). The GPU is read from
OUTDIR's device-name.txt unless --gpu is given. --rejoin: keep measured-<gpu>.csv's measured columns
and take the simulated ones again from results-<gpu>.csv (after run.py ran again).

Columns: meas_ms is the CUDA-event median of the whole pass (`iosim-kernels bench`), set against
sim_ms, the pass simulated with the L2 carried across its kernels. meas_dram_bytes is DRAM read +
write summed over the pass's kernels under `ncu --cache-control all` (each kernel starts with a
flushed L2), set against sim_dram_bytes, simulated the same way (`--cold-l2`). meas_ncu_ms: ncu's
gpu__time_duration summed over the kernels (one launch each, flushed L2). status: ok, or why a
point has no measurement (then its measured columns are empty).
"""
import argparse
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "validation"))
from build_csv import find_file, ncu_rows, num  # noqa: E402  (the validation grid's ncu parsing)
from points import PROFILES, read_points  # noqa: E402

GPUS = ("h100", "h200")
MEASURED = ["meas_ms", "meas_dram_bytes", "meas_ncu_ms", "status"]
SIMULATED = ["sim_ms", "sim_dram_bytes", "profile"]
COLUMNS = ["gpu", "panel", "point", "algo", "pass", "tile", "density", *MEASURED, *SIMULATED]


def measured_path(gpu):
    return os.path.join(HERE, f"measured-{gpu}.csv")


def fail(message):
    print(f"measured.py: {message}", file=sys.stderr)
    sys.exit(2)


def gpu_of(outdirs):
    names = {open(p).read().strip() for p in (find_file([d], "device-name.txt") for d in outdirs) if p}
    found = {g for g in GPUS for n in names if g in n.lower().replace(" ", "")}
    if len(found) != 1:
        fail(f"cannot tell the GPU from device-name.txt in {outdirs} (read: {sorted(names) or 'none'}); "
             f"give --gpu, one of {', '.join(GPUS)}")
    return found.pop()


def simulated(gpu):
    """{point: {'warm': row, 'cold': row}} from results-<gpu>.csv's `points` panel."""
    path = os.path.join(HERE, f"results-{gpu}.csv")
    if not os.path.exists(path):
        fail(f"no {path}: run run.py --profile {gpu} first")
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["panel"] == "points":
                out.setdefault(r["point"], {})[r["l2"]] = r
    return out


def sim_columns(gpu, sim, point):
    """The simulated values matching one point, from results-<gpu>.csv's strings."""
    s = sim.get(point)
    if not s or set(s) != {"warm", "cold"}:
        fail(f"results-{gpu}.csv has no warm and cold simulation of point {point}: run run.py --profile {gpu}")
    cold = s["cold"]
    return {"sim_ms": repr(float(s["warm"]["time.seconds"]) * 1e3),
            "sim_dram_bytes": str(int(cold["dram.read_bytes"]) + int(cold["dram.write_bytes"])),
            "profile": PROFILES[gpu]}


def last_line(path):
    if not path or not os.path.exists(path):
        return "no file"
    lines = [l.strip() for l in open(path, errors="replace") if l.strip()]
    return lines[-1][:160] if lines else "empty"


def measure_point(p, outdirs):
    """(meas_ms, meas_dram_bytes, meas_ncu_ms, status) of one point from its raw files."""
    bench = find_file(outdirs, p.name + ".bench.json")
    ncu = find_file(outdirs, p.name + ".csv")
    try:
        ms = json.load(open(bench))["median_ms"] if bench else None
    except (ValueError, KeyError):
        ms = None
    if ms is None:
        return "", "", "", "bench failed: " + last_line(find_file(outdirs, p.name + ".bench.err"))
    kernels = ncu_rows(ncu) if ncu else []
    if not kernels:
        return ms, "", "", "ncu failed: " + last_line(find_file(outdirs, p.name + ".err"))
    if len(kernels) != p.launches:
        return ms, "", "", f"ncu profiled {len(kernels)} kernels, the pass has {p.launches}"
    values = [(num(k, "dram__bytes_read.sum"), num(k, "dram__bytes_write.sum"), num(k, "gpu__time_duration.sum"))
              for k in kernels]
    if any(v is None for kv in values for v in kv):
        return ms, "", "", "ncu rows without dram__bytes_read/write.sum or gpu__time_duration.sum"
    dram = sum(rd + wr for rd, wr, _ in values)
    ncu_ms = sum(t for _, _, t in values) / 1e6  # ns (--print-units base)
    return ms, int(dram), ncu_ms, "ok"


def point_columns(gpu, p, sim):
    cold = sim[p.name]["cold"]
    return {"gpu": gpu, "panel": p.panel, "point": p.name, "algo": cold["algorithm"], "pass": cold["pass"],
            "tile": f"{cold['tiling.block_m']}x{cold['tiling.block_n']}", "density": cold["problem.block_density"]}


def from_raw(gpu, outdirs):
    sim = simulated(gpu)
    rows = []
    for p in read_points():
        ms, dram, ncu_ms, status = measure_point(p, outdirs)
        row = {**sim_columns(gpu, sim, p.name), **point_columns(gpu, p, sim),
               "meas_ms": ms, "meas_dram_bytes": dram, "meas_ncu_ms": ncu_ms, "status": status}
        rows.append(row)
    return rows


def rejoin(gpu):
    path = measured_path(gpu)
    if not os.path.exists(path):
        fail(f"--rejoin: no {path}; give the raw OUTDIR instead")
    sim = simulated(gpu)
    with open(path, newline="") as f:
        old = list(csv.DictReader(f))
    return [{**r, **sim_columns(gpu, sim, r["point"])} for r in old]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdirs", nargs="*")
    parser.add_argument("--gpu", choices=GPUS)
    parser.add_argument("--rejoin", action="store_true")
    a = parser.parse_args()
    if a.rejoin == bool(a.outdirs):
        fail("give the raw OUTDIR(s), or --rejoin (not both)")
    missing = [d for d in a.outdirs if not os.path.isdir(d)]
    if missing:
        fail(f"no such folder: {', '.join(missing)}")
    if a.rejoin:
        gpu = a.gpu or fail("--rejoin needs --gpu")
        rows = rejoin(gpu)
    else:
        gpu = a.gpu or gpu_of(a.outdirs)
        rows = from_raw(gpu, a.outdirs)
    with open(measured_path(gpu), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    ok = sum(r["status"] == "ok" for r in rows)
    print(f"wrote {measured_path(gpu)}: {len(rows)} points, {ok} measured", file=sys.stderr)
    for r in rows:
        if r["status"] != "ok":
            print(f"  {r['point']}: {r['status']}", file=sys.stderr)


if __name__ == "__main__":
    main()
