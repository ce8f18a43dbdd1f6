import os
WORK = os.environ.get('GEMM_SASS_DIR', '.')  # the h_*.sass listings and counts.json
import sys, json, csv, collections; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); import path as P
exec(open('step4.py').read().split('grp =')[0])
grp_paths = {}
res=[]
for cfg, kern, t, lay, multi, T, C, G in cases:
    if G>1: continue
    r = rows[(cfg, kern)]
    key = f"{t[0]}x{t[1]}x{t[2]}_{lay}_{'multi' if multi else 'single'}"
    v = d[key]; fn = P.Fn(v['meta']['file']); steps=T*C
    ops = collections.Counter()
    def add(n, k):
        for a0 in v[n]['path']:
            for a, tx, o in fn.ops(fn.blocks[int(a0,16)][0]):
                parts=o.split('.'); name=parts[0]
                if name=='IMAD': name='IMAD.'+(parts[1] if len(parts)>1 and parts[1] in ('MOV','SHL','IADD','WIDE','U32','X','HI') else '')
                if name=='HFMA2': name='HFMA2'+('.MMA' if 'MMA' in o else '')
                ops[name]+=k
    add('prologue',1); add('chunk',steps-1); add('chunk_noissue',1); add('epi_last',1)
    if T>1: add('epi_mid',T-1)
    ctas=float(r['meas_grid_size'])*8
    res.append((key,kern,float(r['meas_inst_fma_pipe'])/ctas, (float(r['meas_inst_fp32_pipe'] or 0))/ctas, ops))
allops=sorted(set(o for *_,ops in res for o in ops))
fmaish=[o for o in allops if o.startswith(('IMAD','FFMA','FADD','FMUL','HFMA2','HADD2','F2FP','IMUL','MOV','FSEL','FSET','FMNMX','ISCADD'))]
print(fmaish)
for key,kern,mf,m32,ops in res:
    print(key,kern,'meas fma',mf,'fp32',m32, {o:ops[o] for o in fmaish})
import itertools
print()
nonfma=[o for o in allops if o not in fmaish]
base=[sum(ops[o] for o in fmaish) for *_,ops in res]
resid=[mf-b for (k,kn,mf,m32,ops),b in zip(res,base)]
print('resid',resid)
for o in nonfma:
    print(o,[ops[o] for *_,ops in res])
# subsets up to 3 with coefficient 1, maybe excluding F2FP
for excl in [[],['F2FP']]:
    for n in range(1,4):
        for S in itertools.combinations(nonfma,n):
            ok=all(abs(resid[i] + sum(res[i][4][e] for e in excl) - sum(res[i][4][o] for o in S))<0.5 for i in range(len(res)))
            if ok: print('fit: fma = IMAD + F2FP' + ''.join('-'+e for e in excl) + ' + ' + '+'.join(S))
