#!/usr/bin/env python3
"""Write the validation grid, experiments/validation/grid.txt (deterministic; issue 9 items 5-6).

Usage: experiments/validation/make_grid.py [--out FILE] [--check]
  --check: exit 1 unless FILE (default grid.txt) equals what this script writes.

One list for every GPU (H200 and H100). Each line:
  SET;NAME;KERNEL-REGEX;LAUNCHES;flags shared by `iosim simulate` and `iosim-kernels bench`
SET is `calibration` (anything fitted is fitted on these only) or `heldout` (judged only).
KERNEL-REGEX and LAUNCHES are as in experiments/calibrate_configs.txt: ncu profiles LAUNCHES
(COUNT or COUNT@SKIP) launches matching the regex; under ncu the bench runs with
`--l2-multiple 0.001` (2 buffer sets), so standard attention's backward first runs 2 forward
passes whose 4 GEMMs it skips.

The split (checked by check_split.py): per algorithm and head dim, the calibration and held-out
lines use disjoint (N_q, N_k) pairs, so no held-out line shares (algorithm, d, tile, FLOPs per
head) -- or even (algorithm, d, N_q, N_k) -- with a calibration line. Calibration N: 512, 1024,
3000, 4096, 8192, 15000 (and N_q=1024 with N_k=4096 or 8192); held-out N: 1000, 2048, 5000, 12288, 16384
(and N_q=1000 with N_k=2048, 3000 or 5000). Both sets cover every kernel, d 64 and 128, ragged N,
small and large B*H, causal, block-sparse (density 0.5, mask seed 1) and GQA, with 3 or more
tiles per algorithm. FA1 runs one CTA per head through a serial chain of N/Bc x N/Br steps:
N <= 4096 and B*H >= 128 (so its few long CTAs fill the GPU).
"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))

REGEX = {
    ("fa2", "fwd"): ("fa2_forward_kernel", "1"),
    ("fa2", "bwd"): ("fa2_bwd_preprocess|fa2_backward|fa2_bwd_convert", "3"),
    ("fa1", "fwd"): ("fa1_forward_kernel", "1"),
    ("fa1", "bwd"): ("fa1_backward_kernel", "1"),
    ("standard", "fwd"): ("gemm_kernel|softmax_forward", "3"),
    ("standard", "bwd"): ("gemm_kernel|softmax_backward", "5@4"),
}
SHORT = {"fa2": "fa2", "fa1": "fa1", "standard": "std"}

C, H = "calibration", "heldout"
# (set, algo, pass, d, seq (N or (Nq, Nk)), batch, heads, kv_heads or None, causal, density or None, tile)
# tile: "BRxBC" for FA1/FA2 (--block-m/--block-n), "TMxTN" or "TMxTNxTK" for standard (--gemm-*).
GRID = [
    # ---------------- FA2 forward
    (C, "fa2", "fwd", 64, 1024, 16, 16, None, False, None, "128x128"),
    (C, "fa2", "fwd", 64, 4096, 1, 32, None, True, None, "64x64"),
    (C, "fa2", "fwd", 64, 3000, 4, 8, None, False, None, "128x64"),
    (C, "fa2", "fwd", 64, 8192, 2, 8, None, False, 0.5, "128x128"),
    (C, "fa2", "fwd", 64, 8192, 1, 16, None, False, None, "256x64"),
    (C, "fa2", "fwd", 128, 512, 32, 16, None, False, None, "128x64"),
    (C, "fa2", "fwd", 128, 4096, 2, 16, 4, False, None, "128x64"),
    (C, "fa2", "fwd", 128, 15000, 1, 8, None, True, None, "128x128"),
    (C, "fa2", "fwd", 128, (1024, 8192), 4, 16, None, True, None, "64x128"),
    (H, "fa2", "fwd", 64, 2048, 8, 16, None, False, None, "128x128"),
    (H, "fa2", "fwd", 64, 5000, 2, 16, None, True, None, "64x128"),
    (H, "fa2", "fwd", 64, 12288, 1, 16, None, False, 0.5, "128x64"),
    (H, "fa2", "fwd", 64, 1000, 32, 8, 2, False, None, "64x64"),
    (H, "fa2", "fwd", 128, 16384, 1, 16, None, True, None, "128x64"),
    (H, "fa2", "fwd", 128, 2048, 4, 32, None, False, None, "256x128"),
    (H, "fa2", "fwd", 128, 5000, 2, 16, None, False, 0.5, "64x64"),
    (H, "fa2", "fwd", 128, (1000, 5000), 4, 16, None, True, None, "128x128"),
    # ---------------- FA2 backward: preprocess, main, convert dQ
    (C, "fa2", "bwd", 64, 1024, 16, 12, None, False, None, "64x64"),
    (C, "fa2", "bwd", 64, 4096, 2, 16, None, True, None, "128x128"),
    (C, "fa2", "bwd", 64, 3000, 4, 8, 2, False, None, "64x128"),
    (C, "fa2", "bwd", 64, 8192, 1, 8, None, False, 0.5, "64x256"),
    (C, "fa2", "bwd", 128, 8192, 1, 16, None, False, None, "64x128"),
    (C, "fa2", "bwd", 128, 4096, 2, 8, None, False, 0.5, "128x64"),
    (C, "fa2", "bwd", 128, 1024, 8, 16, None, True, None, "128x128"),
    (C, "fa2", "bwd", 128, (1024, 8192), 2, 16, None, True, None, "64x64"),
    (H, "fa2", "bwd", 64, 2048, 8, 16, None, False, None, "128x128"),
    (H, "fa2", "bwd", 64, 5000, 2, 16, None, True, None, "64x64"),
    (H, "fa2", "bwd", 64, 12288, 1, 8, None, False, 0.5, "128x64"),
    (H, "fa2", "bwd", 64, (1000, 5000), 4, 8, None, True, None, "64x128"),
    (H, "fa2", "bwd", 128, 2048, 4, 16, 4, False, None, "64x128"),
    (H, "fa2", "bwd", 128, 16384, 1, 8, None, True, None, "64x128"),
    (H, "fa2", "bwd", 128, 1000, 16, 16, None, False, None, "128x64"),
    # ---------------- FA1 forward (one CTA per head)
    (C, "fa1", "fwd", 64, 1024, 8, 16, None, False, None, "64x64"),
    (C, "fa1", "fwd", 64, 3000, 4, 32, None, True, None, "32x64"),
    (C, "fa1", "fwd", 64, 4096, 1, 128, 16, False, None, "128x128"),
    (C, "fa1", "fwd", 128, 512, 16, 16, None, False, None, "128x64"),
    (C, "fa1", "fwd", 128, 4096, 2, 64, None, False, 0.5, "64x128"),
    (C, "fa1", "fwd", 128, (1024, 4096), 8, 16, None, True, None, "64x64"),
    (H, "fa1", "fwd", 64, 2048, 8, 16, None, False, None, "64x64"),
    (H, "fa1", "fwd", 64, 1000, 16, 16, None, True, None, "128x32"),
    (H, "fa1", "fwd", 64, 2048, 2, 64, None, False, 0.5, "128x64"),
    (H, "fa1", "fwd", 128, 2048, 4, 32, 8, False, None, "32x128"),
    (H, "fa1", "fwd", 128, (1000, 3000), 4, 32, None, True, None, "64x64"),
    # ---------------- FA1 backward (one CTA per head; d=128 has no Br=128 with Bc >= 64)
    (C, "fa1", "bwd", 64, 1024, 8, 16, None, False, None, "64x64"),
    (C, "fa1", "bwd", 64, 3000, 4, 32, None, True, None, "128x128"),
    (C, "fa1", "bwd", 128, 512, 16, 16, None, False, None, "64x128"),
    (C, "fa1", "bwd", 128, 4096, 2, 64, None, False, 0.5, "32x64"),
    (C, "fa1", "bwd", 64, 4096, 1, 128, 16, False, None, "128x64"),
    (C, "fa1", "bwd", 64, (1024, 4096), 8, 16, None, True, None, "64x128"),
    (H, "fa1", "bwd", 64, 2048, 8, 16, None, False, None, "64x64"),
    (H, "fa1", "bwd", 64, 1000, 16, 16, None, True, None, "32x128"),
    (H, "fa1", "bwd", 128, 2048, 4, 32, 8, False, None, "64x32"),
    (H, "fa1", "bwd", 128, (1000, 3000), 4, 32, None, True, None, "128x32"),
    (H, "fa1", "bwd", 64, 2048, 2, 64, None, False, 0.5, "128x64"),
    # ---------------- Standard forward: QK^T GEMM, row softmax, PV GEMM
    (C, "standard", "fwd", 64, 1024, 8, 12, None, False, None, "128x128"),
    (C, "standard", "fwd", 128, 4096, 2, 8, None, True, None, "64x64"),
    (C, "standard", "fwd", 64, 3000, 4, 8, 2, False, None, "128x64"),
    (C, "standard", "fwd", 128, 512, 16, 16, None, False, 0.5, "64x128"),
    (C, "standard", "fwd", 64, 8192, 1, 8, None, False, None, "128x128x64"),
    (C, "standard", "fwd", 128, (1024, 8192), 4, 8, None, True, None, "128x64"),
    (H, "standard", "fwd", 64, 2048, 4, 16, None, False, None, "128x128"),
    (H, "standard", "fwd", 128, 1000, 16, 8, None, True, None, "64x64"),
    (H, "standard", "fwd", 64, 5000, 1, 16, None, False, 0.5, "128x64"),
    (H, "standard", "fwd", 128, 2048, 2, 16, 4, False, None, "128x128x64"),
    (H, "standard", "fwd", 64, (1000, 5000), 4, 8, None, True, None, "64x128"),
    # ---------------- Standard backward: dV, dP GEMMs, softmax backward, dQ, dK GEMMs
    (C, "standard", "bwd", 64, 1024, 8, 16, None, False, None, "128x128"),
    (C, "standard", "bwd", 128, 3000, 2, 8, None, True, None, "64x64"),
    (C, "standard", "bwd", 64, 4096, 1, 16, None, False, 0.5, "128x64"),
    (C, "standard", "bwd", 128, 512, 16, 16, 4, False, None, "64x128"),
    (C, "standard", "bwd", 64, (1024, 8192), 2, 8, None, True, None, "128x128x64"),
    (H, "standard", "bwd", 64, 2048, 4, 16, None, False, None, "128x128"),
    (H, "standard", "bwd", 128, 1000, 8, 16, None, True, None, "64x64"),
    (H, "standard", "bwd", 64, 5000, 1, 8, 2, False, None, "128x128x64"),
    (H, "standard", "bwd", 128, (1000, 2048), 4, 8, None, False, 0.5, "128x64"),
]


def seq_label(seq):
    if isinstance(seq, tuple):
        return f"n{seq[0]}x{seq[1]}"
    return f"n{seq}"


def line(entry):
    st, algo, pas, d, seq, b, h, kv, causal, dens, tile = entry
    name = f"{SHORT[algo]}-{pas}-d{d}-{seq_label(seq)}-bh{b * h}"
    if kv:
        name += f"-kv{kv}"
    if causal:
        name += "-c"
    if dens:
        name += f"-s{int(round(dens * 100))}"
    name += f"-{tile}"
    flags = [f"--algo {algo}", f"--pass {pas}", f"--batch {b}", f"--heads {h}"]
    if kv:
        flags.append(f"--kv-heads {kv}")
    if isinstance(seq, tuple):
        flags.append(f"--seq-q {seq[0]} --seq-k {seq[1]}")
    else:
        flags.append(f"--seq {seq}")
    flags.append(f"--head-dim {d}")
    parts = [int(x) for x in tile.split("x")]
    if algo == "standard":
        flags.append(f"--gemm-m {parts[0]} --gemm-n {parts[1]}")
        if len(parts) == 3:
            flags.append(f"--gemm-k {parts[2]}")
    else:
        flags.append(f"--block-m {parts[0]} --block-n {parts[1]}")
    if causal:
        flags.append("--causal")
    if dens:
        flags.append(f"--block-density {dens:g} --mask-seed 1")
    regex, launches = REGEX[(algo, pas)]
    return f"{st};{name};{regex};{launches};{' '.join(flags)}"


HEADER = """\
# The validation grid (issue 9 items 5-6), written by experiments/validation/make_grid.py: do not
# edit by hand. The same list for every GPU. Format, one configuration per line:
#   SET;NAME;KERNEL-REGEX;LAUNCHES;flags shared by `iosim simulate` and `iosim-kernels bench`
# SET: calibration (fits may use these) | heldout (never fitted on; no held-out line shares
# (algorithm, d, tile, FLOPs per head), nor (algorithm, d, N_q, N_k), with a calibration line:
# experiments/validation/check_split.py). KERNEL-REGEX;LAUNCHES: as in
# experiments/calibrate_configs.txt. Measured by experiments/validation/run_grid.sh.
"""


def render():
    return HEADER + "".join(line(e) + "\n" for e in GRID)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "grid.txt"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text = render()
    if a.check:
        ok = os.path.exists(a.out) and open(a.out).read() == text
        print(f"{a.out}: {'matches' if ok else 'DIFFERS from'} make_grid.py")
        sys.exit(0 if ok else 1)
    with open(a.out, "w") as f:
        f.write(text)
    print(f"wrote {a.out}: {len(GRID)} configurations")


if __name__ == "__main__":
    main()
