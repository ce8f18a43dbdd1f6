#!/usr/bin/env python3
"""Simulated vs measured warp instructions per pipe, per kernel row of a validation grid.

Reads experiments/validation/<gpu>/grid.csv (the SM model's instruction counts
sim_inst_* beside Nsight Compute's meas_inst_* counters) and prints, for each
row of the chosen kernels, sim / meas per pipe:
  total   sim_inst_total  vs inst_executed
  tensor  sim_inst_tensor vs pipe_tensor_op_hmma
  fma     sim_inst_fma    vs pipe_fma (FFMA/FADD/FMUL and IMAD* on sm_90)
  fp      the measured float share of the fma pipe: (ffma + fadd + fmul thread
          instructions) / 32, as a count (a lower bound of the warp instructions
          where lanes are predicated off), and fma - fp: IMAD and the rest
  mufu    sim_inst_mufu   vs pipe_xu
  smem    sim_inst_smem (loads and stores) vs shared loads + LDSM (loads only)
  other   sim alu + shfl + smem + global + barrier vs total - tensor - fma - xu
and the step time ratio (sim_time_s / meas_time_s).

  experiments/probes/inst_compare.py [--gpu h100] [--algo fa1] [--kernel fa1_fwd] [--csv PATH]
"""
import argparse
import csv
import sys


def num(row, key):
    v = row.get(key, "")
    try:
        return float(v)
    except ValueError:
        return None


def ratio(a, b):
    return f"{a / b:6.3f}" if a is not None and b else "     -"


def pipes(row):
    """(name, sim, meas) per compared quantity of one grid row."""
    s = {p: num(row, "sim_inst_" + p) or 0.0 for p in ("total", "tensor", "fma", "alu", "mufu", "shfl", "smem",
                                                         "global")}
    m_total, m_tensor = num(row, "meas_inst_executed"), num(row, "meas_inst_tensor")
    m_fma, m_xu = num(row, "meas_inst_fma_pipe"), num(row, "meas_inst_xu")
    threads = [num(row, "meas_thread_" + op) for op in ("ffma", "fadd", "fmul")]
    m_fp = sum(threads) / 32 if None not in threads else None
    m_smem = (num(row, "meas_inst_shared_ld") or 0.0) + (num(row, "meas_inst_ldsm") or 0.0)
    m_other = (m_total - m_tensor - m_fma - m_xu) if None not in (m_total, m_tensor, m_fma, m_xu) else None
    s_other = s["total"] - s["tensor"] - s["fma"] - s["mufu"]
    return [("total", s["total"], m_total), ("tensor", s["tensor"], m_tensor), ("fma", s["fma"], m_fma),
            ("mufu/xu", s["mufu"], m_xu), ("smem/ld", s["smem"], m_smem), ("other", s_other, m_other),
            ("meas fp", None, m_fp), ("meas fma-fp", None, (m_fma - m_fp) if None not in (m_fma, m_fp) else None)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--csv", help="grid CSV (default experiments/validation/<gpu>/grid.csv)")
    ap.add_argument("--algo", default="fa1", help="algorithm column to keep (default fa1; 'all' for every row)")
    ap.add_argument("--kernel", help="kernel column to keep (e.g. fa1_bwd)")
    a = ap.parse_args()
    path = a.csv or f"experiments/validation/{a.gpu}/grid.csv"
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        sys.exit(f"inst_compare: cannot read {path}: {e.strerror}")
    rows = [r for r in rows if (a.algo == "all" or r["algo"] == a.algo) and (not a.kernel or r["kernel"] == a.kernel)
            and r.get("status") == "ok" and num(r, "meas_inst_executed")]
    if not rows:
        sys.exit(f"inst_compare: no measured rows of algo={a.algo} kernel={a.kernel} in {path}")
    print(f"{'kernel':10} {'set':5} {'config':42} {'time':>6} " +
          " ".join(f"{n:>7}" for n, _, _ in pipes(rows[0])[:6]) + "   meas fp/fma  meas (fma-fp)/total")
    for r in rows:
        p = pipes(r)
        t = ratio(num(r, "sim_time_s"), num(r, "meas_time_s"))
        cells = " ".join(f"{ratio(s, m):>7}" for _, s, m in p[:6])
        m_fma, m_total, m_fp, m_int = p[2][2], p[0][2], p[6][2], p[7][2]
        print(f"{r['kernel']:10} {r['set'][:5]:5} {r['config']:42} {t} {cells}   {ratio(m_fp, m_fma):>11}  "
              f"{ratio(m_int, m_total):>19}")


if __name__ == "__main__":
    main()
