#!/usr/bin/env python3
"""Instructions one warp executes along a path through a kernel's SASS, by pipe and region.

    experiments/probes/sass_walk.py LISTING FUNCTION_REGEX START STOP PATHS.json [--regions R.json]

LISTING is `cuobjdump -sass` text (the whole object: FUNCTION_REGEX picks the function).
The walk starts at address START and ends on reaching STOP (hex); it follows unconditional
branches, CALL/RET, falls through BRA.DIV (a converged warp) and takes each conditional
branch as PATHS.json decides. PATHS.json is {"classes": [{"weight": W, "branches": {ADDR:
true | false | [true, true, false]}}, ...]}: one decision set per class of warps (e.g. the
warps that hold rows of a per-row loop and those that do not), a list giving the outcome of
each visit in turn (a loop's back edge); the classes' counts are averaged by weight. A
branch without a decision stops the walk with its address and context, so every decision
is written down. `@!PT` instructions never issue and are skipped; predicated-off ones issue
and are counted, as Nsight Compute's inst_executed counts them.

Pipes follow the sm_90 split that Nsight Compute's counters show for these kernels:
IMAD (all forms), FFMA/FADD/FMUL, HADD2 and F2FP on fma; MUFU, FCHK, I2F, F2I on xu (the
SM model's mufu pipe); LDS/STS/LDSM smem; LDG/STG/LDGSTS/RED/LDL/STL global; everything
else alu. --regions R.json ({"name": ["lo", "hi"], ...}, hex, hi exclusive) splits the
counts by address range.
"""
import argparse
import collections
import json
import re
import sys

PIPE = {'HMMA': 'tensor', 'LDSM': 'smem', 'LDS': 'smem', 'STS': 'smem', 'FFMA': 'fma', 'FMUL': 'fma',
        'FADD': 'fma', 'IMAD': 'fma', 'IMUL': 'fma', 'HADD2': 'fma', 'HFMA2': 'fma', 'HMUL2': 'fma',
        'F2FP': 'fma', 'MUFU': 'xu', 'FCHK': 'xu', 'I2F': 'xu', 'F2I': 'xu', 'SHFL': 'shfl',
        'BAR': 'barrier', 'LDG': 'global', 'STG': 'global', 'LDGSTS': 'global', 'RED': 'global',
        'LDL': 'global', 'STL': 'global'}
FUNC = re.compile(r"^\s*Function : (\S+)")
INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\*")


def read_function(path, pattern):
    code, order, cur = {}, [], None
    for line in open(path):
        m = FUNC.match(line)
        if m:
            if cur is not None:
                break
            cur = m.group(1) if re.search(pattern, m.group(1)) else None
            continue
        if cur is None:
            continue
        i = INSTR.match(line)
        if i:
            a = int(i.group(1), 16)
            code[a] = i.group(2).rstrip(' ;')
            order.append(a)
    if not order:
        sys.exit(f"sass_walk: no function matching {pattern!r} in {path}")
    return code, order


def parse(text):
    """(predicate, opcode, arguments) of one instruction's text."""
    m = re.match(r'(@!?U?P\w+\s+)?(\S+)\s*(.*)', text)
    return (m.group(1) or '').strip(), m.group(2), m.group(3)


def target(args):
    """The address a branch's arguments name."""
    return int(re.search(r'0x([0-9a-f]+)', args).group(1), 16)


def walk(code, order, start, stop, branches, regions):
    counts = collections.defaultdict(collections.Counter)  # region -> pipe / op -> n
    for a in path(code, order, start, stop, branches):
        base = parse(code[a])[1].split('.')[0]
        region = next((name for name, (lo, hi) in regions.items() if lo <= a < hi), 'other')
        counts[region][PIPE.get(base, 'alu')] += 1
        counts[region]['op:' + base] += 1
    return counts


def path(code, order, start, stop, branches):
    """The addresses of the instructions one warp issues, in order (see walk)."""
    nxt = {order[k]: order[k + 1] for k in range(len(order) - 1)}
    issued = []
    visits, stack, a, n = collections.Counter(), [], start, 0
    while a != stop:
        n += 1
        if n > 1_000_000:
            sys.exit("sass_walk: more than 10^6 instructions: a loop without an exit decision?")
        text = code[a]
        pred, op, args = parse(text)
        base = op.split('.')[0]
        if pred == '@!PT':
            a = nxt[a]
            continue
        issued.append(a)
        if base == 'EXIT' and not pred:
            break
        if op.startswith('BRA.DIV'):
            a = nxt[a]
            continue
        if base in ('BRA', 'CALL'):
            dest = target(args)
            if base == 'CALL':
                stack.append(nxt[a])
                a = dest
                continue
            if not pred:
                a = dest
                continue
            key = f"{a:x}"
            if key not in branches:
                k = order.index(a)
                context = "\n".join(f"  {x:x} {code[x]}" for x in order[max(0, k - 12):k + 4])
                sys.exit(f"sass_walk: no decision for the branch at {key}: {text}\n{context}")
            d = branches[key]
            visits[key] += 1
            taken = d[visits[key] - 1] if isinstance(d, list) else d
            a = dest if taken else nxt[a]
            continue
        if base == 'RET':
            a = stack.pop()
            continue
        a = nxt[a]
    return issued


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("listing")
    ap.add_argument("function")
    ap.add_argument("start")
    ap.add_argument("stop")
    ap.add_argument("paths")
    ap.add_argument("--regions")
    a = ap.parse_args()
    code, order = read_function(a.listing, a.function)
    regions = {k: (int(lo, 16), int(hi, 16)) for k, (lo, hi) in json.load(open(a.regions)).items()} if a.regions else {}
    classes = json.load(open(a.paths))["classes"]
    total_w = sum(c["weight"] for c in classes)
    avg = collections.defaultdict(collections.Counter)
    for c in classes:
        for region, cnt in walk(code, order, int(a.start, 16), int(a.stop, 16), c["branches"], regions).items():
            for k, v in cnt.items():
                avg[region][k] += v * c["weight"] / total_w
    total, all_ops = collections.Counter(), collections.Counter()
    for region in list(regions) + ['other']:
        if region not in avg:
            continue
        cnt = avg[region]
        pipes = {k: round(v, 2) for k, v in sorted(cnt.items()) if not k.startswith('op:')}
        ops = sorted(((k[3:], round(v, 2)) for k, v in cnt.items() if k.startswith('op:')), key=lambda x: -x[1])
        total.update(pipes)
        all_ops.update(dict(ops))
        if regions:
            print(f"{region:10} {sum(pipes.values()):8.2f} {pipes}\n{'':10} {ops[:14]}")
    print(f"{'total':10} {sum(total.values()):8.2f} {dict(sorted((k, round(v, 2)) for k, v in total.items()))}")
    print(f"{'ops':10} {dict(sorted((k, round(v, 2)) for k, v in all_ops.items()))}")


if __name__ == "__main__":
    main()
