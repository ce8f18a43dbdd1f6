#!/usr/bin/env python3
"""FA2 backward: instructions one warp executes per work item (step), by pipe, per tile.

    experiments/probes/fa2_bwd_walk.py LISTING [DxBMxBN | BMxBN ...]

LISTING is `cuobjdump -sass` of the full-menu sm_90 fp16 objects (fa2_bwd_fp16_d64.sass,
_d128; kept outside the repository). Walks the main loop of
fa2_backward_kernel<__half, D, BM, BN> (the loop whose body holds the HMMAs; it ends in a
`BRA P, target` back edge) from its first instruction to its back edge with sass_walk.py's
rules, the branches decided as a dense long run takes them, and the epilogue (the loop's exit
to EXIT, every row guard passed). Branch rules (by what the branch skips):
  - the block-sparse test of work.next (a byte LDG of the block mask): taken (no mask);
  - the step log (S2UR of the CTA id, LDG + STG of the counter): taken (no log);
  - the next (Q, dO) copy (LDGSTS): not taken (a next work item exists);
  - mask_scores (FSEL ... -INF): taken in the unmasked step, not taken in the masked step,
    and inside it the causal key_end arithmetic runs (a causal run's diagonal block);
  - the dQ reduction's row guard (REDG): not taken (rows in range).
A branch no rule decides stops the script with its context.

Prints per tile the step, the masked step and the epilogue by pipe (IMAD and F2FP on fma,
as Nsight Compute counts them), the op classes the programs model (HMMA, LDSM, MUFU, the
softmax_grad FFMA/FADD/FMUL, F2FP + STS of store_acc, LDGSTS, LDG of L/D, REDG) and what is
left per step, split into IMAD (fma) and the rest (alu), with IMAD.MOV and LDL/STL counted
apart (register moves and local memory at the 255-register limit).
"""
import collections
import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location("sass_walk", os.path.join(os.path.dirname(__file__), "sass_walk.py"))
sw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sw)


parse, target = sw.parse, sw.target


def cond_branch(code, a):
    pred, op, _ = parse(code[a])
    return op.startswith('BRA') and pred and not op.startswith('BRA.DIV') and pred != '@!PT'


def main_loop(code, order):
    """(start, back edge) of the loop whose body holds the HMMAs (the last such back edge)."""
    found = []
    for a in order:
        if cond_branch(code, a):
            t = target(parse(code[a])[2])
            if t < a and any(code[x].startswith('HMMA') for x in order if t <= x < a):
                found.append((t, a))
    if not found:
        sys.exit("fa2_bwd_walk: no main loop")
    return max(found, key=lambda f: f[1] - f[0])


def decide(code, order, lo, hi, masked):
    d = {}
    mask_span, dead = None, []
    for a in [x for x in order if lo <= x <= hi]:
        if not cond_branch(code, a):
            continue
        t = target(parse(code[a])[2])
        key = f"{a:x}"
        if any(x < a < y for x, y in dead):
            continue                            # inside a block the walk jumps over
        if a == hi:
            d[key] = False
            continue
        skipped = [code[x] for x in order if a < x < t]
        if t < a:
            # a loop inside the step: the block-mask scan (not run when dense) or a copy loop
            if mask_span is None and any('LDG.E.U8' in x for x in code_range(code, order, t, a)):
                d[key] = False
                continue
            ctx(code, order, a, "a back edge inside the step")
        if mask_span and mask_span[0] < a < mask_span[1]:
            d[key] = False                      # causal key_end arithmetic runs
        elif any('LDG.E.U8' in x for x in skipped):
            d[key] = True                       # dense: the block-mask test skipped
            dead.append((a, t))
        elif any('S2UR' in x for x in skipped) and any(x.startswith('STG') or ' STG' in x for x in skipped):
            d[key] = True                       # no step log
            dead.append((a, t))
        elif any('LDGSTS' in x for x in skipped):
            d[key] = False                      # the next (Q, dO) is copied
        elif any('FSEL' in x and '-INF' in x for x in skipped):
            d[key] = not masked                 # mask_scores
            mask_span = (a, t)
            if not masked:
                dead.append((a, t))
        elif any('REDG' in x or x.startswith('RED') for x in skipped):
            d[key] = False                      # dQ rows in range
        else:
            ctx(code, order, a, "no rule")
    return d


def code_range(code, order, lo, hi):
    return [code[x] for x in order if lo <= x <= hi]


def ctx(code, order, a, why):
    k = order.index(a)
    context = "\n".join(f"  {x:x} {code[x]}" for x in order[max(0, k - 12):k + 4])
    sys.exit(f"fa2_bwd_walk: {why}: branch at {a:x}: {code[a]}\n{context}")


def ops_of(counts):
    return collections.Counter({k[3:]: v for k, v in counts.items() if k.startswith('op:')})


