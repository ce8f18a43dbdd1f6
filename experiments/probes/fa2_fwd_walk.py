#!/usr/bin/env python3
"""FA2 forward: instructions one warp executes per unmasked key-block step, by pipe, per tile.

    experiments/probes/fa2_fwd_walk.py LISTING [BMxBN ...]

LISTING is a `cuobjdump -sass` of kernels/fa2/fa2_fwd_fp16_d{64,128}.cu.o (e.g.
/work/sass/fa2_fwd_fp16_d64.sass, outside the repository); D is 128 if the file name holds
`d128`, else 64.

Walks the unmasked main loop of fa2_forward_kernel<__half, D, BM, BN, false> (the first loop
that holds HMMAs; it ends in a `BRA P1` back edge) from its first instruction to its back
edge with sass_walk.py's rules, the branches decided as a dense, non-causal, long run takes
them: the block-sparse test (a byte LDG of the block mask) is skipped (no mask), a next key
block exists and is not ragged (the unguarded K copy), and the lazy rescale after VOTE.ANY
is skipped (rescales are rare after the first blocks: kernels/fa2/fa2_forward.cuh). A branch
no rule decides stops the script with its context. Also prints the rescale block's counts
(from VOTE.ANY's branch to its target) and the epilogue from the masked loop's exit (the
code after the last main-loop back edge) to EXIT, the 1/l branch and the LSE store taken.
"""
import collections
import importlib.util
import os
import re
import sys

_spec = importlib.util.spec_from_file_location("sass_walk", os.path.join(os.path.dirname(__file__), "sass_walk.py"))
sw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sw)


parse, target = sw.parse, sw.target


def main_loop(code, order, which=0):
    """(start, back edge) of the which-th loop whose body holds an HMMA (0: unmasked, 1: masked)."""
    found = []
    for a in order:
        pred, op, args = parse(code[a])
        if op.startswith('BRA') and pred and not op.startswith('BRA.DIV'):
            t = target(args)
            if t < a and any(code[x].startswith('HMMA') for x in order if t <= x < a):
                found.append((t, a))
    if len(found) <= which:
        sys.exit("fa2_fwd_walk: no main loop")
    return found[which]


def counted_loop(code, order, t, a, before):
    """Trips of a rolled loop [t, a] whose counter starts at an immediate (or RZ) set just before
    it (or 0), steps by a VIADD or IADD3 immediate (`VIADD R, R, n`, `IADD3 R, R, n, RZ`) and
    ends at an ISETP.NE immediate (the copies of the register-limited tiles); None otherwise."""
    test = next((re.match(r'ISETP\.NE\.AND P\d+, PT, (R\d+), (0x[0-9a-f]+|\d+), PT', x) for x in reversed(before)
                 if x.startswith('ISETP.NE.AND')), None)
    if not test:
        return None
    reg, end = test.group(1), int(test.group(2), 0)
    k = order.index(t)
    start = 0
    for x in reversed(order[max(0, k - 40):k]):
        m = re.match(rf'(?:IMAD\.MOV\.U32 {reg}, RZ, RZ, |MOV {reg}, )(0x[0-9a-f]+|\d+|RZ)$', code[x])
        if m:
            start = 0 if m.group(1) == 'RZ' else int(m.group(1), 0)
            break
    for x in order:
        if t <= x < a:
            m = (re.match(rf'VIADD {reg}, {reg}, (0x[0-9a-f]+|\d+)$', code[x]) or
                 re.match(rf'IADD3 {reg}, {reg}, (0x[0-9a-f]+|\d+), RZ$', code[x]))
            step = int(m.group(1), 0) if m else 0
            if step > 0 and end > start and (end - start) % step == 0:
                return (end - start) // step
    return None


