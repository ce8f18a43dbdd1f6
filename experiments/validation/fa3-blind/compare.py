#!/usr/bin/env python3
"""The blind FA3 check: committed predictions against what run_grid.sh measured.

    experiments/validation/fa3-blind/compare.py GPU RAW_DIR   (GPU: h200 | h100)

Reads predictions-<profile>.csv (written and committed before measuring) and, per configuration of
configs.txt, RAW_DIR/<name>.bench.json (CUDA-event median of the pass) and RAW_DIR/<name>.csv (Nsight
Compute: the SM clock); prints a Markdown table and the mean and worst |pred/meas - 1|.
"""
import csv
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE = {'h200': 'h200-sxm-141gb', 'h100': 'h100-sxm5-80gb'}


def clock_of(path):
    """The SM clock of the one profiled kernel (ncu --csv --page raw: metric names, units, values):
    sm__cycles_elapsed.avg over gpu__time_duration.sum (ns), as build_csv.py does where ncu lists
    no .per_second form; None without them."""
    if not os.path.exists(path):
        return None
    rows = list(csv.reader(l for l in open(path) if l.startswith('"')))
    if len(rows) < 3:
        return None
    value = dict(zip(rows[0], rows[-1]))
    try:
        cycles = float(value['sm__cycles_elapsed.avg'].replace(',', ''))
        ns = float(value['gpu__time_duration.sum'].replace(',', ''))
    except (KeyError, ValueError):
        return None
    return cycles / (ns * 1e-9) if ns > 0 else None


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in PROFILE:
        sys.exit(__doc__)
    gpu, raw = sys.argv[1], sys.argv[2]
    lines = open(os.path.join(HERE, f'predictions-{PROFILE[gpu]}.csv')).read().splitlines()
    pred = {r['name']: r for r in csv.DictReader(l for l in lines if not l.startswith('#'))}
    print(f'{lines[0].lstrip("# ")}; measured: {raw}\n')
    print('| configuration | predicted ms | measured ms | pred/meas | model clock MHz | measured clock MHz |')
    print('|---|---|---|---|---|---|')
    ratios = []
    for line in open(os.path.join(HERE, 'configs.txt')):
        if line.startswith('#') or not line.strip():
            continue
        name = line.split(';')[1]
        bench = os.path.join(raw, name + '.bench.json')
        if not os.path.exists(bench):
            print(f'| {name} | | not measured | | | |')
            continue
        meas = json.load(open(bench))['median_ms'] / 1e3
        p = pred[name]
        r = float(p['sim_pass_time_s']) / meas
        ratios.append(r)
        clk = clock_of(os.path.join(raw, name + '.csv'))
        print(f'| {name} | {float(p["sim_pass_time_s"]) * 1e3:.3f} | {meas * 1e3:.3f} | {r:.3f} | '
              f'{float(p["sim_clock_hz"]) / 1e6:.0f} | {"" if clk is None else f"{clk / 1e6:.0f}"} |')
    if ratios:
        errs = [abs(r - 1) for r in ratios]
        print(f'\n{len(ratios)} configurations: mean |pred/meas - 1| {statistics.mean(errs):.3f}, '
              f'median pred/meas {statistics.median(ratios):.3f}, worst {max(ratios, key=lambda r: abs(r - 1)):.3f}')


if __name__ == '__main__':
    main()
