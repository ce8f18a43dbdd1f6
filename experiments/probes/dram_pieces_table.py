#!/usr/bin/env python3
"""The DRAM pieces probe's table (experiments/probes/dram_pieces_probe.cu): per operation, piece size and
stride, the measured GB/s and its fraction of the same operation's stream; then the profile keys
`dram.read_fraction_{32,64,128,256}B` (reads, the widest stride measured: pieces far apart).
Usage: experiments/probes/dram_pieces_table.py pieces.csv"""
import csv, sys


def main():
    rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
    stream = {r["op"]: float(r["gb_per_s"]) for r in rows if r["piece_bytes"] == "stream"}
    print("| op | piece | stride | GB/s | / stream |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r["piece_bytes"] == "stream":
            continue
        print(f"| {r['op']} | {r['piece_bytes']} B | {r['stride_bytes']} B | {float(r['gb_per_s']):.0f} | "
              f"{float(r['gb_per_s']) / stream[r['op']]:.3f} |")
    for op in ("read", "write"):
        print(f"| {op} | stream | - | {stream[op]:.0f} | 1 |")
    wide = max(int(r["stride_bytes"]) for r in rows if r["piece_bytes"] != "stream")
    print()
    for piece in (32, 64, 128, 256):
        r = next(r for r in rows if r["op"] == "read" and r["piece_bytes"] == str(piece) and int(r["stride_bytes"]) == wide)
        print(f"dram.read_fraction_{piece}B: {float(r['gb_per_s']) / stream['read']:.3f}"
              f"  ({float(r['gb_per_s']):.0f} / {stream['read']:.0f} GB/s, stride {wide} B)")


if __name__ == "__main__":
    main()
