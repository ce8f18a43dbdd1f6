#!/usr/bin/env python3
"""A kernel's measured cycles per step, region by region, from Nsight Compute's per-instruction
counters (source_counters.sh's NAME-source.csv and NAME-raw.csv): what `iosim walk` prints for the
model, for the hardware.

    experiments/probes/source_regions.py SOURCE.csv RAW.csv --steps N --cut ADDR:NAME [--cut ...]

Every SASS instruction belongs to the region of the last --cut whose address (hex, matched on the
address's last five digits, as source_table.py prints them) is at or below its own, the ones before
the first cut to "(before)". A region's cycles per step are the kernel's cycles
(gpc__cycles_elapsed.avg) times its share of the warp-state samples (every warp is sampled alike,
so a region's samples are the cycles warps waited to issue its instructions), over --steps (the
steps an SM runs: e.g. FA1 with one CTA per SM, the steps of a CTA). Instructions per step: its
executed warp instructions over --steps and --warps (the kernel's warps: CTAs x warps per CTA).
--of REGEX: shares over the samples of the regions whose name matches REGEX only, e.g. the consumer
warps' regions of a warp-specialised kernel, whose cycles then add up to the step's. Each row also names the
region's three largest stall reasons (% of its samples).
"""
import argparse
import collections
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_table import open_text  # noqa: E402


def read_source(path):
    lines = open_text(path).read().splitlines()
    rows = list(csv.reader(lines[1:]))
    head = {k: i for i, k in enumerate(rows[0])}
    stalls = [k for k in rows[0] if k.startswith('stall_') and 'Not Issued' not in k]
    out = []
    for r in rows[1:]:
        if not r[head['Source']].strip():
            continue
        out.append({'addr': int(r[head['Address']][-5:], 16),
                    'n': int(r[head['Instructions Executed']] or 0),
                    'samples': int(r[head['Warp Stall Sampling (All Samples)']] or 0),
                    'stalls': {k[6:]: float(r[head[k]] or 0) for k in stalls}})
    return out


def raw_value(path, key):
    rows = list(csv.reader(open_text(path)))
    for row in rows[1:]:
        if len(row) == len(rows[0]) and row[rows[0].index(key)].replace(',', '').replace('.', '').isdigit():
            return float(row[rows[0].index(key)].replace(',', ''))
    raise SystemExit(f"{path}: no value of {key}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('source')
    ap.add_argument('raw')
    ap.add_argument('--steps', type=float, required=True)
    ap.add_argument('--warps', type=float, default=1,
                    help="the kernel's warps that run the steps (CTAs x warps per CTA): instructions per warp and step")
    ap.add_argument('--cut', action='append', default=[], help='ADDR:NAME')
    ap.add_argument('--of', default=None, help="shares over the regions matching REGEX only")
    a = ap.parse_args()
    cuts = sorted((int(c.split(':', 1)[0], 16), c.split(':', 1)[1]) for c in a.cut)
    ins = read_source(a.source)
    cycles = raw_value(a.raw, 'gpc__cycles_elapsed.avg')
    names = ['(before)'] + [n for _, n in cuts]
    agg = collections.OrderedDict((n, {'samples': 0, 'n': 0, 'stalls': collections.Counter()}) for n in names)
    for i in ins:
        k = sum(1 for c, _ in cuts if i['addr'] >= c)
        g = agg[names[k]]
        g['samples'] += i['samples']
        g['n'] += i['n']
        g['stalls'].update(i['stalls'])
    counted = [n for n in names if a.of is None or re.search(a.of, n)]
    total = sum(agg[n]['samples'] for n in counted) or 1
    print(f"cycles per step {cycles / a.steps:.0f} (gpc__cycles_elapsed.avg {cycles:.0f} over {a.steps:g} steps)"
          + (f"; shares of the regions matching '{a.of}'" if a.of else "") + "\n")
    print('| region | instructions per warp | cycles | share | cycles per instruction | stalls (% of its samples) |')
    print('|---|---:|---:|---:|---:|---|')
    for name, g in agg.items():
        if (g['samples'] == 0 and g['n'] == 0) or name not in counted:
            continue
        c = cycles / a.steps * g['samples'] / total
        n = g['n'] / a.steps / a.warps
        st = sum(g['stalls'].values()) or 1
        top = ', '.join(f"{k} {v / st * 100:.0f}" for k, v in g['stalls'].most_common(3))
        print(f"| {name} | {n:.0f} | {c:.0f} | {g['samples'] / total * 100:.1f}% | {c / n if n else 0:.2f} | {top} |")


if __name__ == '__main__':
    main()
