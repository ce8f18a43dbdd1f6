#!/usr/bin/env python3
"""Renders docs/teaching.md from teaching.md.in and the CSVs beside this file; draws the plots.

Usage: python3 experiments/teaching/render.py [--check docs/teaching.md] [--no-plot]
Every figure of the doc is a {{field}} of the template, computed here from the committed CSVs
(run.py writes them). --check FILE: exit 1, with a diff, unless FILE is what this renders (a ctest
test keeps the doc and the data in step); draws nothing. Drawing needs python3-matplotlib.
"""
import argparse
import csv
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import docgen  # noqa: E402

TEMPLATE = os.path.join(HERE, "teaching.md.in")
DOC = os.path.join(ROOT, "docs", "teaching.md")
E = 2  # bytes per fp16 element: every run of run.py is fp16
STAT_BYTES = 4  # l, m, L in fp32 (schedule::ElementBytes::kStat)


def table(name):
    with open(os.path.join(HERE, name), newline="") as f:
        return list(csv.DictReader(f))


def i(r, k):
    return int(float(r[k]))


def f(r, k):
    return float(r[k])


def mb(x):
    return f"{x / 1e6:,.1f}"


def gb(x):
    return f"{x / 1e9:,.2f}"


def md_table(header, rows):
    return "\n".join(docgen.md_table(header, rows))


class Values(dict):
    def put(self, **kw):
        for k, v in kw.items():
            if k in self:
                raise KeyError(f"field {k} set twice")
            self[k] = v


# ---------------------------------------------------------------------------------------------
def profile_values(v, p):
    peak, dram_bw, l2_bw = f(p, "tensor_fp16_flops_per_s"), f(p, "dram_bytes_per_s"), f(p, "l2_bytes_per_s")
    v.put(profile=p["name"], device=p["device"], sm_count=p["sm_count"], provenance=p["provenance"],
          peak_tflops=f"{peak / 1e12:.0f}", dram_tbs=f"{dram_bw / 1e12:.2f}", l2_tbs=f"{l2_bw / 1e12:.2f}",
          l2_mib=f"{i(p, 'l2_bytes') / 2**20:.0f}", ridge=f"{peak / dram_bw:.0f}", l2_ridge=f"{peak / l2_bw:.0f}")
    return peak / dram_bw, peak / l2_bw


def roofline_values(v, rows, ridge, l2_ridge):
    r0 = rows[0]
    d = i(r0, "head_dim")
    v.put(roof_shape=f"B={r0['batch']}, H={r0['heads']}, N={r0['seq']}, d={d}",
          roof_gemm=r0["gemm"], roof_fa2_tile=f"{r0['block_m']} x {r0['block_n']}",
          roof_d=d, qk_ai_bound=f"{2 * d / E:.0f}")
    body = []
    kernels = {a: sum(r["kernel"] != "pass" for r in rows if r["algorithm"] == a) for a in {r["algorithm"] for r in rows}}
    for r in rows:
        if r["kernel"] == "pass" and kernels[r["algorithm"]] == 1:
            continue  # the pass is its one kernel
        flops, dram = f(r, "flops"), f(r, "dram_bytes")
        name = f"{r['algorithm']} {r['kernel']}" if r["kernel"] != "pass" else f"**{r['algorithm']}, whole pass**"
        ai = flops / dram
        body.append([name, f"{flops / 1e9:.1f}", gb(f(r, "global_bytes")), gb(dram), f"{ai:,.1f}",
                     "above" if ai > ridge else "below", f"{f(r, 'time_s') * 1e3:.3f}",
                     f"{flops / f(r, 'time_s') / 1e12:.0f}", f"{f(r, 'dram_utilisation'):.0%}", r["bound"]])
    v.put(roof_table=md_table(["<kernel", "GFLOP", "SRAM↔global GB", "DRAM GB", "FLOP per DRAM byte",
                               "vs ridge", "time ms", "TFLOP/s", "DRAM busy", "<bound (engine)"], body))
    std = next(r for r in rows if r["algorithm"] == "standard" and r["kernel"] == "pass")
    fa2 = next(r for r in rows if r["algorithm"] == "fa2" and r["kernel"] == "pass")
    soft = next(r for r in rows if r["kernel"].endswith("softmax"))
    v.put(std_ai=f"{f(std, 'flops') / f(std, 'dram_bytes'):.0f}",
          fa2_ai_dram=f"{f(fa2, 'flops') / f(fa2, 'dram_bytes'):,.0f}",
          fa2_ai_global=f"{f(fa2, 'flops') / f(fa2, 'global_bytes'):.0f}",
          std_ms=f"{f(std, 'time_s') * 1e3:.2f}", fa2_ms=f"{f(fa2, 'time_s') * 1e3:.2f}",
          std_over_fa2=f"{f(std, 'time_s') / f(fa2, 'time_s'):.1f}",
          std_dram_gb=gb(f(std, "dram_bytes")), fa2_dram_gb=gb(f(fa2, "dram_bytes")),
          softmax_tbs=f"{f(soft, 'dram_bytes') / f(soft, 'time_s') / 1e12:.2f}",
          softmax_busy=f"{f(soft, 'dram_utilisation'):.0%}")
    return rows


