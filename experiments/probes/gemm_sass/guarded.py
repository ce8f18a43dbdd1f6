#!/usr/bin/env python3
"""The standard GEMM's chunk issue when every output tile is cut in n (head dim 64 in a 128-wide
tile: O = P V, dQ = dS K, dV = P^T dO, dK = dS^T Q), counted off the SASS.

load_chunk_tile's guarded loop (kernels/standard/standard_gemm.cu) then runs for operand B: each
16-byte chunk either copies (LDGSTS) or zero-fills (LDGSTS ..., !PT: nothing read), by its column.
B's chunks of a row are spread over the lanes of every warp (chunk = tid % (TN / 8)), so with
cols_valid = TN / 2 every warp has lanes on both sides of each iteration's branch: it issues the
blocks of both (divergence), once each. The issue a warp executes is taken as the union of two
cheapest paths through the chunk (path.py): every B chunk copied through the guarded loop, and every
B chunk zero-filled; each block in either path counted once. A stays on its unguarded path.

Prints, per fp16 instantiation with TN = 128 and B n-contiguous (layouts kn and nn), the guarded
issue {fma, mufu, total, uniform} per warp beside the unguarded one (chunk - chunk_noissue, as
sim/schedule/warp_programs.cpp's kCounts), and writes DIR/guarded.json.
Usage: GEMM_SASS_DIR=DIR python3 guarded.py   (DIR: the h_*.sass listings and counts.json)"""
import os, sys, json, collections
WORK = os.environ.get('GEMM_SASS_DIR', '.')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import path as P

# Issue-slot-only opcodes (Pipe::uniform in the warp programs): uniform datapath, branch unit, control.
UNIFORM = ('BRA', 'BSSY', 'BSYNC', 'LDC', 'S2R', 'S2UR', 'R2UR', 'DEPBAR', 'LDGDEPBAR', 'NOP', 'EXIT', 'WARPSYNC')

def is_uniform(op):
    b = op.split('.')[0]
    return b in UNIFORM or (b.startswith('U') and b not in ('UNKNOWN',))

class ZFn(P.Fn):
    """path.Fn with the zero-filling LDGSTS (source predicate !PT) named ZFILL."""
    def ops(self, blk):
        out = []
        for a, t, o in super().ops(blk):
            if o.startswith('LDGSTS') and t.rstrip(' ;').endswith('!PT'):
                o = 'ZFILL'
            out.append((a, t, o))
        return out

def counts(fn, blocks):
    c = collections.Counter()
    for a0 in blocks:
        for a, t in fn.blocks[a0][0]:
            op = P.parse(t)[1]
            if t.startswith('@!PT'):
                c['total'] += 1; c['uniform'] += 1; continue  # issued, never executed
            c['total'] += 1
            b = op.split('.')[0]
            pipe = P.PIPE.get(b, 'alu')
            if pipe == 'fma': c['fma'] += 1
            if pipe == 'mufu': c['mufu'] += 1
            if is_uniform(op): c['uniform'] += 1
    return c

def region(c):
    return {k: c.get(k, 0) for k in ('fma', 'mufu', 'total', 'uniform')}

def sub(x, y):
    return {k: x.get(k, 0) - y.get(k, 0) for k in ('fma', 'mufu', 'total', 'uniform')}

FORBID = ["CALL", "LDG", "STS", "STL", "LDL", "MUFU", "STG"]

def analyze(key, meta):
    fn = ZFn(os.path.join(WORK, meta['file']))
    head = int(meta['head'], 16); exit_blk = int(meta['exit'], 16)
    nA, nB, hmma = meta['nA'], meta['nB'], meta['hmma']
    def path(exact, extra_forbid=()):
        r = P.cheapest(fn, head, head, exact, FORBID + list(extra_forbid))
        return r[0][1] if r else None
    plain = path({"LDGSTS": nA + nB, "ZFILL": 0, "HMMA": hmma})
    noissue = P.cheapest(fn, head, exit_blk, {"LDGSTS": 0, "ZFILL": 0, "HMMA": hmma}, FORBID)
    zero = path({"LDGSTS": nA, "ZFILL": nB, "HMMA": hmma})
    if zero is None or not noissue:
        return None
    noissue = noissue[0][1]
    bssy = sum(1 for a0 in zero for _, _, o in fn.ops(fn.blocks[a0][0]) if o.startswith('BSSY'))
    copied = path({"LDGSTS": nA + nB, "ZFILL": 0, "HMMA": hmma, "BSSY": bssy})
    # Each block as often as the path that visits it more (the products' loop body repeats).
    union = list((collections.Counter(zero) | collections.Counter(copied)).elements())
    base = counts(fn, noissue)
    out = dict(unguarded=region(sub(counts(fn, plain), base)), guarded=region(sub(counts(fn, union), base)),
               zero_path=[f'{a:x}' for a in zero], copy_path=[f'{a:x}' for a in copied], bssy=bssy)
    return out

if __name__ == '__main__':
    meta_all = json.load(open(os.path.join(WORK, 'counts.json')))
    res = {}
    for key, v in sorted(meta_all.items()):
        m = v['meta']
        tn = int(key.split('x')[1]); lay = key.split('_')[1]
        if tn != 128 or lay == 'kk':
            continue
        r = analyze(key, m)
        res[key] = r
        if r:
            print(f"{key:22s} unguarded {r['unguarded']}  guarded {r['guarded']}  (+{r['guarded']['total'] - r['unguarded']['total']})")
        else:
            print(f"{key:22s} no zero-fill path")
    json.dump(res, open(os.path.join(WORK, 'guarded.json'), 'w'), indent=1)
