#!/usr/bin/env python3
"""FA2 backward: the walk's non-modelled instructions per step by region (head: loop start to the
first HMMA; copy: the next (Q, dO) LDGSTS block; gemms: first to last HMMA; tail: dQ reduction and
loop end). Listings as in fa2_bwd_walk.py, at /work/sass/ (outside the repository)."""
import sys, importlib.util, collections, re
spec = importlib.util.spec_from_file_location("w", "" + __import__("os").path.join(__import__("os").path.dirname(__file__), "fa2_bwd_walk.py") + "")
w = importlib.util.module_from_spec(spec); spec.loader.exec_module(w)
sw = w.sw
MODELED=('HMMA','LDSM','MUFU','FFMA','FADD','FMUL','F2FP','STS','LDGSTS','LDG','REDG','BAR','FSEL','FSETP')
for listing, d, tiles in (("/work/sass/fa2_bwd_fp16_d64.sass", 64, ['64x64','64x128','128x64','128x128','64x256']), ("/work/sass/fa2_bwd_fp16_d128.sass", 128, ['64x64','64x128','128x64','128x128'])):
    for t in tiles:
        bm, bn = map(int, t.split('x'))
        code, order = sw.read_function(listing, rf"fa2_backward_kernelI6__halfLi{d}ELi{bm}ELi{bn}EE")
        lo, hi = w.main_loop(code, order)
        br = w.decide(code, order, lo, hi, False)
        # regions: copy = from the LDGSTS-skipping branch to its target; red = after last HMMA
        copy = None
        for a in order:
            if lo<=a<=hi and w.cond_branch(code,a):
                tt = w.target(w.parse(code[a])[2])
                if tt>a and any('LDGSTS' in code[x] for x in order if a<x<tt): copy=(a,tt)
        last_h = max(a for a in order if lo<=a<=hi and code[a].startswith('HMMA'))
        first_h = min(a for a in order if lo<=a<=hi and code[a].startswith('HMMA'))
        regs = {'copy': copy, 'tail': (last_h, hi+1), 'head': (lo, first_h)}
        stop = order[order.index(hi)+1]
        nxt = {order[k]: order[k+1] for k in range(len(order)-1)}
        cnt = collections.defaultdict(collections.Counter)
        a=lo
        while a!=stop:
            pred, op, args = w.parse(code[a])
            if pred=='@!PT': a=nxt[a]; continue
            r = next((n for n,(x,y) in regs.items() if x<=a<y), 'gemms')
            b = op.split('.')[0]
            if b not in MODELED:
                p = 'loc' if b in ('LDL','STL') else ('fma' if w.pipe_of(op)=='fma' else 'alu')
                cnt[r][p]+=1
            if b=='BRA' and pred:
                a = w.target(args) if br[f"{a:x}"] else nxt[a]; continue
            if b=='BRA': a=w.target(args); continue
            a=nxt[a]
        print(f"d{d} {t:8}", "  ".join(f"{r}:{dict(cnt[r])}" for r in ('head','copy','gemms','tail')))
