import os
WORK = os.environ.get('GEMM_SASS_DIR', '.')  # the h_*.sass listings and counts.json
import sys, json, csv, collections; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); import model as M
d = json.load(open(WORK + '/counts.json'))
rows = {(r['config'], r['kernel']): r for r in csv.DictReader(open('/work/main/experiments/validation/h100/grid.csv'))}
# (config, kernel, tile, layout, multi-instantiation, tiles per CTA, chunks per group, groups)
cases = [
 ('std-fwd-d64-n2048-bh64-128x128', 'std_fwd_qk', (128,128,32), 'kk', False, 1, 2, 1),
 ('std-bwd-d64-n2048-bh64-128x128', 'std_bwd_dp', (128,128,32), 'kk', False, 1, 2, 1),
 ('std-fwd-d128-n512-bh256-s50-64x128', 'std_fwd_qk', (64,128,32), 'kk', False, 1, 4, 1),
 ('std-fwd-d128-n512-bh256-s50-64x128', 'std_fwd_pv', (64,128,32), 'kn', False, 1, 16, 1),
 ('std-bwd-d128-n512-bh256-kv4-64x128', 'std_bwd_dv', (64,128,32), 'nn', False, 1, 16, 4),
 ('std-bwd-d128-n512-bh256-kv4-64x128', 'std_bwd_dq', (64,128,32), 'kn', False, 1, 16, 1),
 ('std-fwd-d64-n8192-bh8-128x128x64', 'std_fwd_qk', (128,128,64), 'kk', True, 4, 1, 1),
 ('std-fwd-d128-n2048-bh32-kv4-128x128x64', 'std_fwd_qk', (128,128,64), 'kk', True, 4, 2, 1),
 ('std-fwd-d128-n2048-bh32-kv4-128x128x64', 'std_fwd_pv', (128,128,64), 'kn', True, 1, 32, 1),
 ('std-fwd-d128-n4096-bh16-c-64x64', 'std_fwd_qk', (64,64,32), 'kk', True, 4, 4, 1),
 ('std-fwd-d128-n4096-bh16-c-64x64', 'std_fwd_pv', (64,64,32), 'kn', True, 2, 128, 1),
]
grp = {'64x128x32_nn_single': 238}  # head->head path with the two operand-base divisions (MUFU fast paths)
for cfg, kern, t, lay, multi, T, C, G in cases:
    r = rows[(cfg, kern)]
    key = f"{t[0]}x{t[1]}x{t[2]}_{lay}_{'multi' if multi else 'single'}"
    v = d[key]; tot = lambda n: v[n]['total'] + v[n].get('never_pt', 0)
    steps = T * C * G
    sass = tot('prologue') + (steps - 1) * tot('chunk') + tot('chunk_noissue') + tot('epi_last') + (T - 1) * (tot('epi_mid') if T > 1 else 0)
    if G > 1: sass += (G - 1) * (grp[key] + 6 - tot('chunk'))
    ctas = float(r['meas_grid_size'])
    # model per CTA (the simulator's): steps x chunk + (T-1) epilogue + (prologue + last epilogue)
    tiles_arg = T if multi else 1
    plan_tiles = T if multi else 1
    ch = sum(M.chunk(*t, lay, tiles=plan_tiles if multi else 1).values())
    em = sum(M.epilogue(*t, lay, tiles=plan_tiles, last=False).values())
    el = sum(M.epilogue(*t, lay, tiles=plan_tiles, last=True).values())
    pr = sum(M.prologue(*t).values())
    model = steps * ch + (T - 1) * em + el + pr
    meas_w = float(r['meas_inst_executed']) / ctas / 8; sim_w = float(r['sim_inst_total']) / ctas / 8
    print(f"{cfg:40s} {kern:10s} {key:22s} T={T} C={C} G={G} CTAs={int(ctas):6d} | per warp: meas {meas_w:8.1f} sass {sass:6d} ({sass/meas_w:.3f}) | sim {sim_w:8.1f} replica {model} | sass total {sass*ctas*8:.4g} meas {float(r['meas_inst_executed']):.4g}")
print()
for cfg, kern, t, lay, multi, T, C, G in cases:
    r = rows[(cfg, kern)]
    key = f"{t[0]}x{t[1]}x{t[2]}_{lay}_{'multi' if multi else 'single'}"
    v = d[key]; steps = T*C*G
    tot = collections.Counter()
    def add(n, k=1):
        for p, x in v[n]['pipes'].items(): tot[p] += k * x
    add('prologue'); add('chunk', steps-1); add('chunk_noissue'); add('epi_last')
    if T > 1: add('epi_mid', T-1)
    ctas = float(r['meas_grid_size']) * 8
    meas = {p: float(r[c]) / ctas for p, c in [('fma','meas_inst_fma_pipe'),('mufu','meas_inst_xu'),('ldsm','meas_inst_ldsm'),('lds','meas_inst_shared_ld'),('tensor','meas_inst_tensor')]}
    print(f"{key:22s} {kern:10s} sass fma {tot['fma']:6d} meas {meas['fma']:8.1f} (diff/step {(meas['fma']-tot['fma'])/steps:5.2f}) | mufu {tot['mufu']} meas {meas['mufu']:.1f} | smem {tot['smem']} meas ldsm+lds {meas['ldsm']+meas['lds']:.1f} | alu {tot['alu']} other-diff/step {((float(r['meas_inst_executed'])/ctas - sum(tot.values())) - (meas['fma']-tot['fma']))/steps:.2f}")