def decide(code, order, lo, hi):
    """Branch decisions for one unmasked step of a dense non-causal run."""
    d, seen_bar = {}, 0
    body = [a for a in order if lo <= a < hi]
    for k, a in enumerate(body):
        pred, op, args = parse(code[a])
        if op.startswith('BAR.SYNC'):
            seen_bar += 1
        if not (op.startswith('BRA') and pred) or op.startswith('BRA.DIV'):
            continue
        t = target(args)
        ahead = [code[x] for x in order if a < x < t][:6]
        before = [code[x] for x in body[max(0, k - 12):k]]
        trips = counted_loop(code, order, t, a, before) if lo <= t < a else None
        if trips:                                      # a rolled copy loop (register-limited kernels)
            d[f"{a:x}"] = [True] * (trips - 1) + [False]
        elif re.match(r'U?P\d+,', args):               # the masked loop's idle-warp test: not idle
            d[f"{a:x}"] = False
        elif any('LDG.E.U8' in x for x in ahead):     # block-sparse mask test: dense, skipped
            d[f"{a:x}"] = True
        elif any(x.startswith('VOTE.ANY') for x in before):  # lazy rescale: skipped
            d[f"{a:x}"] = True
        elif seen_bar == 2 and 'next' not in d:
            d[f"{a:x}"] = False                        # a next block exists
            d['next'] = True
        elif seen_bar == 2 and 'ragged' not in d:
            d[f"{a:x}"] = False                        # not ragged: the unguarded copy
            d['ragged'] = True
    return {k: v for k, v in d.items() if k not in ('next', 'ragged')}


def rescale_block(code, order, lo, hi):
    for a in order:
        if lo <= a < hi and code[a].startswith('VOTE.ANY'):
            b = next(x for x in order if x > a and parse(code[x])[1].startswith('BRA'))
            return b, target(parse(code[b])[2])


def count(code, order, lo, hi):
    c = collections.Counter()
    for a in order:
        if lo <= a < hi and not code[a].startswith('@!PT'):
            c[sw.PIPE.get(parse(code[a])[1].split('.')[0], 'alu')] += 1
    return c


def fmt(c):
    keys = ['tensor', 'fma', 'alu', 'xu', 'smem', 'shfl', 'global', 'barrier']
    return f"{sum(c.values()):8.1f} " + " ".join(f"{k}={c.get(k, 0):.0f}" for k in keys)


def run(listing, d, bm, bn, which=0):
    code, order = sw.read_function(listing, rf"fa2_forward_kernelI6__halfLi{d}ELi{bm}ELi{bn}ELb0E")
    lo, hi = main_loop(code, order, which)
    br = decide(code, order, lo, hi + 1)
    br[f"{hi:x}"] = False
    step = sw.walk(code, order, lo, order[order.index(hi) + 1], br, {})['other']
    step = collections.Counter({k: v for k, v in step.items() if not k.startswith('op:')})
    b, t = rescale_block(code, order, lo, hi)
    resc = count(code, order, order[order.index(b) + 1], t)
    print(f"d{d} {bm}x{bn} {'masked' if which else 'step'} {fmt(step)}")
    print(f"{'':10} rescale +{fmt(resc)}")
    return step, resc


def epilogue(code, order):
    """Per-warp counts from the last main loop's exit to EXIT: every conditional branch falls
    through (divergent guards such as the L store's lane test run their body for some lanes;
    l > 0), except one that jumps over a CALL (the division's slow path, not taken)."""
    lo, exit_, br = epilogue_walk(code, order)
    c = sw.walk(code, order, lo, exit_, br, {})['other']
    return collections.Counter({k: v for k, v in c.items() if not k.startswith('op:')})


def epilogue_walk(code, order):
    """(start, stop, branch decisions) of the epilogue's walk (see epilogue)."""
    loops = []
    for a in order:
        pred, op, args = parse(code[a])
        if op.startswith('BRA') and pred and not op.startswith('BRA.DIV'):
            t = target(args)
            if t < a and any(code[x].startswith('HMMA') for x in order if t <= x < a):
                loops.append(a)
    lo = order[order.index(loops[-1]) + 1]
    br = {}
    for a in order:
        pred, op, args = parse(code[a])
        if a >= lo and op.startswith('BRA') and pred and not op.startswith('BRA.DIV'):
            t = target(args)
            k = order.index(a)
            br[f"{a:x}"] = t > a and any(code[x].startswith('CALL') for x in order[k + 1:k + 4] if x < t)
    exit_ = next(a for a in order if a > lo and code[a].startswith('EXIT'))
    return lo, exit_, br


if __name__ == '__main__':
    listing = sys.argv[1]
    d = 128 if 'd128' in listing else 64
    tiles = sys.argv[2:] or ['64x16', '64x32', '64x128', '128x16', '128x128']
    for t in tiles:
        bm, bn = map(int, t.split('x'))
        run(listing, d, bm, bn)
        run(listing, d, bm, bn, 1)
        code, order = sw.read_function(listing, rf"fa2_forward_kernelI6__halfLi{d}ELi{bm}ELi{bn}ELb0E")
        print(f"{'':10} epilogue {fmt(epilogue(code, order))}")
