#!/usr/bin/env python3
"""FA2's local memory (LDL/STL: register spills and register-indexed tables) along the walks of
fa2_fwd_walk.py and fa2_bwd_walk.py: per tile and region (step, masked step, epilogue, the prologue: the local
accesses before the main loop, and the forward's first and masked_first: a step with its lazy
rescale taken, where that block holds local accesses) the
sequence of local accesses one warp issues, as `L` (LDL) or `S` (STL), the bytes per lane, and
the stack offset (`x`: an address in a register, i.e. an indexed table).

    experiments/probes/local_walk.py LISTING [BMxBN ...]        (fwd or bwd from the file name)
    experiments/probes/local_walk.py --inc LISTING...          (the rows of sim/schedule/fa2_local_memory.inc)

Local memory is interleaved by 4-byte word: word w of the 32 lanes of a warp is one 128-byte line,
so an access of B bytes per lane at offset o touches lines o/4 .. o/4 + B/4 - 1 of the warp's own.
Which loads the L1 serves is the simulator's rule (schedule::local_hits), tested against the
measurement in tests/test_local_memory.cpp.
"""
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


sw, fwd, bwd = load("sass_walk"), load("fa2_fwd_walk"), load("fa2_bwd_walk")
LOCAL = re.compile(r"^(LDL|STL)(\.LU)?(?:\.(64|128|U8|S8|U16|S16))?$")


REG = re.compile(r"\bR(\d+)\b")


