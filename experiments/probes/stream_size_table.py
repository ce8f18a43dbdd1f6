#!/usr/bin/env python3
"""The stream-size probe's table (stream_size_run.sh's OUT): per kind (read, copy) and size, the measured
time (Nsight Compute gpu__time_duration, the L2 flushed before each launch; the mean of the repeats)
beside `iosim replay` of the same schedule (experiments/copy_trace.py, `--cold-l2`), and the
difference. A constant difference is a fixed cost the model lacks; one growing with the bytes, a rate.
  experiments/probes/stream_size_table.py OUT [IOSIM] [PROFILE]
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
profile = sys.argv[3] if len(sys.argv) > 3 else "h200-sxm-141gb"
meas = {}
for c, v in launches(out):
    meas.setdefault((c["kind"], int(c["bytes"])), []).append(v("gpu__time_duration.sum") * 1e-9)


def predicted(kind, size):
    return replay_seconds(iosim, profile, [str(size), "32768"] + (["read"] if kind == "read" else []))


print(f"| kind | MiB | measured us | iosim us ({profile}) | iosim / measured | measured - iosim, us |")
print("|---|---:|---:|---:|---:|---:|")
for (kind, size) in sorted(meas, key=lambda k: (k[0] != "read", k[1])):
    m = statistics.mean(meas[(kind, size)])
    p = predicted(kind, size)
    print(f"| {kind} | {size >> 20} | {m * 1e6:.2f} | {p * 1e6:.2f} | {p / m:.3f} | {(m - p) * 1e6:.2f} |")
