import os
WORK = os.environ.get('GEMM_SASS_DIR', '.')  # the h_*.sass listings and counts.json
import sys, json; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); import model as M
d = json.load(open(WORK + '/counts.json'))
K = ['alu','fma','smem','global','barrier','tensor','mufu']
def fmt(p, pt=0):
    if p is None: return '-'
    tot = sum(p.get(k,0) for k in K) + pt
    return f"{tot:4d} " + '/'.join(str(p.get(k,0)) for k in K) + (f"+{pt}" if pt else '')
def sx(v, n):
    x = v.get(n); return fmt(x['pipes'], x.get('never_pt',0)) if x else '-'
print("cols: total alu/fma/smem/global/barrier/tensor/mufu(+@!PT LDS, issued, counted by ncu)")
out = []
for t in [(128,128,32),(64,64,32),(128,64,32),(64,128,32),(128,128,64)]:
    for lay in ['kk','kn','nn']:
        for inst in ['single','multi']:
            key = f"{t[0]}x{t[1]}x{t[2]}_{lay}_{inst}"; v = d[key]
            multi = inst == 'multi'
            if multi and t not in [(64,64,32),(128,128,64)]: continue
            T = 4 if multi else 1
            mch = M.chunk(*t, lay, tiles=T)
            iss = {k: v['chunk']['pipes'].get(k,0) - v['chunk_noissue']['pipes'].get(k,0) for k in K}
            mprod = M.chunk(*t, lay, tiles=T); 
            epi = 'epi_mid' if multi else 'epi_last'
            mep = M.epilogue(*t, lay, tiles=T, last=not multi)
            out.append(f"{key:22s} chunk  SASS {sx(v,'chunk'):34s} model {fmt(mch)}")
            out.append(f"{'':22s} noiss  SASS {sx(v,'chunk_noissue'):34s}")
            out.append(f"{'':22s} tile   SASS {sx(v,epi):34s} model {fmt(mep)}" + (f"   last-tile SASS {sx(v,'epi_last')}" if multi else ''))
            out.append(f"{'':22s} prolog SASS {sx(v,'prologue'):34s} model {fmt(M.prologue(*t))}")
print('\n'.join(out))
