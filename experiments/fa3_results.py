"""Readers of the FA3 benchmark's raw outputs, shared by the result folders' summarize.py
(experiments/results/*-fa3/): our FA2 and FA3 from iosim-fa3-bench, cuDNN through PyTorch SDPA.
Both key their rows by (dtype, d, causal, N).
"""
from pathlib import Path


def harness_rows(path: Path):
    """FA2 and FA3 TFLOP/s per row of iosim-fa3-bench's table."""
    rows = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if len(f) >= 11 and f[0] in ("fp16", "bf16") and f[10].endswith("x"):
            rows[(f[0], int(f[1]), f[2], int(f[3]))] = (float(f[7]), float(f[9]))
    return rows


def cudnn_rows(path: Path):
    """cuDNN's TFLOP/s per row of sdpa_bench.py's output."""
    names = {"float16": "fp16", "bfloat16": "bf16"}
    rows = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if len(f) == 7 and f[0] in names and f[4] == "cudnn":
            rows[(names[f[0]], int(f[1]), f[2], int(f[3]))] = float(f[6])
    return rows