def walk_ops(code, order, start, stop, br):
    """Full-opcode histogram (first two dot parts) along the walk."""
    nxt = {order[k]: order[k + 1] for k in range(len(order) - 1)}
    c = collections.Counter()
    a, visits = start, collections.Counter()
    while a != stop:
        pred, op, args = parse(code[a])
        if pred == '@!PT':
            a = nxt[a]
            continue
        c[op] += 1
        base = op.split('.')[0]
        if base == 'EXIT' and not pred:
            break
        if base == 'BRA' and not op.startswith('BRA.DIV'):
            t = target(args)
            if not pred:
                a = t
                continue
            dd = br[f"{a:x}"]
            visits[a] += 1
            taken = dd[visits[a] - 1] if isinstance(dd, list) else dd
            a = t if taken else nxt[a]
            continue
        a = nxt[a]
    return c


def pipe_of(op):
    base = op.split('.')[0]
    return 'global' if base == 'REDG' else sw.PIPE.get(base, 'alu')


def classify(ops):
    """Splits a step's ops into the parts the program models and the rest."""
    part = collections.Counter()
    for op, n in ops.items():
        base = op.split('.')[0]
        if base == 'HMMA':
            part['hmma'] += n
        elif base == 'LDSM':
            part['ldsm'] += n
        elif base == 'MUFU':
            part['mufu'] += n
        elif base in ('FFMA', 'FADD', 'FMUL'):
            part['fp'] += n
        elif base == 'F2FP':
            part['f2fp'] += n
        elif base == 'STS':
            part['sts'] += n
        elif base == 'LDGSTS':
            part['ldgsts'] += n
        elif base == 'LDG':
            part['ldg'] += n
        elif base in ('REDG', 'RED'):
            part['red'] += n
        elif base == 'BAR':
            part['bar'] += n
        elif base in ('LDL', 'STL'):
            part['local'] += n
        elif op.startswith('IMAD.MOV') or op == 'MOV':
            part['mov_fma' if base == 'IMAD' else 'mov_alu'] += n
        elif pipe_of(op) == 'fma':
            part['imad'] += n
        elif base == 'FSEL' or base == 'FSETP':
            part['fsel'] += n
        else:
            part['alu'] += n
    return part


KEYS = ['tensor', 'fma', 'alu', 'xu', 'smem', 'shfl', 'global', 'barrier']


def by_pipe(ops):
    c = collections.Counter()
    for op, n in ops.items():
        c[pipe_of(op)] += n
    return c


def fmt(c):
    return f"{sum(c.values()):6.0f} " + " ".join(f"{k}={c.get(k, 0):.0f}" for k in KEYS)


def fmt_parts(p):
    keys = ['hmma', 'ldsm', 'mufu', 'fp', 'fsel', 'f2fp', 'sts', 'ldgsts', 'ldg', 'red', 'bar', 'imad', 'mov_fma',
            'mov_alu', 'local', 'alu']
    return " ".join(f"{k}={p.get(k, 0)}" for k in keys)


def epilogue(code, order, hi):
    lo, exit_, br = epilogue_walk(code, order, hi)
    return walk_ops(code, order, lo, exit_, br) + collections.Counter({'EXIT': 1})


def epilogue_walk(code, order, hi):
    """(start, stop, branch decisions) of the epilogue's walk: rows in range, every guard passes."""
    lo = order[order.index(hi) + 1]
    br = {}
    for a in order:
        if a >= lo and cond_branch(code, a):
            br[f"{a:x}"] = False                # rows in range: every guard passes
    exit_ = [a for a in order if a > lo and code[a] == 'EXIT'][0]
    return lo, exit_, br


def run(listing, d, bm, bn):
    code, order = sw.read_function(listing, rf"fa2_backward_kernelI6__halfLi{d}ELi{bm}ELi{bn}EE")
    lo, hi = main_loop(code, order)
    stop = order[order.index(hi) + 1]
    out = {}
    for masked in (False, True):
        br = decide(code, order, lo, hi, masked)
        ops = walk_ops(code, order, lo, stop, br)
        out['masked' if masked else 'step'] = ops
    out['epilogue'] = epilogue(code, order, hi)
    return out


def main():
    listing = sys.argv[1]
    d = 128 if 'd128' in listing else 64
    tiles = sys.argv[2:] or (['64x64', '64x128', '128x64', '128x128', '64x256'] if d == 64
                             else ['64x64', '64x128', '128x64', '128x128'])
    for t in tiles:
        bm, bn = map(int, t.split('x')[-2:])
        out = run(listing, d, bm, bn)
        for name in ('step', 'masked', 'epilogue'):
            ops = out[name]
            print(f"d{d} {bm}x{bn} {name:8} {fmt(by_pipe(ops))}")
            print(f"{'':14} {fmt_parts(classify(ops))}")
        extra = out['masked'] - out['step']
        print(f"{'':14} masked - step: {dict(extra)}")
        if '-v' in os.environ.get('WALK', ''):
            print(f"{'':14} ops {dict(sorted(out['step'].items()))}")


if __name__ == '__main__':
    main()
