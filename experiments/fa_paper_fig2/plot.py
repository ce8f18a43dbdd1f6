#!/usr/bin/env python3
"""Draws fig2-<gpu>.png from results-<gpu>.csv (and measured-<gpu>.csv where it exists) and prints
README.md's tables (markdown) from them.

Usage: python3 experiments/fa_paper_fig2/plot.py [--check README.md | --write README.md] [--no-plot]
Prints two blocks: `fig2` (the A100 reproduction) and `fig2-hopper` (the H100 and H200 profiles,
and the measured points). --check FILE: exit 1 unless FILE's blocks between `<!-- NAME:begin -->`
and `<!-- NAME:end -->` equal what this prints (a ctest test keeps README.md and the CSVs in step);
draws nothing. --write FILE: replaces those blocks in FILE. Without measured-<gpu>.csv the
figures and tables show the simulation alone and say so. Drawing needs python3-matplotlib.
"""
import argparse
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import docgen  # noqa: E402
from points import PROFILES  # noqa: E402

# The paper's Figure 2 left (Dao et al., FlashAttention, 2022; /work/shared/seeds/fa1-slides.txt):
# GPT-2 medium attention (B=64 H=16 N=1024 d=64), forward + backward, A100.
PAPER_LEFT = {"standard": {"GFLOP": 66.6, "HBM GB": 40.3, "ms": 41.7},
              "fa1": {"GFLOP": 75.2, "HBM GB": 4.4, "ms": 7.3}}
# iosim's algorithm beside each of the paper's: its baseline is eager PyTorch attention.
COMPARED = {"standard": "standard-eager", "fa1": "fa1"}
# A measured point's counterpart in the paper's left panel: (algorithm, pass) -> paper column.
PAPER_OF_POINT = {("standard-eager", "fwdbwd"): "standard", ("fa1", "fwdbwd"): "fa1"}
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}
HOPPER = ("h100", "h200")
MEASURED_GPUS = ("h100", "h200")  # measured.py's GPUs
SCRIPT = "experiments/fa_paper_fig2/plot.py"


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def results(gpu):
    return read_csv(os.path.join(HERE, f"results-{gpu}.csv"))


def rows(gpu, panel):
    return [r for r in results(gpu) if r["panel"] == panel]


def points(gpu, l2):
    """{point name: row} of the simulated measured points, with the L2 warm or cold."""
    return {r["point"]: r for r in results(gpu) if r["panel"] == "points" and r["l2"] == l2}


def measured(gpu):
    """measured-<gpu>.csv's rows by point, or None without the file. Fails when its simulated
    columns are not results-<gpu>.csv's (run.py ran since measured.py)."""
    path = os.path.join(HERE, f"measured-{gpu}.csv")
    if not os.path.exists(path):
        return None
    out = {r["point"]: r for r in read_csv(path)}
    warm, cold = points(gpu, "warm"), points(gpu, "cold")
    for name, r in out.items():
        if name not in warm or r["sim_ms"] != repr(ms(warm[name])) or int(r["sim_dram_bytes"]) != dram_bytes(cold[name]):
            print(f"plot.py: measured-{gpu}.csv's simulated values of {name} are not results-{gpu}.csv's: run "
                  f"experiments/fa_paper_fig2/measured.py --rejoin --gpu {gpu}", file=sys.stderr)
            sys.exit(2)
    return out


def gb(r, *keys):
    return sum(float(r[k]) for k in keys) / 1e9


def dram_bytes(r):
    return int(r["dram.read_bytes"]) + int(r["dram.write_bytes"])


def dram_gb(r):
    return dram_bytes(r) / 1e9


def ms(r):
    return float(r["time.seconds"]) * 1e3


def ok(m):
    return m is not None and m["status"] == "ok"


def meas_value(m, key):
    """A measured value of a point (meas_ms: ms, meas_dram_bytes: GB), None where it has none: a
    point whose ncu run failed keeps its bench median."""
    if m is None or m[key] == "":
        return None
    return float(m[key]) if key == "meas_ms" else int(m[key]) / 1e9


def matrix_gb(r):
    """One N_q x N_k matrix of the data type for all heads: what an eager elementwise pass reads or writes."""
    return (ELEM_BYTES[r["problem.dtype"]] * int(r["problem.batch"]) * int(r["problem.heads"])
            * int(r["problem.seq_q"]) * int(r["problem.seq_k"]) / 1e9)


