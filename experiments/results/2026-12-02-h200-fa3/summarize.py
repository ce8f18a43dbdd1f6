"""Prints the README's table from this folder's raw outputs: FA3 beside our FA2
(bench.txt: iosim-fa3-bench 20) and cuDNN through PyTorch SDPA (sdpa-cudnn.txt:
sdpa_bench.py 20, the same device call), with issue 11's targets per row
(d = 128, N >= 4k: FA3 >= 1.4x FA2 and >= 0.9x cuDNN).
    python3 summarize.py
"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))  # experiments/
from fa3_results import cudnn_rows, harness_rows  # noqa: E402


def main():
    h, c = harness_rows(HERE / "bench.txt"), cudnn_rows(HERE / "sdpa-cudnn.txt")
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
