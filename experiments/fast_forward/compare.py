#!/usr/bin/env python3
"""Fast-forward (and set sampling) against the exact engine, kernel by kernel.

Runs `iosim simulate --json` once exactly and once per approximate mode for
each case below, and prints, per case and mode, the host seconds, the
relative error of the run's time and DRAM bytes, the change of its L2 hit
rates (points), and the kernel (of 5% of the time or more) whose time is off
most; it stops if requested bytes or steps differ from the exact run's. Writes
every number to CSV (experiments/fast_forward/report.py prints the table).

usage: compare.py IOSIM OUT.csv [--quick]
"""
import csv
import json
import subprocess
import sys
import time

GPT2 = "--batch 64 --heads 16 --seq 1024 --head-dim 64 --pass fwdbwd"
CASES = [
    # name, simulate flags (the speed cases first)
    ("gpt2-standard-a100", f"--profile a100 --algo standard {GPT2}"),
    ("gpt2-fa1-a100", f"--profile a100 --algo fa1 {GPT2}"),
    ("gpt2-fa2-a100", f"--profile a100 --algo fa2 {GPT2}"),
    ("standard-n16k-a100", "--profile a100 --algo standard --batch 4 --heads 16 --seq 16384 --head-dim 64"),
    ("fa2-fwd-n16k-d128-h100", "--profile h100 --algo fa2 --batch 1 --heads 32 --seq 16384 --head-dim 128"),
    ("fa2-causal-fwdbwd-h200", "--profile h200 --algo fa2 --batch 8 --heads 16 --seq 4096 --head-dim 64 --pass fwdbwd --causal"),
    ("fa2-gqa-fwdbwd-h200", "--profile h200 --algo fa2 --batch 8 --heads 32 --kv-heads 4 --seq 2048 --head-dim 128 --pass fwdbwd"),
    ("fa2-sparse-fwd-h200", "--profile h200 --algo fa2 --batch 16 --heads 16 --seq 4096 --head-dim 64 --block-density 0.5"),
    ("fa1-fwd-n8k-h200", "--profile h200 --algo fa1 --batch 2 --heads 16 --seq 8192 --head-dim 64"),
    ("fa1-fwdbwd-d128-h200", "--profile h200 --algo fa1 --batch 8 --heads 16 --seq 2048 --head-dim 128 --pass fwdbwd"),
    ("fa1-fwdbwd-n4k-64x128-a100", "--profile a100 --algo fa1 --batch 16 --heads 16 --seq 4096 --head-dim 64 --pass fwdbwd --block-m 64 --block-n 128"),
    ("standard-fwdbwd-h100", "--profile h100 --algo standard --batch 16 --heads 16 --seq 2048 --head-dim 64 --pass fwdbwd"),
    ("fa1-causal-fwdbwd-h200", "--profile h200 --algo fa1 --batch 16 --heads 16 --seq 2048 --head-dim 64 --pass fwdbwd --causal"),
    ("fa3-fwd-h200", "--profile h200 --algo fa3 --batch 16 --heads 16 --seq 4096 --head-dim 128"),
    ("standard-wgmma-fwdbwd-h200", "--profile h200 --algo standard --gemm-impl wgmma --batch 16 --heads 16 --seq 2048 --head-dim 64 --pass fwdbwd"),
    ("splitkv-decode-h200", "--profile h200 --algo splitkv --batch 64 --heads 32 --seq-q 1 --seq-k 32768 --head-dim 128"),
]
QUICK = {"gpt2-fa2-a100", "fa2-causal-fwdbwd-h200", "fa2-sparse-fwd-h200"}
MODES = [("fast-forward", "--fast-forward"), ("fast-forward+sample16", "--fast-forward --l2-sample 16")]


def run(iosim, flags):
    t0 = time.perf_counter()
    p = subprocess.run([iosim, "simulate", *flags.split(), "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return p.stderr.strip(), 0
    return json.loads(p.stdout), time.perf_counter() - t0


def exact_fields(k):
    return (k["requests"]["read_bytes"], k["requests"]["write_bytes"], k["requests"]["reduce_bytes"], k["requests"]["steps"])


def rel(a, b):
    return (b - a) / a if a else (0.0 if b == 0 else float("inf"))


def hit_rate(k, key):
    return k["l2"][key]


def main():
    iosim, out_csv = sys.argv[1], sys.argv[2]
    cases = [c for c in CASES if "--quick" not in sys.argv or c[0] in QUICK]
    rows = []
    for name, flags in cases:
        exact, exact_s = run(iosim, flags)
        for mode, extra in MODES:
            approx, approx_s = run(iosim, f"{flags} {extra}")
            if isinstance(approx, str):  # e.g. the H100's L2 sets cannot be sampled 1 in 16
                print(f"{name:28s} {mode:22s} not run: {approx}", flush=True)
                continue
            kernels = list(zip(exact["kernels"], approx["kernels"]))
            for (e, a) in [(exact, approx)] + kernels:
                if exact_fields(e) != exact_fields(a):
                    raise SystemExit(f"{name} {mode}: requested bytes or steps differ ({e.get('name', 'total')})")
            skipped = sum(a["fast_forward"]["skipped_steps"] for _, a in kernels)
            row = {"case": name, "mode": mode, "flags": flags, "exact_host_s": round(exact_s, 3),
                   "approx_host_s": round(approx_s, 3), "steps": exact["requests"]["steps"], "skipped_steps": skipped,
                   "time_err": rel(exact["time"]["seconds"], approx["time"]["seconds"]),
                   "dram_read_err": rel(exact["dram"]["read_bytes"], approx["dram"]["read_bytes"]),
                   "dram_write_err": rel(exact["dram"]["write_bytes"], approx["dram"]["write_bytes"]),
                   "dram_total_err": rel(exact["dram"]["read_bytes"] + exact["dram"]["write_bytes"],
                                         approx["dram"]["read_bytes"] + approx["dram"]["write_bytes"]),
                   "hit_rate_points": 100 * (hit_rate(approx, "hit_rate") - hit_rate(exact, "hit_rate")),
                   "lookup_hit_rate_points": 100 * (hit_rate(approx, "lookup_hit_rate") - hit_rate(exact, "lookup_hit_rate"))}
            # The kernel whose time is off most, among those of at least 5% of the run's time.
            big = [(e, a) for e, a in kernels if e["time"]["seconds"] >= 0.05 * exact["time"]["seconds"]]
            worst = max(big, key=lambda p: abs(rel(p[0]["time"]["seconds"], p[1]["time"]["seconds"])))
            row["worst_kernel"] = worst[0]["name"]
            row["worst_kernel_time_err"] = rel(worst[0]["time"]["seconds"], worst[1]["time"]["seconds"])
            rows.append(row)
            print(f"{name:28s} {mode:22s} {exact_s:7.2f}s -> {approx_s:6.2f}s  time {100*row['time_err']:+.2f}%  "
                  f"DRAM rd {100*row['dram_read_err']:+.2f}% wr {100*row['dram_write_err']:+.2f}%  "
                  f"L2 hit {row['hit_rate_points']:+.2f} pt  lookup hit {row['lookup_hit_rate_points']:+.2f} pt  "
                  f"worst kernel {row['worst_kernel']} {100*row['worst_kernel_time_err']:+.2f}%", flush=True)
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
