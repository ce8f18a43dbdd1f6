"""Prints the README's tables from this folder's raw outputs: FA3 beside our
FA2 (bench-final.txt) and cuDNN through PyTorch SDPA (sdpa-cudnn.txt, the same
call), the variant ablation, and the largest errors of the GPU tests
(test-final.log).
    python3 summarize.py
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))  # experiments/
from fa3_results import cudnn_rows, harness_rows  # noqa: E402


def main():
    h, c = harness_rows(HERE / "bench-final.txt"), cudnn_rows(HERE / "sdpa-cudnn.txt")
    print("| dtype | d | causal | N | FA2 TFLOP/s | FA3 TFLOP/s | cuDNN TFLOP/s | FA3/FA2 | FA3/cuDNN |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, (fa2, fa3) in h.items():
        cud = c.get(key)
        cud_s = f"{cud:.0f}" if cud else "-"
        ratio = f"{fa3 / cud:.2f}x" if cud else "-"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {fa2:.0f} | {fa3:.0f} | {cud_s} "
              f"| {fa3 / fa2:.2f}x | {ratio} |")
    print()
    print("| d | causal | variant | TFLOP/s |")
    print("|---|---|---|---|")
    in_variants = False
    for line in (HERE / "bench-final.txt").read_text().splitlines():
        if line.startswith("fa3 variants"):
            in_variants = True
            continue
        f = line.split()
        if in_variants and len(f) == 5 and f[0] in ("64", "128"):
            print(f"| {f[0]} | {f[1]} | {f[2]} | {float(f[4]):.0f} |")
    print()
    worst = {}
    pattern = r"fa3 fwd (\w+) rel ([0-9.e+-]+) \(bound ([0-9.e+-]+)\)"
    for m in re.finditer(pattern, (HERE / "test-final.log").read_text()):
        key = (m.group(1), m.group(3))
        worst[key] = max(worst.get(key, 0.0), float(m.group(2)))
    for (tensor, bound), rel in sorted(worst.items()):
        print(f"- {tensor}: largest relative error {rel:.3g} (bound {float(bound):.3g})")


if __name__ == "__main__":
    main()