# ---------------------------------------------------------------------------------------------
# FA1's paper terms, each as (label, the loop it comes from, iosim's term indices, elements of the paper's
# expression as a function of N, d, M). iosim's terms are those of sim/count/formulas.cpp (fa1_forward):
# 0 init O, l, m; 1 K_j, V_j; 2 Q_i, O_i read; 3 l_i, m_i read; 4 O_i written; 5 l_i, m_i written.
FA1_PAPER_TERMS = [
    ("12N²d²/M", "inner loop (T_c·T_r iterations): Q_i, O_i read and O_i written, 3·B_r·d per iteration",
     (2, 4), lambda n, d, m: 12 * n * n * d * d / m),
    ("16N²d/M", "inner loop: l_i, m_i read and written, 4·B_r per iteration", (3, 5), lambda n, d, m: 16 * n * n * d / m),
    ("3Nd", "outer loop (T_c iterations): K_j, V_j read once, 2·B_c·d per iteration; before the loops: O = 0 written",
     (1, 0), lambda n, d, m: 3 * n * d),
]


def fa1_values(v, rows):
    by_n = {}
    for r in rows:
        by_n.setdefault(i(r, "seq"), []).append(r)
    seqs = sorted(by_n)
    n = 4096 if 4096 in by_n else seqs[len(seqs) // 2]
    rs = by_n[n]
    r0 = rs[0]
    d, m, bm, bn = i(r0, "head_dim"), i(r0, "M"), i(r0, "block_m"), i(r0, "block_n")
    term = {i(r, "term"): r for r in rs}
    t_c = n // bn
    if t_c * bn != n or 4 * d * bn != m:
        sys.exit(f"render.py: fa1_terms.csv: B_c = {bn} should divide N = {n} and equal M/4d = {m / (4 * d)}")
    stat_bytes = i(term[3], "bytes") // (2 * n * t_c)  # bytes per l or m element
    if stat_bytes != STAT_BYTES:
        sys.exit(f"render.py: fa1_terms.csv: l, m take {stat_bytes} bytes per element, expected {STAT_BYTES}")
    body = []
    for label, loop, idx, elems in FA1_PAPER_TERMS:
        paper = elems(n, d, m) * E
        ours = sum(i(term[k], "bytes") for k in idx)
        whats = "; ".join(f"`{term[k]['what'].split(':')[0].strip()}` {mb(i(term[k], 'bytes'))}" for k in idx)
        body.append([f"{label}", loop, f"{mb(paper)}", whats, mb(ours), f"{ours - paper:+,.0f}"])
    v.put(fa1_n=n, fa1_d=d, fa1_M=f"{m:,}", fa1_smem_kib=f"{m * E // 1024}", fa1_bc=bn, fa1_br=bm, fa1_tc=t_c,
          fa1_tr=n // bm, stat_bytes=stat_bytes,
          fa1_terms_table=md_table(["<paper term", "<where it comes from (Algorithm 1, `Fa1ForwardSchedule`)",
                                    "paper, MB (elements × 2 B)", "<iosim's terms (`formula.terms`), MB",
                                    "iosim, MB", "iosim − paper, B"], body))
    # Over N: the walk equals the closed form, and the closed form minus the paper's expression is
    # exactly the fp32 statistics (4 instead of 2 bytes, read and written T_c times) and their initialisation.
    body = []
    for nn in seqs:
        r = by_n[nn][0]
        tc = nn // i(r, "block_n")
        explained = (stat_bytes - E) * 4 * nn * tc + 2 * stat_bytes * nn
        gap = i(r, "formula_bytes") - round(f(r, "paper_bytes"))
        if gap != explained:
            sys.exit(f"render.py: fa1_terms.csv N={nn}: closed form - paper = {gap}, expected {explained}")
        body.append([nn, tc, f"{i(r, 'trace_bytes'):,}", f"{i(r, 'formula_bytes'):,}",
                     "yes" if r["equals_trace"] == "True" and r["counted_by"] == "trace" else "NO",
                     f"{round(f(r, 'paper_bytes')):,}", f"{gap:,}", f"{explained:,}"])
    v.put(fa1_over_n_table=md_table(["N", "T_c = N/B_c", "bytes, trace walk", "bytes, closed form", "equal",
                                     "paper's expression × 2 B", "closed form − paper",
                                     f"({stat_bytes}−2)·4N·T_c + 2·{stat_bytes}·N"], body))


# ---------------------------------------------------------------------------------------------
def l2_values(v, rows):
    gpus = []
    for r in rows:
        if r["gpu"] not in gpus:
            gpus.append(r["gpu"])
    body = []
    for g in gpus:
        rs = [r for r in rows if r["gpu"] == g]
        for algo in ("fa2", "fa1", "standard"):
            for pas in ("fwd", "bwd"):
                grp = [r for r in rs if r["algo"] == algo and r["pass"] == pas]
                if not grp:
                    continue
                xbar = [f(r, "meas_global_bytes") / f(r, "formula_bytes") for r in grp]
                dram = [f(r, "meas_dram_bytes") / f(r, "formula_bytes") for r in grp]
                body.append([f"{g} ({grp[0]['device']})", f"{algo} {pas}", len(grp), f"{statistics.median(xbar):.2f}",
                             f"{statistics.median(dram):.3f}", f"{min(dram):.3f} – {max(dram):.3f}"])
    v.put(l2_gpus=" and ".join(f"{g} ({next(r['device'] for r in rows if r['gpu'] == g)})" for g in gpus),
          l2_sources=", ".join(f"`{s}`" for s in dict.fromkeys(r["source"] for r in rows)),
          l2_table=md_table(["<GPU", "<pass", "configurations", "measured SM↔L2 / closed form (median)",
                             "measured DRAM / closed form (median)", "DRAM / closed form (range)"], body))
    # Worked examples, on the first GPU (the H100 grid): FA2 forward, and FA1 forward whose re-read
    # working set (O, l, m of every head at once) does or does not fit in the L2.
    h = [r for r in rows if r["gpu"] == gpus[0]]

    def example(r):
        return [f"`{r['config']}`", mb(f(r, "formula_bytes")), mb(f(r, "meas_global_bytes")),
                mb(f(r, "meas_dram_bytes")), mb(f(r, "sim_dram_bytes")), mb(fa1_working_set(r))]

    fa2 = max((r for r in h if r["algo"] == "fa2" and r["pass"] == "fwd"), key=lambda r: f(r, "formula_bytes"))
    fa1 = sorted((r for r in h if r["algo"] == "fa1" and r["pass"] == "fwd" and "-c-" not in r["config"]
                  and "-s50-" not in r["config"]), key=fa1_working_set)
    small, large = fa1[0], fa1[-1]
    v.put(l2_gpu0=gpus[0], l2_example_table=md_table(
        ["<configuration", "closed form MB", "measured SM↔L2 MB", "measured DRAM MB", "iosim DRAM MB",
         "FA1's re-read set: Q, O, l, m of all heads, MB"], [example(r) for r in (fa2, small, large)]),
        l2_fa2_ratio=f"{f(fa2, 'formula_bytes') / f(fa2, 'meas_dram_bytes'):.0f}",
        l2_fa2_config=fa2["config"], l2_fa1_small=small["config"], l2_fa1_large=large["config"],
        l2_fa1_small_ratio=f"{f(small, 'meas_dram_bytes') / f(small, 'formula_bytes'):.2f}",
        l2_fa1_small_sim=mb(f(small, "sim_dram_bytes")), l2_fa1_small_meas=mb(f(small, "meas_dram_bytes")),
        l2_fa1_small_set=mb(fa1_working_set(small)),
        l2_fa1_large_ratio=f"{f(large, 'meas_dram_bytes') / f(large, 'formula_bytes'):.2f}")


def fa1_working_set(r):
    """Bytes FA1's inner loops re-read, over every head running at once: Q and O (fp16), l and m (fp32)."""
    return i(r, "batch_heads") * i(r, "seq_q") * (2 * i(r, "head_dim") * E + 2 * STAT_BYTES)


# ---------------------------------------------------------------------------------------------
def fa1_fa2_values(v, rows):
    body = []
    for r in rows:
        body.append([f"B={r['batch']} H={r['heads']} N={r['seq']}", r["algorithm"], r["ctas"],
                     mb(f(r, "qkv_bytes")), mb(f(r, "o_bytes")), mb(f(r, "stat_bytes")), mb(f(r, "global_bytes")),
                     mb(f(r, "dram_bytes")), f"{f(r, 'fp32_ops') / 1e6:,.0f}", f"{f(r, 'time_s') * 1e3:.3f}",
                     f"{f(r, 'flops') / f(r, 'time_s') / 1e12:.0f}"])
    r0 = rows[0]
    pairs = [(a, b) for a, b in zip(rows[::2], rows[1::2])]
    for a, b in pairs:
        if (a["algorithm"], b["algorithm"]) != ("fa1", "fa2"):
            sys.exit("render.py: fa1_fa2.csv: rows are not fa1, fa2 pairs")
    fp32 = [f(a, "fp32_ops") / f(b, "fp32_ops") for a, b in pairs]
    speed = [f(a, "time_s") / f(b, "time_s") for a, b in pairs]
    v.put(ff_d=r0["head_dim"], ff_tile=f"{r0['block_m']} x {r0['block_n']}",
          ff_table=md_table(["<problem (d=" + r0["head_dim"] + ")", "<algorithm", "CTAs", "Q,K,V MB", "O MB",
                             "l, m / L MB", "SRAM↔global MB", "DRAM MB", "FP32 Mop", "time ms", "TFLOP/s"], body),
          ff_fp32_min=f"{min(fp32):.2f}", ff_fp32_max=f"{max(fp32):.2f}",
          ff_speed_min=f"{min(speed):.1f}", ff_speed_max=f"{max(speed):.1f}")


# ---------------------------------------------------------------------------------------------
def block_rule_values(v, rows):
    ds = sorted({i(r, "head_dim") for r in rows})
    for d in ds:
        rs = [r for r in rows if i(r, "head_dim") == d]
        paper = [r for r in rs if r["algorithm"] == "fa2" and r["rule"] == "paper"]
        fa2r = [r for r in rs if r["algorithm"] == "fa2" and r["rule"] == "fa2"]
        fa1 = [r for r in rs if r["algorithm"] == "fa1"]
        body = []
        for a, p, q in zip(fa1, paper, fa2r):
            body.append([f"{a['smem_kib']} KiB", f"{i(a, 'M'):,}", f"{p['block_m']} x {p['block_n']}",
                         mb(f(p, "global_bytes")), f"{q['block_m']} x {q['block_n']}", mb(f(q, "global_bytes")),
                         f"{a['block_m']} x {a['block_n']}" + (" (M halved)" if i(a, "rule_M") < i(a, "M") else ""),
                         mb(f(a, "global_bytes"))])
        knee = 4 * d * d
        flat = [r for r in paper if i(r, "M") >= knee]
        v.put(**{f"br{d}_table": md_table(
            ["shared memory per block", "M (elements)", "FA2, paper's rule: B_r x B_c", "FA2 MB",
             "FA2, FA2's rule: B_r x B_c", "FA2 MB", "FA1, paper's rule: B_r x B_c", "FA1 MB"], body),
            f"br{d}_knee_elems": f"{knee:,}", f"br{d}_knee_kib": f"{knee * E // 1024}",
            f"br{d}_flat_mb": mb(f(flat[0], "global_bytes")) if flat else "-",
            f"br{d}_flat_distinct": len({r["global_bytes"] for r in flat}),
            f"br{d}_gain": f"{f(paper[-1], 'global_bytes') / f(fa2r[-1], 'global_bytes'):.1f}"})
    n = i(rows[0], "seq")
    v.put(br_seq=n, br_2en2_mb=mb(2 * E * n * n), br_max_kib=max(i(r, "smem_kib") for r in rows))


# ---------------------------------------------------------------------------------------------
def decode_values(v, rows, sm_count):
    prefill = [r for r in rows if r["seq_q"] == r["seq_k"]]
    dec = [r for r in rows if r["seq_q"] != r["seq_k"]]
    qs = sorted({i(r, "seq_q") for r in dec})
    ks = sorted({i(r, "seq_k") for r in dec})
    at = {(i(r, "seq_q"), i(r, "seq_k")): r for r in dec}
    body = [[f"N_q = {q}"] + [f"{f(at[q, k], 'time_s') * 1e6:,.1f}" for k in ks] for q in qs]
    bw = [f(r, "dram_bytes") / f(r, "time_s") for r in dec]
    kv_share = [f(r, "kv_bytes") / f(r, "global_bytes") for r in dec]
    tflops = [f(r, "flops") / f(r, "time_s") / 1e12 for r in dec]
    spread = [max(f(at[q, k], "time_s") for q in qs) / min(f(at[q, k], "time_s") for q in qs) - 1 for k in ks]
    r0, p = dec[0], prefill[0]
    v.put(dec_shape=f"B={r0['batch']}, H={r0['heads']}, d={r0['head_dim']}", dec_tile=f"{r0['block_m']} x {r0['block_n']}",
          dec_ctas=",".join(sorted({r["ctas"] for r in dec})), dec_sm=sm_count,
          dec_time_table=md_table(["<queries"] + [f"N_k = {k:,}" for k in ks], body),
          dec_kv_share_min=f"{min(kv_share):.1%}", dec_bw_min=f"{min(bw) / 1e9:,.0f}", dec_bw_max=f"{max(bw) / 1e9:,.0f}",
          dec_busy_max=f"{max(f(r, 'dram_utilisation') for r in dec):.0%}",
          dec_q_min=qs[0], dec_q_max=qs[-1], dec_tflops_max=f"{max(tflops):.1f}", dec_nq_spread=f"{max(spread):.1%}",
          dec_bound=", ".join(sorted({r["bound"] for r in dec})),
          pre_n=p["seq_q"], pre_ctas=p["ctas"], pre_tflops=f"{f(p, 'flops') / f(p, 'time_s') / 1e12:.0f}")


# ---------------------------------------------------------------------------------------------
def render():
    v = Values()
    p = table("profile.csv")[0]
    ridge, l2_ridge = profile_values(v, p)
    roofline_values(v, table("roofline.csv"), ridge, l2_ridge)
    fa1_values(v, table("fa1_terms.csv"))
    l2_values(v, table("l2_measured.csv"))
    fa1_fa2_values(v, table("fa1_fa2.csv"))
    block_rule_values(v, table("block_rule.csv"))
    decode_values(v, table("decode.csv"), p["sm_count"])
    return docgen.fill(open(TEMPLATE, encoding="utf-8").read(), v)


def draw():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = table("profile.csv")[0]
    peak, dram_bw, l2_bw = f(p, "tensor_fp16_flops_per_s"), f(p, "dram_bytes_per_s"), f(p, "l2_bytes_per_s")
    written = []

    def save(fig, name):
        fig.tight_layout()
        path = os.path.join(HERE, name)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)

    # Roofline: each kernel at its DRAM and SM<->L2 arithmetic intensity, at its predicted FLOP/s.
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    xs = [1, peak / l2_bw, peak / dram_bw, 1e5]  # the corners of both roofs
    ax.plot(xs, [min(peak, x * dram_bw) / 1e12 for x in xs], "k-", label=f"DRAM roof ({dram_bw / 1e12:.2f} TB/s)")
    ax.plot(xs, [min(peak, x * l2_bw) / 1e12 for x in xs], "k--", label=f"L2 roof ({l2_bw / 1e12:.2f} TB/s)")
    for n, r in enumerate(r for r in table("roofline.csv") if r["kernel"] != "pass" and f(r, "flops") > 0):
        perf = f(r, "flops") / f(r, "time_s") / 1e12
        c = f"C{n}"
        ax.plot(f(r, "flops") / f(r, "dram_bytes"), perf, "o", color=c, label=f"{r['kernel']}: DRAM bytes")
        ax.plot(f(r, "flops") / f(r, "global_bytes"), perf, "s", mfc="none", color=c, label=f"{r['kernel']}: SM↔L2 bytes")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte)")
    ax.set_ylabel("TFLOP/s (predicted)")
    ax.set_title(f"Roofline, {p['device']} profile (iosim {p['name']})")
    ax.legend(fontsize=7, loc="lower right")
    save(fig, "roofline.png")

    # L2: measured DRAM bytes against the closed form (SRAM<->global), per GPU.
    rows = table("l2_measured.csv")
    gpus = list(dict.fromkeys(r["gpu"] for r in rows))
    fig, axes = plt.subplots(1, len(gpus), figsize=(6 * len(gpus), 4.8), squeeze=False)
    for ax, g in zip(axes[0], gpus):
        rs = [r for r in rows if r["gpu"] == g]
        for n, algo in enumerate(("standard", "fa1", "fa2")):
            for pas, mk in (("fwd", "o"), ("bwd", "^")):
                pts = [r for r in rs if r["algo"] == algo and r["pass"] == pas]
                if pts:
                    ax.plot([f(r, "formula_bytes") / 1e9 for r in pts], [f(r, "meas_dram_bytes") / 1e9 for r in pts],
                            mk, color=f"C{n}", label=f"{algo} {pas}", alpha=0.8)
        lim = [0.01, 50]
        ax.plot(lim, lim, "k:", label="DRAM = closed form")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("closed form: SRAM↔global GB")
        ax.set_ylabel("measured DRAM read + write GB (Nsight Compute)")
        ax.set_title(f"{rs[0]['device']} (measured)")
        ax.legend(fontsize=7)
    save(fig, "l2.png")

    # Block rule: FA1 and FA2 bytes against M.
    rows = table("block_rule.csv")
    ds = sorted({i(r, "head_dim") for r in rows})
    fig, axes = plt.subplots(1, len(ds), figsize=(6 * len(ds), 4.5), squeeze=False)
    for ax, d in zip(axes[0], ds):
        for (algo, rule), style in ((("fa1", "paper"), "o:"), (("fa2", "paper"), "s-"), (("fa2", "fa2"), "^-")):
            rs = [r for r in rows if i(r, "head_dim") == d and r["algorithm"] == algo and r["rule"] == rule]
            ax.plot([i(r, "M") for r in rs], [f(r, "global_bytes") / 1e6 for r in rs], style,
                    label=f"{algo}, {'paper' if rule == 'paper' else 'FA2'}'s rule")
        ax.axvline(4 * d * d, color="grey", lw=0.8)
        ax.annotate("M = 4d²", (4 * d * d, ax.get_ylim()[1]), ha="left", va="top", fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("M: shared memory per block (fp16 elements)")
        ax.set_ylabel("SRAM↔global MB, one head")
        ax.set_title(f"forward, N={rows[0]['seq']}, d={d} (iosim, counts)")
        ax.legend(fontsize=8, loc="lower left")
    save(fig, "block_rule.png")

    # Decode: predicted time and achieved DRAM bandwidth against the KV length.
    rows = [r for r in table("decode.csv") if r["seq_q"] != r["seq_k"]]
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    for q in sorted({i(r, "seq_q") for r in rows}):
        rs = [r for r in rows if i(r, "seq_q") == q]
        ks = [i(r, "seq_k") for r in rs]
        ax[0].plot(ks, [f(r, "time_s") * 1e6 for r in rs], "o-", label=f"N_q = {q}")
        ax[1].plot(ks, [f(r, "dram_bytes") / f(r, "time_s") / 1e12 for r in rs], "o-", label=f"N_q = {q}")
    ax[1].axhline(dram_bw / 1e12, color="k", lw=0.8, label="DRAM peak")
    ax[1].set_ylim(bottom=0)
    for a in ax:
        a.set_xscale("log", base=2)
        a.set_xlabel("KV length N_k")
        a.legend(fontsize=8)
    ax[0].set_yscale("log")
    ax[0].set_ylabel("predicted time (µs)")
    ax[1].set_ylabel("DRAM TB/s (predicted)")
    ax[0].set_title(f"FA2 forward, decode ({p['name']} profile)")
    ax[1].set_title("achieved DRAM bandwidth")
    save(fig, "decode.png")
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", metavar="FILE")
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args()
    text = render()
    if a.check:
        sys.exit(docgen.check(a.check, text, "experiments/teaching/build.sh"))
    with open(DOC, "w", encoding="utf-8") as out:
        out.write(text)
    print(f"wrote {os.path.relpath(DOC, ROOT)}", file=sys.stderr)
    if not a.no_plot:
        for path in draw():
            print(f"wrote {os.path.relpath(path, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
