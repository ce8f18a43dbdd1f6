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


def targets_table(folder: Path):
    """Issue 11's table from a folder's bench.txt (iosim-fa3-bench) and sdpa-cudnn.txt (sdpa_bench.py,
    the same call): FA3 beside our FA2 and cuDNN per row, and the d = 128, N >= 4k targets (FA3 >=
    1.4x our FA2 and >= 0.9x cuDNN)."""
    h, c = harness_rows(Path(folder) / "bench.txt"), cudnn_rows(Path(folder) / "sdpa-cudnn.txt")
    out = ["| dtype | d | causal | N | FA2 TFLOP/s | FA3 TFLOP/s | cuDNN TFLOP/s | FA3/FA2 | FA3/cuDNN | targets (d=128) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    met = total = 0
    for key, (fa2, fa3) in h.items():
        cud = c[key]
        target = "-"
        if key[1] == 128 and key[3] >= 4096:
            ok = fa3 / fa2 >= 1.4 and fa3 / cud >= 0.9
            met, total = met + ok, total + 1
            target = "met" if ok else "missed"
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {fa2:.0f} | {fa3:.0f} | {cud:.0f} "
                   f"| {fa3 / fa2:.2f}x | {fa3 / cud:.2f}x | {target} |")
    out += ["", f"d = 128 rows meeting both targets: {met} of {total}"]
    return "\n".join(out)


if __name__ == "__main__":
    # python3 experiments/fa3_results.py FOLDER: the folder's targets table.
    import sys
    print(targets_table(Path(sys.argv[1])))
