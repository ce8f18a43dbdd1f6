#!/usr/bin/env python3
"""Per-instruction Nsight Compute counters (source_counters.sh's NAME-source.csv) as a warp program's
view: instructions grouped by how often each executed, and one group split into regions by pipe.

    experiments/probes/source_table.py SOURCE.csv [--count N] [--split OPCODE_REGEX|=ADDR ...] [--list]

Groups: every distinct "Instructions Executed" value with its instruction count and share of the
kernel's instructions (a loop body executes (warps x trips) times: 8 consumer warps x 31 key blocks
x 1024 CTAs = 253952 for FA3 d128 N 4096 B*H 32). --count picks a group (default: the largest
share); its instructions, in address order, are cut before each instruction whose opcode matches
the --split cuts in turn (each at the first instruction
after the previous cut whose opcode matches it, or, as '=a6b20', whose address ends so), and each region is printed by pipe (sass_walk.PIPE: IMAD, FFMA/FADD/FMUL, F2FP
on fma; MUFU on xu; uniform-datapath and the rest on alu) with its warp-state samples. --list
prints the group's instructions with their samples.
"""
import argparse
import collections
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_walk import PIPE, parse  # noqa: E402

PIPES = ['tensor', 'fma', 'alu', 'xu', 'shfl', 'smem', 'global', 'barrier']


def open_text(path):
    """A text file, or its xz-compressed copy PATH.xz (the committed per-instruction CSVs are
    compressed to keep the repository small enough to travel to the GPU machine)."""
    import lzma
    if path.endswith('.xz'):
        return lzma.open(path, 'rt')
    if not os.path.exists(path) and os.path.exists(path + '.xz'):
        return lzma.open(path + '.xz', 'rt')
    return open(path)


def read(path):
    lines = open_text(path).read().splitlines()
    rows = list(csv.reader(lines[1:]))
    head = {k: i for i, k in enumerate(rows[0])}
    out = []
    for r in rows[1:]:
        text = r[head['Source']].strip()
        if not text:
            continue
        out.append({'addr': r[head['Address']], 'text': text, 'n': int(r[head['Instructions Executed']]),
                    'samples': int(r[head['Warp Stall Sampling (All Samples)']] or 0)})
    return lines[0], out


def pipe(text):
    op = parse(text)[1]
    base = op.split('.')[0]
    if base == 'HGMMA':
        return 'tensor'
    return PIPE.get(base, 'alu')


def cut_here(cut, ins):
    """A --split: '=a6b20' (an address ending) or an opcode regex."""
    if cut.startswith('='):
        return ins['addr'].endswith(cut[1:])
    return re.search(cut, parse(ins['text'])[1]) is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('source')
    ap.add_argument('--count', type=int)
    ap.add_argument('--split', action='append', default=[])
    ap.add_argument('--list', action='store_true')
    a = ap.parse_args()
    kernel, ins = read(a.source)
    total = sum(i['n'] for i in ins)
    print(kernel.split(',', 1)[1].strip('"'))
    print(f"instructions executed: {total}")
    groups = collections.Counter()
    for i in ins:
        groups[i['n']] += 1
    print("\n| executions | instructions | share |\n|---|---|---|")
    for n, k in sorted(groups.items(), key=lambda t: -t[0] * t[1])[:10]:
        print(f"| {n} | {k} | {n * k / total:.3f} |")
    count = a.count or max(groups, key=lambda n: n * groups[n])
    body = [i for i in ins if i['n'] == count]
    regions, cur, cuts = [], [], list(a.split)
    for i in body:
        if cur and cuts and cut_here(cuts[0], i):
            cuts.pop(0)
            regions.append(cur)
            cur = []
        cur.append(i)
    regions.append(cur)
    print(f"\ngroup executed {count} times: {len(body)} instructions\n")
    print("| region (first instruction) | " + " | ".join(PIPES) + " | total | samples |")
    print("|---|" + "---|" * (len(PIPES) + 2))
    for reg in regions + [body]:
        c = collections.Counter(pipe(i['text']) for i in reg)
        name = 'all' if reg is body else f"{reg[0]['addr'][-5:]} {parse(reg[0]['text'])[1]}"
        print(f"| {name} | " + " | ".join(str(c[p]) for p in PIPES) +
              f" | {len(reg)} | {sum(i['samples'] for i in reg)} |")
    if a.list:
        for i in body:
            print(f"{i['addr'][-5:]} {pipe(i['text']):7s} {i['samples']:6d}  {i['text']}")


if __name__ == '__main__':
    main()
