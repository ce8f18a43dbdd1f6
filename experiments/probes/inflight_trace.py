#!/usr/bin/env python3
"""Writes the iosim trace of the in-flight probe (experiments/probes/inflight_probe.cu) to stdout: CTAS
CTAs (1: `one`, the SM count: `all`), each streaming its own region of fresh data (PASSES > 1: reading
it PASSES times over, as `one_l2` does) in steps of K x THREADS x 16 bytes, one step's loads in flight at a time (stages=1, as the probe's iterations,
whose next addresses depend on this one's data). The probe's arithmetic is not in the trace.
Usage:
  experiments/probes/inflight_trace.py CTAS THREADS K [MiB per CTA, default 4 [PASSES, default 1]] > probe.trace
  iosim replay probe.trace --profile h200-sxm-141gb --cold-l2 --json
"""
import sys


def main():
    ctas, threads, k = (int(x) for x in sys.argv[1:4])
    mib = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    passes = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    step_bytes = k * threads * 16
    steps = (mib << 20) // step_bytes
    region = steps * step_bytes
    base = 0x40000000
    out = sys.stdout
    out.write("iosim-trace 2\n")
    out.write(f"tensor 0 src {base:x} {region * ctas}\n")
    out.write(f"kernel stream_loads pass=fwd grid={ctas},1,1 threads={threads} smem=0 regs=32 stages=1\n")
    for c in range(ctas):
        out.write(f"cta {c} 0 0\n")
        for p in range(passes):
            for s in range(steps):
                out.write(f"s {p * steps + s} 0 0\nr 0 {base + c * region + s * step_bytes:x} {step_bytes}\n")
    out.write("end\n")


main()
