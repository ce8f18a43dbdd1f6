#!/usr/bin/env python3
"""Draws fig2.png from results.csv and prints README.md's tables (markdown) from it.

Usage: python3 experiments/fa_paper_fig2/plot.py [--check README.md] [--no-plot]
--check FILE: exit 1 unless FILE's block between `<!-- fig2:begin -->` and `<!-- fig2:end -->`
equals what this prints (a ctest test keeps README.md and results.csv in step); draws nothing.
Drawing needs python3-matplotlib.
"""
import argparse
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import docgen  # noqa: E402

# The paper's Figure 2 left (Dao et al., FlashAttention, 2022; /work/shared/seeds/fa1-slides.txt):
# GPT-2 medium attention (B=64 H=16 N=1024 d=64), forward + backward, A100.
PAPER_LEFT = {"standard": {"GFLOP": 66.6, "HBM GB": 40.3, "ms": 41.7},
              "fa1": {"GFLOP": 75.2, "HBM GB": 4.4, "ms": 7.3}}
# iosim's algorithm beside each of the paper's: its baseline is eager PyTorch attention.
COMPARED = {"standard": "standard-eager", "fa1": "fa1"}
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def rows(panel):
    with open(os.path.join(HERE, "results.csv"), newline="") as f:
        return [r for r in csv.DictReader(f) if r["panel"] == panel]


def gb(r, *keys):
    return sum(float(r[k]) for k in keys) / 1e9


def dram_gb(r):
    return gb(r, "dram.read_bytes", "dram.write_bytes")


def ms(r):
    return float(r["time.seconds"]) * 1e3


def matrix_gb(r):
    """One N_q x N_k matrix of the data type for all heads: what an eager elementwise pass reads or writes."""
    return (ELEM_BYTES[r["problem.dtype"]] * int(r["problem.batch"]) * int(r["problem.heads"])
            * int(r["problem.seq_q"]) * int(r["problem.seq_k"]) / 1e9)