def left_lines(left):
    out = [f"**Left**: GPT-2 medium attention, causal, forward + backward, profile {PROFILES['a100']} "
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


def render_a100():
    left, middle, right = rows("a100", "left"), rows("a100", "middle"), rows("a100", "right")
    out = [f"<!-- printed by {SCRIPT} from results-a100.csv; do not edit by hand -->", ""]
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


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def paper_panels_lines():
    """The paper's three setups on every profile, side by side."""
    gpus = list(PROFILES)
    out = ["**The paper's setups on each profile** (as for the A100 above; runtime ms / DRAM GB):", "",
           "| profile | timing | standard-eager fwd+bwd | fa1 fwd+bwd | fa1 tiles (B_r x B_c, rule) |",
           "|---|---|---:|---:|---|",
           f"| paper (A100) | measured | {PAPER_LEFT['standard']['ms']:.1f} / {PAPER_LEFT['standard']['HBM GB']:.1f} "
           f"| {PAPER_LEFT['fa1']['ms']:.1f} / {PAPER_LEFT['fa1']['HBM GB']:.1f} | not stated |"]
    for g in gpus:
        by = {r["algorithm"]: r for r in rows(g, "left")}
        s, f = by["standard-eager"], by["fa1"]
        out.append(f"| {PROFILES[g]} | {s['profile.provenance'].split(';')[0].split('(')[0].strip()} | "
                   f"{ms(s):.1f} / {dram_gb(s):.1f} | {ms(f):.1f} / {dram_gb(f):.1f} | "
                   f"{f['tiling.block_m']} x {f['tiling.block_n']} |")
    mid = {g: rows(g, "middle") for g in gpus}
    out += ["", "Middle (fa1 forward, B_r = 64), runtime ms / DRAM GB:", "",
            "| B_c | " + " | ".join(PROFILES[g] for g in gpus) + " |", "|---:|" + "---:|" * len(gpus)]
    for i, r in enumerate(mid[gpus[0]]):
        out.append(f"| {r['tiling.block_n']} | " + " | ".join(f"{ms(mid[g][i]):.2f} / {dram_gb(mid[g][i]):.2f}"
                                                             for g in gpus) + " |")
    right = {g: rows(g, "right") for g in gpus}
    out += ["", "Right (fa1 forward + backward, N = 4096), runtime ms (runtime / dense runtime):", "",
            "| block density | " + " | ".join(PROFILES[g] for g in gpus) + " |", "|---:|" + "---:|" * len(gpus)]
    for i, r in enumerate(right[gpus[0]]):
        out.append(f"| {float(r['problem.block_density']):.4f} | " +
                   " | ".join(f"{ms(right[g][i]):.2f} ({ms(right[g][i]) / ms(right[g][0]):.3f})" for g in gpus) + " |")
    out += ["", "Timing provenance (`iosim profiles`): " +
            "; ".join(f"{PROFILES[g]}: {rows(g, 'left')[0]['profile.provenance']}" for g in gpus) + "."]
    return out


def point_label(r):
    """'fa1 fwdbwd 64x128 causal' from a simulated point's row."""
    causal = " causal" if r["problem.causal"] in ("1", "True", "true") else ""
    dens = float(r["problem.block_density"])
    sparse = f" density {dens:.4f}" if dens < 1 else ""
    return f"{r['algorithm']} {r['pass']} {r['tiling.block_m']}x{r['tiling.block_n']}{causal}{sparse}"


def points_lines(gpu, meas):
    """Every measured point: paper, iosim on the A100 profile and on this GPU's, and this GPU measured."""
    G = gpu.upper()
    a100, warm, cold = points("a100", "warm"), points(gpu, "warm"), points(gpu, "cold")
    out = ["", f"**Measured points, {G}** (points.txt; our kernels at tiles of the full menu; runtime: the whole "
           f"pass, iosim with the L2 carried across kernels against the CUDA-event median; DRAM: iosim with a "
           f"cold L2 at each kernel against ncu --cache-control all, summed over the pass's kernels):", "",
           f"| panel | point | paper A100 ms | iosim A100 ms | iosim {G} ms | measured {G} ms | sim/meas "
           f"| paper A100 HBM GB | iosim {G} DRAM GB | measured {G} DRAM GB | sim/meas |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, w in warm.items():
        paper = PAPER_LEFT.get(PAPER_OF_POINT.get((w["algorithm"], w["pass"]))) if w["point_panel"] == "left" else None
        m = meas.get(name) if meas else None
        meas_ms, meas_gb = meas_value(m, "meas_ms"), meas_value(m, "meas_dram_bytes")
        sim_gb = dram_gb(cold[name])
        out.append(f"| {w['point_panel']} | {point_label(w)} | {fmt(paper and paper['ms'], '.1f')} | "
                   f"{ms(a100[name]):.2f} | {ms(w):.2f} | {fmt(meas_ms)} | {fmt(ratio(ms(w), meas_ms))} | "
                   f"{fmt(paper and paper['HBM GB'], '.1f')} | {sim_gb:.2f} | {fmt(meas_gb)} | "
                   f"{fmt(ratio(sim_gb, meas_gb))} |")
    out.append("")
    if meas is None:
        out.append(f"- Not measured yet: there is no measured-{gpu}.csv (measure.sh on the GPU machine, then "
                   f"measured.py); the measured columns are empty and fig2-{gpu}.png has no measured points.")
    else:
        failed = [f"{n} ({m['status']})" for n, m in meas.items() if not ok(m)]
        out.append(f"- {sum(ok(m) for m in meas.values())} of {len(meas)} points measured"
                   + (f"; without a measurement: {', '.join(failed)}." if failed else "."))
    out.append("- The paper's columns are its Figure 2 (A100, FlashAttention = its FA1 kernel, tiles not stated); "
               "they sit on the fwd+bwd rows of the algorithm it ran, whatever the tile.")
    return out


def render_hopper():
    meas = {g: measured(g) for g in MEASURED_GPUS}
    sources = ", ".join([f"results-{g}.csv" for g in PROFILES] + [f"measured-{g}.csv" for g in MEASURED_GPUS if meas[g]])
    out = [f"<!-- printed by {SCRIPT} from {sources}; do not edit by hand -->", ""]
    out += paper_panels_lines()
    for g in MEASURED_GPUS:
        if g == "h100" or meas[g] is not None:  # the H100 always (the machine lent); the H200 once measured
            out += points_lines(g, meas[g])
    return "\n".join(out) + "\n"


def draw_a100(plt):
    left, middle, right = rows("a100", "left"), rows("a100", "middle"), rows("a100", "right")
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
    return fig


def draw_points(plt, gpu, meas):
    """The three panels at the measured points: iosim on this GPU's profile, lines and bars; the
    measured points, black markers (none without measured-<gpu>.csv)."""
    G = gpu.upper()
    warm, cold = points(gpu, "warm"), points(gpu, "cold")

    def measured_of(name, key):
        return meas_value(meas.get(name) if meas else None, "meas_ms" if key == "ms" else "meas_dram_bytes")

    fig, ax = plt.subplots(1, 3, figsize=(16, 4.6))
    left = [n for n, r in warm.items() if r["point_panel"] == "left" and r["pass"] == "fwdbwd"]
    x = list(range(len(left)))
    ax[0].bar([i - 0.2 for i in x], [ms(warm[n]) for n in left], 0.4, label=f"iosim ({PROFILES[gpu]})")
    for i, n in enumerate(left):
        ax[0].annotate(f"{dram_gb(cold[n]):.1f} GB", (i - 0.2, ms(warm[n])), ha="center", va="bottom", fontsize=8)
        m_ms, m_gb = measured_of(n, "ms"), measured_of(n, "gb")
        if m_ms is not None:
            ax[0].bar(i + 0.2, m_ms, 0.4, color="0.3", hatch="//", label=f"measured ({G})" if i == 0 else None)
            ax[0].annotate(f"{m_gb:.1f} GB" if m_gb is not None else "", (i + 0.2, m_ms), ha="center", va="bottom",
                           fontsize=8)
        paper = PAPER_LEFT.get(PAPER_OF_POINT.get((warm[n]["algorithm"], "fwdbwd")))
        if paper:
            ax[0].plot(i, paper["ms"], "k*", markersize=12, label="paper (A100)" if i == 0 else None)
    ax[0].set_xticks(x, [f"{warm[n]['algorithm']}\n{warm[n]['tiling.block_m']}x{warm[n]['tiling.block_n']}"
                         for n in left])
    ax[0].set_ylabel("forward + backward runtime (ms); labels: DRAM GB")
    ax[0].set_title("GPT-2 medium attention, causal")
    ax[0].legend(fontsize=8)

    twin = ax[1].twinx()
    for algo, color, marker in (("fa1", "C0", "o"), ("fa2", "C1", "s")):
        names = [n for n, r in warm.items() if r["point_panel"] == "middle" and r["algorithm"] == algo]
        bc = [int(warm[n]["tiling.block_n"]) for n in names]
        ax[1].plot(bc, [ms(warm[n]) for n in names], marker + "-", color=color, label=f"iosim {algo} ms")
        twin.plot(bc, [dram_gb(cold[n]) for n in names], marker + ":", color=color, alpha=0.5,
                  label=f"iosim {algo} DRAM GB")
        got = [(b, measured_of(n, "ms"), measured_of(n, "gb")) for b, n in zip(bc, names)]
        got = [g for g in got if g[1] is not None]
        if got:
            ax[1].plot([g[0] for g in got], [g[1] for g in got], "X", color=color, markeredgecolor="k",
                       markersize=10, linestyle="none", label=f"measured {algo} ms")
            twin.plot([g[0] for g in got if g[2] is not None], [g[2] for g in got if g[2] is not None], "P",
                      color=color, markeredgecolor="k", alpha=0.6, linestyle="none", label=f"measured {algo} DRAM GB")
    ax[1].set_xscale("log", base=2)
    bc_all = sorted({int(r["tiling.block_n"]) for r in warm.values() if r["point_panel"] == "middle"})
    ax[1].set_xticks(bc_all, [str(b) for b in bc_all])
    ax[1].set_xlabel("block size B_c (B_r = 64)")
    ax[1].set_ylabel("forward runtime (ms)")
    twin.set_ylabel("DRAM GB (cold L2 per kernel)")
    ax[1].legend(loc="upper left", fontsize=7)
    twin.legend(loc="upper right", fontsize=7)
    ax[1].set_title("forward vs block size")

    for algo, color, marker in (("fa1", "C0", "o"), ("fa2", "C1", "s")):
        names = [n for n, r in warm.items() if r["point_panel"] == "right" and r["algorithm"] == algo]
        sparsity = [100 * (1 - float(warm[n]["problem.block_density"])) for n in names]
        ax[2].plot(sparsity, [ms(warm[n]) for n in names], marker + "-", color=color, label=f"iosim {algo}")
        got = [(s, measured_of(n, "ms")) for s, n in zip(sparsity, names) if measured_of(n, "ms") is not None]
        if got:
            ax[2].plot(*zip(*got), "X", color=color, markeredgecolor="k", markersize=10, linestyle="none",
                       label=f"measured {algo}")
    ax[2].set_xlabel("sparsity (% of blocks skipped)")
    ax[2].set_ylabel("forward + backward runtime (ms)")
    ax[2].set_title("block-sparse, N=4096, B*H=32")
    ax[2].legend(fontsize=8)
    note = f"measured on the {G}" if meas else f"no measured-{gpu}.csv: iosim only"
    fig.suptitle(f"Figure 2 at our kernels' points, {PROFILES[gpu]} ({note})")
    return fig


def draw():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = {"a100": draw_a100(plt)}
    for g in HOPPER:
        figures[g] = draw_points(plt, g, measured(g))
    paths = []
    for g, fig in figures.items():
        fig.tight_layout()
        paths.append(os.path.join(HERE, f"fig2-{g}.png"))
        fig.savefig(paths[-1], dpi=100)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", metavar="FILE")
    parser.add_argument("--write", metavar="FILE")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    blocks = {"fig2": render_a100(), "fig2-hopper": render_hopper()}
    if args.check:
        sys.exit(max(docgen.check(args.check, text, f"{SCRIPT} --write {args.check}", name)
                     for name, text in blocks.items()))
    if args.write:
        text = open(args.write, encoding="utf-8").read()
        for name, block in blocks.items():
            text = docgen.replace_block(text, name, block)
        open(args.write, "w", encoding="utf-8").write(text)
    else:
        for name, block in blocks.items():
            begin, end = docgen.markers(name)
            print(f"{begin}\n{block.strip()}\n{end}")
    if not args.no_plot:
        for p in draw():
            print(f"(wrote {os.path.relpath(p, os.getcwd())})", file=sys.stderr)


if __name__ == "__main__":
    main()
