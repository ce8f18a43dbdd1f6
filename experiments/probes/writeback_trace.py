#!/usr/bin/env python3
"""Writes the iosim trace of one write-back probe launch (experiments/probes/writeback_probe.cu) to
stdout: one CTA per SM; CTA c writes its share of the written buffer in 4 KiB chunks `rounds`
times over, then reads its share of the read buffer in 4 KiB chunks `read_rounds` times over (the
probe's spins are not in the trace: they add time, not traffic). Usage:
  experiments/probes/writeback_trace.py MiB:rounds:gap:tail[:readMiB:readRounds] [SMS] > probe.trace
  iosim replay probe.trace --profile h200-sxm-141gb --cold-l2 --json
"""
import sys

CHUNK = 4096


def main():
    parts = [int(x) for x in sys.argv[1].split(":")]
    mib, rounds = parts[0], parts[1]
    read_mib, read_rounds = (parts[4], parts[5]) if len(parts) == 6 else (0, 0)
    sms = int(sys.argv[2]) if len(sys.argv) > 2 else 132
    chunks = (mib << 20) // sms // CHUNK
    read_chunks = (read_mib << 20) // sms // CHUNK
    dst = 0x40000000
    src = dst + (((chunks * CHUNK * sms) >> 21) + 1 << 21)
    out = sys.stdout
    out.write("iosim-trace 2\n")
    out.write(f"tensor 0 dst {dst:x} {chunks * CHUNK * sms}\n")
    if read_chunks:
        out.write(f"tensor 1 src {src:x} {read_chunks * CHUNK * sms}\n")
    out.write(f"kernel slow_write pass=fwd grid={sms},1,1 threads=256 smem=0 regs=32 stages=1\n")
    for c in range(sms):
        out.write(f"cta {c} 0 0\n")
        step = 0
        for _ in range(rounds):
            for k in range(chunks):
                out.write(f"s {step} 0 0\nw 0 {dst + (c * chunks + k) * CHUNK:x} {CHUNK}\n")
                step += 1
        for _ in range(read_rounds):
            for k in range(read_chunks):
                out.write(f"s {step} 0 0\nr 1 {src + (c * read_chunks + k) * CHUNK:x} {CHUNK}\n")
                step += 1
    out.write("end\n")


main()
