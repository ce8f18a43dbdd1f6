#!/usr/bin/env python3
"""Prints the crossbar and cp.async (LDGSTS) counters of experiments/probes/gemm_reads.sh's runs.

  experiments/probes/gemm_reads_table.py DIR [DIR ...]   (each DIR holds <run>.csv or <run>.csv.gz)
"""
import csv
import glob
import gzip
import os
import sys

METRICS = [
    ("launch__grid_size", "CTAs"),
    ("smsp__inst_executed_op_ldgsts.sum", "cp.async instructions (warp)"),
    ("sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum", "cp.async sectors requested"),
    ("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum", "cp.async shared-memory wavefronts"),
    ("l1tex__m_xbar2l1tex_read_bytes.sum", "L2->SM bytes (xbar2l1tex)"),
    ("lts__t_sectors_srcunit_tex_op_read.sum", "L2 read lookups (sectors)"),
    ("lts__t_requests_srcunit_tex_op_read.sum", "L2 read requests"),
]


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    return dict(zip(rows[head], rows[head + 2]))


def number(s):
    return float(s.replace(",", "")) if s else float("nan")


def main(dirs):
    runs = []
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "*.csv")) + glob.glob(os.path.join(d, "*.csv.gz"))):
            name = os.path.basename(p).split(".csv")[0]
            runs.append((f"{os.path.basename(os.path.normpath(d))}/{name}", read(p)))
    print("| counter | " + " | ".join(n for n, _ in runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for key, label in METRICS:
        print(f"| {label} | " + " | ".join(f"{number(r.get(key, '')):,.0f}" for _, r in runs) + " |")
    per = []
    for _, r in runs:
        req = number(r.get("smsp__inst_executed_op_ldgsts.sum", ""))
        sec = number(r.get("sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum", ""))
        per.append(f"{sec / req:.1f}" if req else "-")
    print("| sectors per cp.async instruction (16 = 512 B, no waste) | " + " | ".join(per) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
