#!/usr/bin/env python3
"""FA2 backward main kernel: simulated vs measured warp instructions per pipe, per grid row.

    experiments/probes/fa2_bwd_inst_table.py GRID.csv [BEFORE.csv]

GRID.csv: a validation grid rebuilt with the current programs (build_csv.py ... --out); BEFORE.csv
(optional): the same rows simulated with earlier programs (e.g. the committed grid.csv); its
total ratio is printed beside. Per fa2_bwd_main row: sim / meas for the total
(sim_inst_total / inst_executed), tensor (HMMA), fma (IMAD, F2FP, FFMA/FADD/FMUL), xu (MUFU),
ldsm (sim's shared instructions, LDSM + STS + LDS, against Nsight Compute's LDSM + shared loads:
the stores are not in the measured column, so > 1 is expected) and the rest
(total - tensor - fma - xu).
"""
import csv
import sys


def num(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None


def rows(path):
    return {r["config"]: r for r in csv.DictReader(open(path))
            if r["kernel"] == "fa2_bwd_main" and num(r, "meas_inst_executed")}


def main():
    after = rows(sys.argv[1])
    before = rows(sys.argv[2]) if len(sys.argv) > 2 else {}
    print(f"{'set':5} {'config':40} {'before':>6} {'total':>6} {'tensor':>6} {'fma':>6} {'xu':>6} {'smem':>6} {'rest':>6}")
    for cfg, r in after.items():
        m_tot, m_ten, m_fma, m_xu = (num(r, k) for k in ("meas_inst_executed", "meas_inst_tensor",
                                                         "meas_inst_fma_pipe", "meas_inst_xu"))
        s_tot, s_ten, s_fma, s_mufu = (num(r, k) for k in ("sim_inst_total", "sim_inst_tensor", "sim_inst_fma",
                                                           "sim_inst_mufu"))
        m_smem = (num(r, "meas_inst_ldsm") or 0) + (num(r, "meas_inst_shared_ld") or 0)
        cells = [s_tot / m_tot, s_ten / m_ten, s_fma / m_fma, s_mufu / m_xu, num(r, "sim_inst_smem") / m_smem,
                 (s_tot - s_ten - s_fma - s_mufu) / (m_tot - m_ten - m_fma - m_xu)]
        b = before.get(cfg)
        bt = f"{num(b, 'sim_inst_total') / num(b, 'meas_inst_executed'):6.3f}" if b else f"{'-':>6}"
        print(f"{r['set'][:5]:5} {cfg:40} {bt} " + " ".join(f"{c:6.3f}" for c in cells))


if __name__ == "__main__":
    main()
