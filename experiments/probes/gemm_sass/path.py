#!/usr/bin/env python3
"""(fma = IMAD*, VIADD, FFMA..., as Nsight Compute's fma pipe counts on sm_90; F2FP -> alu)
Cheapest path (fewest issued instructions) through one function's SASS between two
addresses, subject to exact counts of chosen opcodes (constraints), by Dijkstra over
(basic block, counts). Prints pipe classes of the path and its blocks.

Pipes: sass_walk.py's split (IMAD/IMUL/FFMA/FADD/FMUL/HADD2/HFMA2/F2FP -> fma; MUFU/I2F/F2I/FCHK
-> mufu; LDS/STS/LDSM/STSM -> smem; LDG/STG/LDGSTS/RED/LDL/STL -> global; BAR -> barrier;
HMMA -> tensor; SHFL -> shfl; everything else alu), `@!PT` skipped."""
import re, sys, heapq, collections, json
INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\*")
PIPE = {'HMMA': 'tensor', 'LDSM': 'smem', 'LDS': 'smem', 'STS': 'smem', 'STSM': 'smem',
        'FFMA': 'fma', 'FMUL': 'fma', 'FADD': 'fma', 'IMAD': 'fma', 'IMUL': 'fma', 'HADD2': 'fma',
        'HFMA2': 'fma', 'HMUL2': 'fma', 'VIADD': 'fma', 'MUFU': 'mufu', 'FCHK': 'mufu', 'I2F': 'mufu',
        'F2I': 'mufu', 'SHFL': 'shfl', 'BAR': 'barrier', 'LDG': 'global', 'STG': 'global',
        'LDGSTS': 'global', 'RED': 'global', 'LDL': 'local', 'STL': 'local'}
ORDER = ['alu', 'fma', 'smem', 'global', 'local', 'barrier', 'tensor', 'mufu', 'shfl']

def parse(t):
    m = re.match(r'(@!?U?P\w+\s+)?(\S+)\s*(.*)', t)
    return (m.group(1) or '').strip(), m.group(2), m.group(3)

def load(path):
    code = []
    for ln in open(path):
        m = INSTR.match(ln)
        if m:
            code.append((int(m.group(1), 16), m.group(2).rstrip(' ;')))
    return code

class Fn:
    def __init__(self, path):
        self.code = load(path)
        self.idx = {a: i for i, (a, _) in enumerate(self.code)}
        targets = set()
        for a, t in self.code:
            p, op, args = parse(t)
            if op.split('.')[0] in ('BRA', 'CALL') and '0x' in args:
                targets.add(int(re.search(r'0x([0-9a-f]+)', args).group(1), 16))
        self.blocks = {}  # start addr -> (list of (addr, text), succs)
        cur = []
        starts = []
        for i, (a, t) in enumerate(self.code):
            if a in targets and cur:
                starts.append(cur); cur = []
            cur.append((a, t))
            p, op, args = parse(t)
            b = op.split('.')[0]
            if b in ('BRA', 'EXIT', 'RET', 'CALL'):
                starts.append(cur); cur = []
        if cur: starts.append(cur)
        nxt = {}
        for k in range(len(starts) - 1):
            nxt[starts[k][0][0]] = starts[k + 1][0][0]
        for blk in starts:
            a0 = blk[0][0]
            p, op, args = parse(blk[-1][1])
            b = op.split('.')[0]
            succ = []
            fall = nxt.get(a0)
            if b == 'BRA' and not op.startswith('BRA.DIV'):
                tgt = int(re.search(r'0x([0-9a-f]+)', args).group(1), 16)
                succ = [tgt] if not p else [fall, tgt]
            elif b == 'EXIT':
                succ = [-1] if not p else [fall, -1]
            elif b in ('RET',):
                succ = []
            else:  # CALL (a slow path: counted as CALL, then continues) or fall-through
                succ = [fall]
            self.blocks[a0] = (blk, [s for s in succ if s is not None])

    def ops(self, blk):
        return [(a, t, parse(t)[1]) for a, t in blk if not t.startswith('@!PT')]

def key_count(op, key):
    # key: 'LDGSTS' base match, or a full-prefix like 'STG.E.128'
    return op == key or op.split('.')[0] == key if '.' not in key else op.startswith(key)

def cheapest(fn, start, stop, exact, forbid, min_edges=1, return_k=1):
    """exact: {key: n}; forbid: [key...]; stop may equal start (a loop body)."""
    keys = list(exact)
    def bcost(a0):
        blk, succ = fn.blocks[a0]
        ops = fn.ops(blk)
        cnt = tuple(sum(key_count(o, k) for _, _, o in ops) for k in keys)
        bad = any(key_count(o, f) for _, _, o in ops for f in forbid)
        return len(ops), cnt, bad
    cache = {a: bcost(a) for a in fn.blocks}
    target = tuple(exact[k] for k in keys)
    start_state = (start, tuple(0 for _ in keys), 0)
    pq = [(0, start_state, ())]
    seen = set()
    results = []
    while pq:
        cost, (a, cnt, nb), path = heapq.heappop(pq)
        if a == stop and nb >= min_edges:
            if cnt == target:
                results.append((cost, path))
                if len(results) >= return_k: break
            continue
        if (a, cnt, nb > 0) in seen: continue
        seen.add((a, cnt, nb > 0))
        if a == -1: continue
        c, bc, bad = cache[a]
        if bad: continue
        ncnt = tuple(x + y for x, y in zip(cnt, bc))
        if any(x > t for x, t in zip(ncnt, target)): continue
        for s in fn.blocks[a][1]:
            heapq.heappush(pq, (cost + c, (s, ncnt, nb + 1), path + (a,)))
    return results

def summarize(fn, path):
    pipes, ops = collections.Counter(), collections.Counter()
    for a0 in path:
        for a, t, o in fn.ops(fn.blocks[a0][0]):
            b = o.split('.')[0]
            pipes[PIPE.get(b, 'alu')] += 1
            ops[b] += 1
    return pipes, ops

if __name__ == '__main__':
    fn = Fn(sys.argv[1])
    start = int(sys.argv[2], 16)
    stop = sys.argv[3]; stop = -1 if stop == 'EXIT' else int(stop, 16)
    exact = json.loads(sys.argv[4]); forbid = json.loads(sys.argv[5])
    res = cheapest(fn, start, stop, exact, forbid, return_k=2)
    for cost, path in res:
        p, o = summarize(fn, path)
        print(cost, {k: p[k] for k in ORDER if p[k]}, ' '.join(f'{a:x}' for a in path))
        print('   ', o.most_common(20))

def dump(fn, path, out=sys.stdout):
    for a0 in path:
        for a, t in fn.blocks[a0][0]:
            print(f"  {a:05x}  {t}", file=out)
