#!/usr/bin/env python3
"""Program vs walk per pipe for FA2 forward at one head dimension: the unmasked and masked step and the epilogue.

    experiments/probes/fa2_fwd_program_vs_walk.py WALK.txt [IOSIM]   (from the repository root; IOSIM: build/sim/iosim)

The head dimension is the walk's (its lines start `d64 BMxBN` or `d128 BMxBN`).

Reads fa2_fwd_walk.py's output (walk.txt) and the programs `iosim simulate --json` builds for each
tile (kernels[0].sm_model.programs[].instructions; the walk's xu is the program's mufu) and prints
per tile and program the walk's count, the program's, and walk - program per pipe.
"""
import json
import os
import re
import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
WALK = sys.argv[1]
IOSIM = sys.argv[2] if len(sys.argv) > 2 else 'build/sim/iosim'
D = 64
PIPES = ['tensor', 'fma', 'alu', 'xu', 'smem', 'shfl', 'global', 'barrier']


def walks(path):
    global D
    out, tile = {}, None
    for line in open(path):
        m = re.match(r'd(\d+) (\d+x\d+) (step|masked)\s+\S+ (.*)', line)
        e = re.match(r'\s+epilogue\s+\S+ (.*)', line)
        if m:
            D, tile = int(m.group(1)), m.group(2)
            out[(tile, m.group(3))] = {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', m.group(4))}
        elif e and tile:
            out[(tile, 'epilogue')] = {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', e.group(1))}
    return out


def programs(bm, bn):
    j = json.loads(subprocess.check_output(
        [IOSIM, 'simulate', '--profile', 'h200-sxm-141gb', '--algo', 'fa2', '--pass', 'fwd', '--batch', '2',
         '--heads', '16', '--seq', '5000', '--head-dim', str(D), '--block-m', str(bm), '--block-n', str(bn),
         '--json']))
    res = {}
    for p in j['kernels'][0]['sm_model']['programs']:
        kind = 'epilogue' if 'epilogue' in p['name'] else 'masked' if p['name'].endswith('masked') else 'step'
        c = dict(p['instructions'])
        c['xu'] = c.pop('mufu', 0)
        res[kind] = c
    return res


def main():
    w = walks(WALK)
    tiles = sorted({t for t, _ in w}, key=lambda t: tuple(map(int, t.split('x'))))
    print(f"{'tile':8} {'program':9} {'':5} {'total':>6} " + ' '.join(f'{p:>7}' for p in PIPES))
    for t in tiles:
        bm, bn = map(int, t.split('x'))
        try:
            prog = programs(bm, bn)
        except subprocess.CalledProcessError:
            print(f'{t:8} (iosim has no such kernel)')
            continue
        for kind in ('step', 'masked', 'epilogue'):
            a, b = w.get((t, kind)), prog.get(kind)
            if not a or not b:
                continue
            for label, c in (('walk', a), ('prog', b), ('diff', {p: a.get(p, 0) - b.get(p, 0) for p in PIPES})):
                print(f"{t:8} {kind:9} {label:5} {sum(c.get(p, 0) for p in PIPES):6d} "
                      + ' '.join(f'{c.get(p, 0):7d}' for p in PIPES))
        print()


if __name__ == '__main__':
    main()
