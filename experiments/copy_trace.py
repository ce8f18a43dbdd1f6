#!/usr/bin/env python3
"""Writes an iosim trace of a streaming copy (dst = src) to stdout: CTAs of one step each,
each reading CHUNK bytes of src and writing them to dst, in launch order.

The H200 anchor it reproduces (../shared/reference/hardware-and-anchors.md): a 268,435,456 B
copy measured 268 MB of DRAM reads and 242 MB of DRAM writes under Nsight Compute, the rest
still dirty in L2 at the kernel's end. Usage:
  experiments/copy_trace.py [BYTES] [CHUNK] [read] > copy.trace
  iosim replay copy.trace --profile h200-sxm-141gb --cold-l2 --json
`read`: the CTAs only read their chunk (experiments/probes/stream_size_probe.cu's read kernel).
The L2 write probe's schedules (experiments/probes/l2_write_probe.cu): `write` (zeros stored, nothing
read), `mix K` (every K-th CTA also writes its chunk), `l2read S` / `l2write S` (BYTES of reads or
writes cycling over the first S bytes: CTA c takes chunk c mod S / CHUNK).
"""
import sys

total = int(sys.argv[1]) if len(sys.argv) > 1 else 268435456
chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 32768
mode = sys.argv[3] if len(sys.argv) > 3 else "copy"
arg = int(sys.argv[4]) if len(sys.argv) > 4 else 0
if mode not in ("copy", "read", "write", "mix", "l2read", "l2write") or (mode in ("mix", "l2read", "l2write") and arg < 1):
    sys.exit(f"copy_trace.py: mode '{mode}' {'needs a positive ARG' if mode in ('mix', 'l2read', 'l2write') else 'unknown'}"
             " (modes: copy, read, write, mix K, l2read S, l2write S)")
region = arg if mode in ("l2read", "l2write") else total
ctas = total // chunk
src, dst = 0x40000000, 0x40000000 + ((region + (1 << 21) - 1) >> 21 << 21)
out = sys.stdout
out.write(f"iosim-trace 2\ntensor 0 src {src:x} {region}\ntensor 1 dst {dst:x} {region}\n")
out.write(f"kernel copy pass=fwd grid={ctas},1,1 threads=256 smem=0 regs=32 stages=2\n")
for c in range(ctas):
    off = (c % (region // chunk)) * chunk
    out.write(f"cta {c} 0 0\ns 0 0 0\n")
    if mode not in ("write", "l2write"):
        out.write(f"r 0 {src + off:x} {chunk}\n")
    if mode in ("copy", "write", "l2write") or (mode == "mix" and c % arg == 0):
        out.write(f"w 1 {dst + off:x} {chunk}\n")
out.write("end\n")
