#!/usr/bin/env python3
"""The blind FA3 check: committed predictions against what run_grid.sh measured.

    experiments/validation/fa3-blind/compare.py GPU RAW_DIR [--now IOSIM]   (GPU: h200 | h100)

Reads predictions-<profile>.csv (written and committed before measuring) and, per configuration of
configs.txt, RAW_DIR/<name>.bench.json (CUDA-event median of the pass) and RAW_DIR/<name>.csv (Nsight
Compute: the SM clock); prints a Markdown table and the mean and worst |pred/meas - 1|.
--now IOSIM: the same table for the given iosim binary's predictions today (as predict.sh makes them),
which are not blind: the model may have changed after the measurements were seen.
"""
import subprocess
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


def predict_now(iosim, profile):
    """The configurations' predictions by `iosim` now: {name: {sim_pass_time_s, sim_clock_hz}}."""
    out = {}
    for line in open(os.path.join(HERE, 'configs.txt')):
        if line.startswith('#') or not line.strip():
            continue
        name, flags = line.split(';')[1], line.strip().split(';')[4]
        j = json.loads(subprocess.run([iosim, 'simulate', *flags.split(), '--profile', profile, '--json'],
                                      check=True, capture_output=True, text=True).stdout)
        out[name] = {'sim_pass_time_s': j['time']['seconds'], 'sim_clock_hz': j['kernels'][0]['sm_model']['clock_hz']}
    return out


def main():
    args = sys.argv[1:]
    now = None
    if '--now' in args:
        i = args.index('--now')
        if i + 1 >= len(args):
            sys.exit(__doc__)
        now = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2 or args[0] not in PROFILE:
        sys.exit(__doc__)
    gpu, raw = args
    if now:
        pred = predict_now(now, PROFILE[gpu])
        commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()
        print(f'iosim {commit} now (not blind), profile {PROFILE[gpu]}; measured: {raw}\n')
    else:
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
