#!/usr/bin/env python3
"""test_gpu_trace_bytes's comparison, done again here on the measured bytes its log printed (RESULT
lines of test_gpu_trace_bytes.log, the device call of 2026-12-02), against the quantity the test now
uses: `iosim simulate ... --json --cold-l2`'s L2 sector bytes (read; write + reduce), which hold the
trace's requests in whole sectors and the warps' spills (build_csv.py's sim_read_bytes /
sim_write_bytes), plus the TMA boxes' zero fill on the read side (requests.zero_fill_read_bytes). The log's
own ratios are against the trace's request bytes (the test before).
    trace_bytes_offline.py [IOSIM]"""
import json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
iosim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/sim/iosim")
src = open(os.path.join(ROOT, "tests/gpu/test_gpu_trace_bytes.cpp")).read()
flags = dict(re.findall(r'expect_trace_bytes\(\{"([^"]+)",\s*(?:\w+|"[^"]*"),\s*\d+,\s*((?:"[^"]*"\s*)+)', src))
flags = {k: "".join(re.findall(r'"([^"]*)"', v)) for k, v in flags.items()}
meas = {}
for line in open(os.path.join(HERE, "test_gpu_trace_bytes.log")):
    m = re.search(r"RESULT (\S+) kernel (\d+) (\S+) .*read: measured (\d+) B.*write: measured (\d+) B", line)
    if m:
        meas.setdefault(m.group(1), []).append((m.group(3), int(m.group(4)), int(m.group(5))))
print("| configuration | kernel | read meas/model | write meas/model |")
print("|---|---|---|---|")
worst = 0.0
for name, rows in meas.items():
    j = json.loads(subprocess.run([iosim, "simulate", "--profile", "h200", *flags[name].split(), "--json", "--cold-l2"],
                                  check=True, capture_output=True, text=True).stdout)
    for (kname, rd, wr), k in zip(rows, j["kernels"]):
        bk = k["l2"]["by_kind"]
        r = rd / (bk["read"]["sector_bytes"] + k["requests"].get("zero_fill_read_bytes", 0))
        w = wr / (bk["write"]["sector_bytes"] + bk["reduce"]["sector_bytes"])
        worst = max(worst, abs(r - 1), abs(w - 1))
        print(f"| {name} | {kname} | {r:.5f} | {w:.5f} |")
print(f"\nlargest |ratio - 1|: {worst:.5f}")
