#!/usr/bin/env python3
"""The L2 write probe's table (l2_write_run.sh's OUT): per config the measured time (Nsight Compute
gpu__time_duration, L2 flushed before each launch; the mean of the repeats), its DRAM and L2 bytes,
beside `iosim replay` of the same schedule (experiments/copy_trace.py, `--cold-l2`) under each PROFILE.
  experiments/probes/l2_write_table.py OUT [IOSIM] [PROFILE ...]
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from copy_replay import replay_seconds  # noqa: E402
from ncu_probe import launches  # noqa: E402

out = sys.argv[1]
iosim = sys.argv[2] if len(sys.argv) > 2 else "build/sim/iosim"
profiles = sys.argv[3:] or ["h200-sxm-141gb"]
meas, order = {}, []
for c, v in launches(out):
    k = c["kind"]
    if k not in meas:
        order.append(k)
        meas[k] = {"t": [], "c": c, "v": v}
    meas[k]["t"].append(v("gpu__time_duration.sum") * 1e-9)


def trace_args(kind):
    """copy_trace.py's arguments for a probe config (kind:a[:b], MiB)."""
    parts = kind.split(":")
    name, a = parts[0], int(parts[1]) << 20
    if name in ("read", "write", "copy"):
        return [str(a), "32768", name]
    b = int(parts[2])
    if name == "mix":
        return [str(a), "32768", "mix", str(b)]
    return [str(b << 20), "32768", name, str(a)]


def predicted(kind, profile):
    return replay_seconds(iosim, profile, trace_args(kind))


head = "| config | read MB | written MB | DRAM read MB | DRAM write MB | measured us |"
head += "".join(f" iosim us ({p}) | iosim / measured |" for p in profiles)
print(head)
print("|---|---:|---:|---:|---:|---:|" + "---:|---:|" * len(profiles))
for k in order:
    m = meas[k]
    t = statistics.mean(m["t"])
    v, c = m["v"], m["c"]
    row = (f"| {k} | {int(c['read_bytes']) / 1e6:.1f} | {int(c['write_bytes']) / 1e6:.1f} | "
           f"{v('dram__bytes_read.sum') / 1e6:.1f} | {v('dram__bytes_write.sum') / 1e6:.1f} | {t * 1e6:.2f} |")
    for p in profiles:
        pt = predicted(k, p)
        row += f" {pt * 1e6:.2f} | {pt / t:.3f} |"
    print(row)
