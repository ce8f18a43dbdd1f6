#!/usr/bin/env python3
"""FA2 forward: simulated vs measured warp instructions per tile (the current iosim binary).

    experiments/probes/fa2_fwd_inst_table.py [IOSIM]

Measured: Nsight Compute's inst_executed (and the fma and xu pipes where recorded) from
experiments/results/2026-11-25-h100-fa2-small-tiles/ (d 64, batch 16, heads 16, seq 1024)
and the FA2 forward rows of experiments/validation/h100/grid.csv; simulated: `iosim simulate
... --profile h100 --json`, kernels[0].sm_model.instructions. Prints sim / meas per row and
(meas - sim) per warp of the grid: what the programs miss once per warp (prologue, the
first step's rescale) or per step (register moves and spills at the register limit).
"""
import csv
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IOSIM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/sim/iosim")


def sim(d, sq, sk, b, h, hkv, causal, bm, bn):
    args = [IOSIM, "simulate", "--algo", "fa2", "--pass", "fwd", "--batch", str(b), "--heads", str(h),
            "--kv-heads", str(hkv), "--seq-q", str(sq), "--seq-k", str(sk), "--head-dim", str(d),
            "--block-m", str(bm), "--block-n", str(bn), "--profile", "h100", "--json"]
    if causal:
        args.append("--causal")
    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    k = out["kernels"][0]
    return dict(k["sm_model"]["instructions"], ctas=k["ctas"])


def warps(d, bm, bn):
    """Fa2ForwardSchedule::warps_for (sim/schedule/kernel_schedules.h)."""
    rows = 32 if (bm > 128 or (bm >= 32 and bn + d <= 192)) else 16
    return max(1, bm // rows)


def small_tiles():
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, "experiments/results/2026-11-25-h100-fa2-small-tiles/fa2-fwd-*.csv"))):
        bm, bn = map(int, re.search(r"(\d+)x(\d+)", path).groups())
        lines = open(path).read().splitlines()
        start = next(k for k, line in enumerate(lines) if line.startswith('"ID"'))
        table = [r for r in csv.DictReader(lines[start:]) if r["ID"].isdigit()]
        val = lambda key: sum(float(r[key].replace(",", "")) for r in table)
        rows.append(dict(d=64, sq=1024, sk=1024, b=16, h=16, hkv=16, causal=0, bm=bm, bn=bn,
                         meas=val("smsp__inst_executed.sum"), fma=val("smsp__inst_executed_pipe_fma.sum"), xu=None))
    return rows


def grid_rows():
    rows = []
    for r in csv.DictReader(open(os.path.join(ROOT, "experiments/validation/h100/grid.csv"))):
        if r["algo"] == "fa2" and r["pass"] == "fwd" and r.get("meas_inst_executed"):
            rows.append(dict(d=int(r["d"]), sq=int(r["seq_q"]), sk=int(r["seq_k"]), b=int(r["batch"]),
                             h=int(r["heads"]), hkv=int(r["kv_heads"]), causal=int(r["causal"]),
                             bm=int(r["block_m"]), bn=int(r["block_n"]), meas=float(r["meas_inst_executed"]),
                             fma=float(r["meas_inst_fma_pipe"]), xu=float(r["meas_inst_xu"])))
    return rows


def main():
    print(f"{'source':6} {'d':>3} {'tile':>7} {'c':>1} {'shape':>22} {'meas M':>8} {'sim M':>8} {'total':>6} {'fma':>6} {'xu':>6} {'gap/warp':>8}")
    for src, rows in (("small", small_tiles()), ("grid", grid_rows())):
        for r in rows:
            if r["meas"] is None:
                continue
            i = sim(r["d"], r["sq"], r["sk"], r["b"], r["h"], r["hkv"], r["causal"], r["bm"], r["bn"])
            fma = f"{i['fma'] / r['fma']:6.2f}" if r["fma"] else f"{'':6}"
            xu = f"{i['mufu'] / r['xu']:6.2f}" if r["xu"] else f"{'':6}"
            shape = f"{r['b']}x{r['h']}/{r['hkv']} {r['sq']}x{r['sk']}"
            print(f"{src:6} {r['d']:3} {r['bm']:>3}x{r['bn']:<3} {r['causal']:1} {shape:>22} {r['meas'] / 1e6:8.1f} "
                  f"{i['total'] / 1e6:8.1f} {i['total'] / r['meas']:6.2f} {fma} {xu} "
                  f"{(r['meas'] - i['total']) / (i['ctas'] * warps(r['d'], r['bm'], r['bn'])):8.0f}")


if __name__ == "__main__":
    main()
