#!/usr/bin/env python3
"""Instructions of chosen address ranges of a SASS listing, by the SM model's pipe.

    experiments/probes/sass_blocks.py LISTING NAME=LO-HI[,LO-HI...] ...

LISTING is one function's `cuobjdump -sass` text; each NAME sums the instructions whose
address lies in any of its hex ranges (inclusive), skipping `@!PT` (never executed) ones.
Used to count a path through a loop (e.g. a GEMM chunk's interior path) for the warp
programs (sim/schedule/warp_programs.cpp).
"""
import collections
import re
import sys

PIPE = {'HMMA': 'tensor', 'LDSM': 'smem', 'LDS': 'smem', 'STS': 'smem', 'FFMA': 'fma', 'FMUL': 'fma',
        'FADD': 'fma', 'HADD2': 'fma', 'HFMA2': 'fma', 'HMUL2': 'fma', 'IMAD': 'fma', 'IMUL': 'fma',
        'MUFU': 'mufu', 'SHFL': 'shfl', 'BAR': 'barrier',
        'LDG': 'global', 'STG': 'global', 'LDGSTS': 'global', 'RED': 'global'}
LINE = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z0-9_.]+)")


def main(listing, specs):
    ins = [(int(m.group(1), 16), (m.group(2) or '').strip(), m.group(3).split('.')[0])
           for m in map(LINE.match, open(listing)) if m]
    for spec in specs:
        name, ranges = spec.split('=', 1)
        spans = [tuple(int(x, 16) for x in r.split('-')) for r in ranges.split(',')]
        pipes, ops = collections.Counter(), collections.Counter()
        for addr, pred, op in ins:
            if pred != '@!PT' and any(lo <= addr <= hi for lo, hi in spans):
                pipes[PIPE.get(op, 'alu')] += 1
                ops[op] += 1
        print(f"{name}: {sum(pipes.values())} {dict(pipes)}")
        print(f"    {ops.most_common(12)}")


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