def left_lines(left):
    out = ["**Left**: GPT-2 medium attention, causal, forward + backward, profile a100-sxm4-40gb "
           f"({left[0]['profile.provenance']}).", "",
           "| | paper standard | iosim standard-eager | iosim standard (no elementwise kernels) "
           "| paper FlashAttention | iosim fa1 |",
           "|---|---:|---:|---:|---:|---:|"]
    by = {r["algorithm"]: r for r in left}
    lines = [("GFLOP", lambda r: float(r["flops"]) / 1e9, "GFLOP"),
             ("HBM R/W GB (iosim: DRAM read + write)", dram_gb, "HBM GB"),
             ("SRAM<->global GB (iosim's trace count)", lambda r: gb(r, "global.total_bytes"), None),
             ("runtime ms", ms, "ms")]
    for label, value, paper_key in lines:
        cells = []
        for algo in ("standard", "fa1"):
            cells.append(f"{PAPER_LEFT[algo][paper_key]:.1f}" if paper_key else "-")
            cells.append(f"{value(by[COMPARED[algo]]):.1f}")
            if algo == "standard":
                cells.append(f"{value(by['standard']):.1f}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    s, plain, f = by["standard-eager"], by["standard"], by["fa1"]
    n2 = matrix_gb(s)
    out += ["",
            f"- One fp16 N x N matrix for all heads is {n2:.2f} GB. The paper's standard-attention HBM traffic is "
            f"{PAPER_LEFT['standard']['HBM GB'] / n2:.1f} such matrices; iosim's DRAM traffic is "
            f"{dram_gb(s) / n2:.1f} for standard-eager and {dram_gb(plain) / n2:.1f} for standard.",
            f"- Average DRAM rate: the paper's standard attention {PAPER_LEFT['standard']['HBM GB'] / PAPER_LEFT['standard']['ms']:.2f} "
            f"TB/s, iosim's standard-eager {dram_gb(s) / ms(s):.2f} TB/s; FlashAttention: paper "
            f"{PAPER_LEFT['fa1']['HBM GB'] / PAPER_LEFT['fa1']['ms']:.2f} TB/s, iosim {dram_gb(f) / ms(f):.2f} TB/s.",
            f"- iosim GFLOP / paper GFLOP: standard {float(s['flops']) / 1e9 / PAPER_LEFT['standard']['GFLOP']:.1f}, "
            f"FlashAttention {float(f['flops']) / 1e9 / PAPER_LEFT['fa1']['GFLOP']:.1f}.",
            f"- FLOP ratio FlashAttention / standard: paper {PAPER_LEFT['fa1']['GFLOP'] / PAPER_LEFT['standard']['GFLOP']:.2f}, "
            f"iosim {float(f['flops']) / float(s['flops']):.2f} (fa1 skips the tiles above the causal diagonal).",
            f"- HBM ratio standard / FlashAttention: paper {PAPER_LEFT['standard']['HBM GB'] / PAPER_LEFT['fa1']['HBM GB']:.1f}x, "
            f"iosim {dram_gb(s) / dram_gb(f):.1f}x; runtime ratio: paper "
            f"{PAPER_LEFT['standard']['ms'] / PAPER_LEFT['fa1']['ms']:.1f}x, iosim {ms(s) / ms(f):.1f}x.",
            f"- fa1's tiles: B_r = {f['tiling.block_m']}, B_c = {f['tiling.block_n']} ({f['tiling.rule']}), "
            f"{f['occupancy.ctas_per_sm']} CTA per SM; the longest kernel is bound by {f['bound']} "
            f"(standard-eager: {s['bound']})."]
    return out


def series_lines(title, rows_, key, label, extra=None):
    out = ["", title, "",
           f"| {label} | shared memory per CTA (B) | CTAs per SM | SRAM<->global GB | DRAM GB | L2 hit rate "
           f"| runtime ms | {extra[0] if extra else 'bound'} |",
           "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows_:
        last = extra[1](r) if extra else r["bound"]
        out.append(f"| {r[key]} | {r['tiling.sram_bytes']} | {r['occupancy.ctas_per_sm']} | "
                   f"{gb(r, 'global.total_bytes'):.2f} | {dram_gb(r):.2f} | {float(r['l2.hit_rate']):.1%} | "
                   f"{ms(r):.2f} | {last} |")
    return out


def render():
    left, middle, right = rows("left"), rows("middle"), rows("right")
    out = [f"<!-- printed by experiments/fa_paper_fig2/plot.py from results.csv; do not edit by hand -->", ""]
    out += left_lines(left)
    out += series_lines("**Middle**: FlashAttention (fa1) forward, GPT-2 medium shape, not causal, B_r = 64 "
                        "(the paper plots this panel without printing its values).", middle, "tiling.block_n", "B_c")
    dense = ms(right[0])
    r0 = right[0]
    out += series_lines(f"**Right**: block-sparse FlashAttention (fa1) forward + backward, B={r0['problem.batch']} "
                        f"H={r0['problem.heads']} N={r0['problem.seq_q']}, B_r x B_c = {r0['tiling.block_m']} x "
                        f"{r0['tiling.block_n']}, a random block mask (density as drawn).", right,
                        "problem.block_density", "block density",
                        ("runtime / dense runtime", lambda r: f"{ms(r) / dense:.3f}"))
    return "\n".join(out) + "\n"


def draw():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    left, middle, right = rows("left"), rows("middle"), rows("right")
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.4))
    names = ["standard", "fa1"]
    by = {r["algorithm"]: r for r in left}
    x = range(len(names))
    ax[0].bar([i - 0.2 for i in x], [PAPER_LEFT[n]["ms"] for n in names], 0.4, label="paper (A100)")
    ax[0].bar([i + 0.2 for i in x], [ms(by[COMPARED[n]]) for n in names], 0.4, label="iosim (a100-sxm4-40gb)")
    for i, n in enumerate(names):
        ax[0].annotate(f"{PAPER_LEFT[n]['HBM GB']:.1f} GB", (i - 0.2, PAPER_LEFT[n]["ms"]), ha="center", va="bottom")
        ax[0].annotate(f"{dram_gb(by[COMPARED[n]]):.1f} GB", (i + 0.2, ms(by[COMPARED[n]])), ha="center", va="bottom")
    ax[0].set_xticks(list(x), ["standard\n(iosim: standard-eager)", "FlashAttention\n(iosim: fa1)"])
    ax[0].set_ylabel("forward + backward runtime (ms); labels: HBM GB")
    ax[0].set_title("GPT-2 medium attention, causal")
    ax[0].legend()

    bc = [int(r["tiling.block_n"]) for r in middle]
    ax[1].plot(bc, [ms(r) for r in middle], "o-", color="C0", label="runtime (ms)")
    ax[1].set_xscale("log", base=2)
    ax[1].set_xticks(bc, [str(b) for b in bc])
    ax[1].set_xlabel("block size B_c (B_r = 64)")
    ax[1].set_ylabel("forward runtime (ms)", color="C0")
    twin = ax[1].twinx()
    twin.plot(bc, [gb(r, "global.total_bytes") for r in middle], "s--", color="C1", label="SRAM<->global GB")
    twin.plot(bc, [dram_gb(r) for r in middle], "^:", color="C2", label="DRAM GB")
    twin.set_ylabel("GB")
    twin.legend(loc="upper center")
    ax[1].set_title("FlashAttention forward vs block size (iosim)")

    density = [float(r["problem.block_density"]) for r in right]
    ax[2].plot([100 * (1 - d) for d in density], [ms(r) for r in right], "o-")
    ax[2].set_xlabel("sparsity (% of blocks skipped)")
    ax[2].set_ylabel("forward + backward runtime (ms)")
    ax[2].set_title(f"block-sparse FlashAttention, N={right[0]['problem.seq_q']} (iosim)")
    fig.tight_layout()
    out = os.path.join(HERE, "fig2.png")
    fig.savefig(out, dpi=100)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", metavar="FILE")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        sys.exit(docgen.check(args.check, text, "experiments/fa_paper_fig2/plot.py --no-plot", "fig2"))
    print(text, end="")
    if not args.no_plot:
        print(f"(wrote {os.path.relpath(draw(), os.getcwd())})", file=sys.stderr)


if __name__ == "__main__":
    main()
