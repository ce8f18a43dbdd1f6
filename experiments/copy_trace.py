#!/usr/bin/env python3
"""Writes an iosim trace of a streaming copy (dst = src) to stdout: CTAs of one step each,
each reading CHUNK bytes of src and writing them to dst, in launch order.

The H200 anchor it reproduces (../shared/reference/hardware-and-anchors.md): a 268,435,456 B
copy measured 268 MB of DRAM reads and 242 MB of DRAM writes under Nsight Compute, the rest
still dirty in L2 at the kernel's end. Usage:
  experiments/copy_trace.py [BYTES] [CHUNK] [read] > copy.trace
  iosim replay copy.trace --profile h200-sxm-141gb --cold-l2 --json
`read`: the CTAs only read their chunk (experiments/probes/stream_size_probe.cu's read kernel).
"""
import sys

total = int(sys.argv[1]) if len(sys.argv) > 1 else 268435456
chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 32768
read_only = len(sys.argv) > 3 and sys.argv[3] == "read"
ctas = total // chunk
src, dst = 0x40000000, 0x40000000 + ((total + (1 << 21) - 1) >> 21 << 21)
out = sys.stdout
out.write(f"iosim-trace 2\ntensor 0 src {src:x} {total}\ntensor 1 dst {dst:x} {total}\n")
out.write(f"kernel copy pass=fwd grid={ctas},1,1 threads=256 smem=0 regs=32 stages=2\n")
for c in range(ctas):
    out.write(f"cta {c} 0 0\ns 0 0 0\nr 0 {src + c * chunk:x} {chunk}\n")
    if not read_only:
        out.write(f"w 1 {dst + c * chunk:x} {chunk}\n")
out.write("end\n")
