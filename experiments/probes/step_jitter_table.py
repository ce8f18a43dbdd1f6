#!/usr/bin/env python3
"""The step-jitter probe's table (step_jitter_probe's CSV): per configuration, the spread of a CTA's
step over its mean step, its quantiles, and how far apart the CTAs drift (the standard deviation over
CTAs of the time from step 4 to step 4 + k, in SM cycles and in steps).
  experiments/probes/step_jitter_table.py jitter.csv
"""
import csv, sys

rows = list(csv.DictReader(open(sys.argv[1])))
print("| CTAs/SM | tile KiB | mma/warp | CTAs per tile | step cycles | step sd / mean | p01 | p50 | p99 "
      "| drift k=8 | k=32 | k=128 | k=128 in steps | first stamps' spread |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    step = float(r["step_cycles"])
    print(f"| {r['ctas_per_sm']} | {r['tile_kib']} | {r['mmas']} | {r['share']} | {step:.0f} | {float(r['cv']):.4f} "
          f"| {float(r['p01']):.3f} | {float(r['p50']):.3f} | {float(r['p99']):.3f} | {float(r['spread8']):.0f} "
          f"| {float(r['spread32']):.0f} | {float(r['spread128']):.0f} | {float(r['spread128']) / step:.2f} "
          f"| {float(r['start_spread']):.0f} |")

# The per-rank column (probes since the rank column was added): a CTA's mean step over its SM's mean,
# by its rank among the SM's CTAs in order of their first stamp (0 = the first to start).
if rows and "rank_step_over_sm_mean" in rows[0]:
    print("\n| CTAs/SM | tile KiB | mma/warp | mean step over the SM's mean, by rank (0 = started first) |")
    print("|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['ctas_per_sm']} | {r['tile_kib']} | {r['mmas']} | {r['rank_step_over_sm_mean'].replace(';', ', ')} |")

# sm_pipes.cta_priority: the least squares of 1 + a (1 - 2/n)(r - (n - 1)/2) against every rank's mean
# step over 2-8 CTAs per SM, runs with products only, over the files given
# (experiments/probes/step_jitter_table.py ranks.csv --fit ranks2.csv).
if "--fit" in sys.argv:
    fit_rows = list(rows)
    for extra in sys.argv[sys.argv.index("--fit") + 1:]:
        fit_rows += list(csv.DictReader(open(extra)))
    num = den = 0.0
    runs = 0
    for r in fit_rows:
        n = int(r["ctas_per_sm"])
        if not 2 <= n <= 8 or int(r["mmas"]) == 0 or "rank_step_over_sm_mean" not in r:
            continue
        runs += 1
        for k, x in enumerate(float(v) for v in r["rank_step_over_sm_mean"].split(";")):
            g = (1 - 2 / n) * (k - (n - 1) / 2)
            num += g * (x - 1)
            den += g * g
    a = num / den
    worst = max(abs(1 + a * (1 - 2 / int(r["ctas_per_sm"])) * (k - (int(r["ctas_per_sm"]) - 1) / 2) - float(v))
                for r in fit_rows if 2 <= int(r["ctas_per_sm"]) <= 8 and int(r["mmas"]) > 0
                for k, v in enumerate(r["rank_step_over_sm_mean"].split(";")))
    print(f"\ncta_priority (least squares over {runs} runs of 2-8 CTAs per SM with products): a = {a:.3f}, "
          f"worst rank off by {worst:.3f}")
