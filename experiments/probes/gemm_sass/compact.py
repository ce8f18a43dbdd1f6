import os
WORK = os.environ.get('GEMM_SASS_DIR', '.')  # the h_*.sass listings and counts.json
import sys, json; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); import model as M
d = json.load(open(WORK + '/counts.json'))
K = ['alu','fma','smem','global','barrier','tensor','mufu']
def s(p, pt=0): return f"{sum(p.get(k,0) for k in K)+pt}(" + '/'.join(str(p.get(k,0)) for k in K[:5]) + ")"
def sx(v,n): x=v[n]; return s(x['pipes'], x.get('never_pt',0))
for t in [(128,128,32),(64,64,32),(128,64,32),(64,128,32),(128,128,64)]:
    for lay in ['kk','kn','nn']:
        multi = t in [(64,64,32),(128,128,64)]
        key = f"{t[0]}x{t[1]}x{t[2]}_{lay}_{'multi' if multi else 'single'}"; v = d[key]; T = 4 if multi else 1
        epi = 'epi_mid' if multi else 'epi_last'
        print(f"{t[0]}x{t[1]}x{t[2]} {lay}{'*' if multi else ' '} | {sx(v,'chunk'):20s} {s(M.chunk(*t,lay,tiles=T)):18s}| {sx(v,epi):20s} {s(M.epilogue(*t,lay,tiles=T,last=not multi)):16s}| {sx(v,'prologue'):20s} {s(M.prologue(*t))}")
