#!/usr/bin/env python3
"""Local memory (register spills) of FA2/FA1 kernels on the GPU: one row per configuration of
local.csv (experiments/probes/local_memory_run.sh). L1 left = 256 KiB (L1 + shared memory per SM on
Hopper) - the launch's shared-memory carve-out. Usage: table.py [local.csv]"""
import csv, os, sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'local.csv')
num = lambda r, k: float(r[k].replace(',', '')) if r.get(k) not in (None, '') else float('nan')
print('| configuration | threads | CTAs/SM | smem per CTA KiB | carve-out KiB | L1 left KiB | LDL | STL '
      '| LDL sectors | LDL L1 hit | STL sectors | STL bytes | time us |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for r in csv.DictReader(open(path)):
    thr = num(r, 'launch__block_size')
    per_sm = min(num(r, 'launch__occupancy_limit_shared_mem'), num(r, 'launch__occupancy_limit_registers'),
                 num(r, 'launch__occupancy_limit_warps'))
    carve = num(r, 'launch__shared_mem_config_size') / 1024
    ld, ld_hit = num(r, 'l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum'), num(r, 'l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum')
    st = num(r, 'l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum')
    print(f"| {r['config']} | {thr:.0f} | {per_sm:.0f} | {num(r, 'launch__shared_mem_per_block') / 1024:.0f} | {carve:.0f} | {256 - carve:.0f} "
          f"| {num(r, 'smsp__inst_executed_op_local_ld.sum'):,.0f} | {num(r, 'smsp__inst_executed_op_local_st.sum'):,.0f} "
          f"| {ld:,.0f} | {ld_hit / ld if ld else float('nan'):.3f} | {st:,.0f} | {st * 32 / 1e6:,.1f} MB "
          f"| {num(r, 'gpu__time_duration.sum') / 1e3:,.1f} |")