def use_distance(code, addrs, i, width):
    """Instructions from the LDL at addrs[i] to the first one that reads a register it loads
    (-1: none before the walk's end, e.g. a value for the next step)."""
    first = int(REG.search(sw.parse(code[addrs[i]])[2]).group(1))
    dest = set(range(first, first + max(1, width // 4)))
    for k in range(i + 1, len(addrs)):
        pred, op, args = sw.parse(code[addrs[k]])
        pred_regs = set()
        # Stores read every operand; other instructions read all but their first (the destination).
        operands = args if op.startswith(('ST', 'RED', 'BRA')) else args.split(',', 1)[1] if ',' in args else ''
        read = {int(r) for r in REG.findall(operands)}
        for r in list(read):  # a .64/.128 operand names its first register only
            if re.search(rf"\bR{r}\.64\b", operands) or op.endswith('.64'):
                read.add(r + 1)
        if read & dest:
            return k - i
        # Overwritten before any read: nothing waits for the load's value there.
        written = REG.search(args.split(',', 1)[0]) if not op.startswith(('ST', 'RED', 'BRA', 'BAR')) else None
        if written and int(written.group(1)) in dest and not op.startswith('LDL'):
            dest.discard(int(written.group(1)))
            if not dest:
                return -1
    return -1


def accesses(code, addrs):
    """[(kind 'L'|'U'|'S', bytes per lane, offset or 'x...', use distance)] of the local
    instructions at addrs (U: LDL.LU, the last use of the stack word)."""
    out = []
    for i, a in enumerate(addrs):
        pred, op, args = sw.parse(code[a])
        m = LOCAL.match(op)
        if not m:
            continue
        width = {None: 4, '64': 8, '128': 16}.get(m.group(3), 4)
        mem = re.search(r"\[([^\]]+)\]", args).group(1).replace(' ', '')
        o = re.fullmatch(r"R1(?:\+(0x[0-9a-f]+|\d+))?", mem)
        kind = 'S' if m.group(1) == 'STL' else 'U' if m.group(2) else 'L'
        off = int(o.group(1), 0) if o and o.group(1) else 0 if o else f"x{a:x}"
        out.append((kind, width, off, use_distance(code, addrs, i, width) if kind != 'S' else -1))
    return out


def fwd_regions(listing, d, bm, bn):
    code, order = sw.read_function(listing, rf"fa2_forward_kernelI6__halfLi{d}ELi{bm}ELi{bn}ELb0E")
    out = {}
    for name, which in (('step', 0), ('masked', 1)):
        lo, hi = fwd.main_loop(code, order, which)
        br = fwd.decide(code, order, lo, hi + 1)
        br[f"{hi:x}"] = False
        stop = order[order.index(hi) + 1]
        out[name] = accesses(code, sw.path(code, order, lo, stop, br))
        # The same step with the lazy rescale taken (VOTE.ANY's branch falls through): a CTA's
        # first key block, where every row's maximum grows from -inf. Written only where the
        # rescale block holds local accesses (`first`, `masked_first`).
        vote, _ = fwd.rescale_block(code, order, lo, hi)
        first = accesses(code, sw.path(code, order, lo, stop, {**br, f"{vote:x}": False}))
        if first != out[name]:
            out[('first' if which == 0 else 'masked_first')] = first
    lo, exit_, br = fwd.epilogue_walk(code, order)
    out['epilogue'] = accesses(code, sw.path(code, order, lo, exit_, br))
    # The prologue: the local accesses placed before the first main loop, in address order, once
    # per CTA (its STLs spill what the set-up computed). Those inside a block that a forward branch
    # skips and that ends before the loop run in every CTA of a causal kernel (the branch tests the
    # causal flag, c[0x0][0x230], at every tile with such accesses but d 64 256 x 256 and d 128
    # 256 x 128, whose only one there is an LDL): `masked_prologue`; those placed between the two
    # loops only in CTAs with a masked run: `masked_entry` (the grids' crossbar writes per CTA say
    # so at d 128 128 x 64, 64 x 64 and d 64 64 x 128: experiments/results/2026-12-01-fa2-fwd-prologue-spills
    # and 2026-12-02-fa2-fwd-lazy-rescale-spills).
    l0, l1 = fwd.main_loop(code, order, 0), fwd.main_loop(code, order, 1)
    first = min(l0[0], l1[0])
    skipped = [(a, target(args)) for a in order if a < first
               for pred, op, args in [sw.parse(code[a])]
               if op.startswith('BRA') and pred and not op.startswith('BRA.DIV') and a < target(args) <= first]
    before = [a for a in order if a < first]
    out['prologue'] = accesses(code, [a for a in before if not any(b < a < t for b, t in skipped)])
    between = [a for a in order if min(l0[1], l1[1]) < a < max(l0[0], l1[0])]
    out['masked_prologue'] = accesses(code, [a for a in before if any(b < a < t for b, t in skipped)])
    out['masked_entry'] = accesses(code, between)
    return out


def target(args):
    return int(re.search(r"0x[0-9a-f]+", args).group(0), 16)


def bwd_regions(listing, d, bm, bn):
    code, order = sw.read_function(listing, rf"fa2_backward_kernelI6__halfLi{d}ELi{bm}ELi{bn}EE")
    lo, hi = bwd.main_loop(code, order)
    stop = order[order.index(hi) + 1]
    out = {}
    for name, masked in (('step', False), ('masked', True)):
        out[name] = accesses(code, sw.path(code, order, lo, stop, bwd.decide(code, order, lo, hi, masked)))
    lo2, exit_, br = bwd.epilogue_walk(code, order, hi)
    out['epilogue'] = accesses(code, sw.path(code, order, lo2, exit_, br))
    # The prologue: every local access placed before the main loop, in address order (the blocks
    # there are the CTA's set-up and the loop's preheader; no walk decides their branches). Its
    # STLs spill what the set-up computed, once per CTA: per thread they equal, byte for byte,
    # what Nsight Compute's crossbar writes exceed the trace by (docs/engine.md, "Local memory").
    out['prologue'] = accesses(code, [a for a in order if a < lo])
    return out


def lines(acc):
    kind, width, off = acc[:3]
    if isinstance(off, str):
        return [off]  # an indexed table: one line per instruction (its rows are few)
    return [off // 4 + k for k in range(max(1, width // 4))]


def fmt(seq):
    return " ".join(f"{k}{w}:{o if isinstance(o, str) else hex(o)}" + (f"@{u}" if u >= 0 else "") for k, w, o, u in seq)


def token(acc, tables):
    """One access as the .inc table spells it: KIND BYTES (+OFFSET | tTABLE) [@DISTANCE]."""
    k, w, o, u = acc
    where = f"t{tables.setdefault(o, len(tables))}" if isinstance(o, str) else f"+{o}"
    return f"{k}{w}{where}" + (f"@{u}" if u >= 0 else "")


def functions(listing, pattern):
    names = re.findall(r"Function : (\S+)", open(listing).read())
    return [tuple(map(int, m.groups())) for n in names for m in [re.search(pattern, n)] if m]


def inc(listings):
    """The X-macro rows of sim/schedule/fa2_local_memory.inc for every fp16 FA2 kernel of the listings."""
    rows = []
    for listing in listings:
        bwd_file = 'bwd' in os.path.basename(listing)
        pat = r"fa2_backward_kernelI6__halfLi(\d+)ELi(\d+)ELi(\d+)EE" if bwd_file else r"fa2_forward_kernelI6__halfLi(\d+)ELi(\d+)ELi(\d+)ELb0E"
        for d, bm, bn in sorted(set(functions(listing, pat))):
            out = (bwd_regions if bwd_file else fwd_regions)(listing, d, bm, bn)
            for region in ('prologue', 'masked_prologue', 'masked_entry', 'step', 'masked', 'first', 'masked_first',
                           'epilogue'):
                seq = out.get(region, [])
                if not seq:
                    continue
                tables = {}
                body = " ".join(token(a, tables) for a in seq)
                rows.append(f'X({"bwd" if bwd_file else "fwd"}, {d}, {bm}, {bn}, {region}, "{body}")')
    return rows


def main():
    if sys.argv[1:2] == ['--inc']:
        print("\n".join(inc(sys.argv[2:])))
        return
    args = sys.argv[1:]
    listing = args[0]
    d = 128 if 'd128' in listing else 64
    regions = bwd_regions if 'bwd' in os.path.basename(listing) else fwd_regions
    for t in args[1:]:
        bm, bn = map(int, t.split('x'))
        out = regions(listing, d, bm, bn)
        for name, seq in out.items():
            lds = [a for a in seq if a[0] in 'LU']
            sts = [a for a in seq if a[0] == 'S']
            line = (f"d{d} {bm}x{bn} {name:8} LDL {len(lds)} ({sum(a[1] for a in lds) * 32} B) "
                    f"STL {len(sts)} ({sum(a[1] for a in sts) * 32} B) lines {len({l for a in seq for l in lines(a)})}")
            print(line)
            if os.environ.get('SEQ'):
                print(f"    {fmt(seq)}")


if __name__ == '__main__':
    main()
