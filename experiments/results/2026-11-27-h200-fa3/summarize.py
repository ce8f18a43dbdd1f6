"""Prints the README's table from this folder's raw outputs: FA3 beside our FA2
(bench.txt: iosim-fa3-bench 20) and cuDNN through PyTorch SDPA (sdpa-cudnn.txt:
sdpa_bench.py 20, the same device call), with issue 11's targets per row
(d = 128, N >= 4k: FA3 >= 1.4x FA2 and >= 0.9x cuDNN).
    python3 summarize.py
"""
from pathlib import Path

HERE = Path(__file__).parent


def harness_rows():
    rows = {}
    for line in (HERE / "bench.txt").read_text().splitlines():
        f = line.split()
        if len(f) >= 11 and f[0] in ("fp16", "bf16") and f[10].endswith("x"):
            rows[(f[0], int(f[1]), f[2], int(f[3]))] = (float(f[7]), float(f[9]))  # fa2, fa3 TFLOP/s
    return rows


def cudnn_rows():
    names = {"float16": "fp16", "bfloat16": "bf16"}
    rows = {}
    for line in (HERE / "sdpa-cudnn.txt").read_text().splitlines():
        f = line.split()
        if len(f) == 7 and f[0] in names and f[4] == "cudnn":
            rows[(names[f[0]], int(f[1]), f[2], int(f[3]))] = float(f[6])
    return rows


def main():
    h, c = harness_rows(), cudnn_rows()
    print("| dtype | d | causal | N | FA2 TFLOP/s | FA3 TFLOP/s | cuDNN TFLOP/s | FA3/FA2 | FA3/cuDNN | targets (d=128) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    met = total = 0
    for key, (fa2, fa3) in h.items():
        cud = c[key]
        target = "-"
        if key[1] == 128 and key[3] >= 4096:
            ok = fa3 / fa2 >= 1.4 and fa3 / cud >= 0.9
            met, total = met + ok, total + 1
            target = "met" if ok else "missed"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {fa2:.0f} | {fa3:.0f} | {cud:.0f} "
              f"| {fa3 / fa2:.2f}x | {fa3 / cud:.2f}x | {target} |")
    print()
    print(f"d = 128 rows meeting both targets: {met} of {total}")


if __name__ == "__main__":
    main()
