#!/usr/bin/env python3
import os
WORK = os.environ.get('GEMM_SASS_DIR', '.')  # the h_*.sass listings and counts.json
import sys, re, json, collections
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import path as P

def warps_m(tm): return tm // 16 if tm // 16 < 4 else 4

def analyze(tm, tn, tk, lay, multi, verbose=False):
    f = f"h_{tm}x{tn}x{tk}_{lay}_{'multi' if multi else 'single'}.sass"
    fn = P.Fn(f)
    nA, nB = tm * tk * 2 // 16 // 256, tn * tk * 2 // 16 // 256
    wm = warps_m(tm); wn = 8 // wm; FM = tm // wm // 16; FN = tn // wn // 8
    hmma = FM * FN * (tk // 16)
    nC = tm * tn // 8 // 256
    stsm = FM * FN // 2
    c_in_stage = tm * tn <= (tm + tn) * tk
    one_bar = multi and c_in_stage and lay == 'kk'
    # find main loop back edge: conditional/unconditional branch backwards whose span holds LDGSTS and HMMA but no STG
    code = fn.code; idx = fn.idx
    cands = []
    for a0, (blk, succ) in fn.blocks.items():
        last_a, last_t = blk[-1]
        for s in succ:
            if isinstance(s, int) and s >= 0 and s <= a0 and s != fn.blocks[a0][1][0] if len(succ) > 1 else s <= a0:
                pass
        p, op, args = P.parse(last_t)
        if op.startswith('BRA') and not op.startswith('BRA.DIV'):
            t = int(re.search(r'0x([0-9a-f]+)', args).group(1), 16)
            if t <= last_a:
                span = [o for a, tx in code[idx[t]:idx[last_a] + 1] for o in [P.parse(tx)[1]] if not tx.startswith('@!PT')]
                ops = collections.Counter(o.split('.')[0] for o in span)
                if ops['LDGSTS'] and ops['HMMA'] and not ops['STG']:
                    cands.append((last_a - t, t, last_a, a0))
    cands.sort()
    _, head, back, back_blk = cands[0]
    exit_blk = code[idx[back] + 1][0]
    forbid = ["CALL", "LDG", "STS", "STL", "LDL"]
    out = {}
    def run(name, start, stop, exact, fb, min_edges=1):
        r = P.cheapest(fn, start, stop, exact, fb, min_edges=min_edges)
        if not r:
            out[name] = None; return
        cost, path = r[0]
        pipes, ops = P.summarize(fn, path)
        out[name] = dict(total=cost, pipes={k: pipes[k] for k in P.ORDER if pipes[k]}, path=[f'{a:x}' for a in path], ops=dict(ops.most_common()))
    run('prologue', 0, head, {"LDGSTS": nA + nB, "HMMA": 0, "STG": 0}, forbid)
    run('chunk', head, head, {"LDGSTS": nA + nB, "HMMA": hmma}, forbid + ["MUFU", "STG"])
    run('chunk_noissue', head, exit_blk, {"LDGSTS": 0, "HMMA": hmma}, forbid + ["MUFU", "STG"])
    bar_last = 2 if one_bar else 1
    run('epi_last', exit_blk, -1, {"STG": nC, "LDS": nC, "STSM": stsm, "BAR": bar_last, "LDGSTS": 0, "HMMA": 0}, forbid + ["MUFU", "STG.E.U16", "LDS.U16"])
    if multi:
        run('epi_mid', exit_blk, head, {"STG": nC, "LDS": nC, "STSM": stsm, "BAR": 2, "LDGSTS": 0, "HMMA": 0}, forbid + ["MUFU", "STG.E.U16", "LDS.U16"])
    meta = dict(file=f, head=f'{head:x}', back=f'{back:x}', exit=f'{exit_blk:x}', nA=nA, nB=nB, hmma=hmma, nC=nC, stsm=stsm, one_bar=one_bar, FM=FM, FN=FN)
    return meta, out

if __name__ == '__main__':
    res = {}
    for (tm, tn, tk) in [(128,128,32),(64,64,32),(128,64,32),(64,128,32),(128,128,64)]:
        for lay in ['kk','kn','nn']:
            for multi in [False, True]:
                meta, out = analyze(tm, tn, tk, lay, multi)
                key = f"{tm}x{tn}x{tk}_{lay}_{'multi' if multi else 'single'}"
                res[key] = dict(meta=meta, **out)
                print(key, meta['head'], meta['back'], meta['exit'], {k: (v['total'], v['pipes']) if v else None for k, v in out.items()})
    json.dump(res, open(WORK + '/counts.json', 'w'), indent=1)
