#!/usr/bin/env python3
"""README.md's block and hbm.png for the HBM-traffic article's example, from the committed CSVs.

Usage: python3 experiments/hbm_article/report.py [--write | --check README.md] [--no-plot]
Reads results.csv (run.py: iosim), and when measured-source.txt names a raw folder, measured.csv
(experiments/validation/build_csv.py on that folder: Nsight Compute beside iosim) and the folder's
device-name.txt. Prints the block (stdout); --write puts it between README.md's
`<!-- hbm:begin -->` / `<!-- hbm:end -->` and draws hbm.png; --check FILE exits 1, with a diff,
unless FILE's block is what this prints (a ctest test). Drawing needs python3-matplotlib.
"""
import argparse
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import docgen  # noqa: E402

README = os.path.join(HERE, "README.md")
BLOCK = "hbm"
E = 2  # fp16
# The article (/work/shared/seeds/hbm-traffic-article.txt): its printed figures, and the line items
# of its standard-attention count (elements of one head, times E) to evaluate its arithmetic exactly.
ARTICLE = {"std_head_mb": 139, "std_layer_gb": 4.4, "fused_head_mb": 4.2, "fused_layer_mb": 134,
           "ncu_read_mb": 134, "ncu_write_mb": 33, "reduction": 33, "ai_std": 2.8, "ai_fused": 89}
HEADS = 32
N, D = 4096, 128
ARTICLE_STD_LINES = [  # (the article's line, elements per head)
    ("Q, K, V load", 3 * N * D), ("S = QKᵀ store", N * N), ("S load for softmax", N * N), ("P store", N * N),
    ("P load, V load", N * N + N * D), ("O store", N * D)]
ARTICLE_FUSED_LINES = [("Q, K, V load", 3 * N * D), ("O store", N * D)]
MAIN_FA2 = "fa2-fwd-d128-n4096-bh32-128x64"  # FlashAttention-2's own d128 tile: the article's "fused"
STD = "std-fwd-d128-n4096-bh32"
# iosim beside the measurement: the measuring GPU's profile (the H100's until there is a measurement),
# and the article's GPU, an A100 with 40 MB of L2 and 80 GB of HBM2e.
GPU_PROFILES = {"h100": "h100-sxm5-80gb", "h200": "h200-sxm-141gb"}
PROFILE_ARTICLE = "a100-sxm4-80gb"


def read(name):
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def n(r, k):
    return float(r[k]) if r.get(k, "") not in ("", None) else None


def mb(x, digits=1):
    return "–" if x is None else f"{x / 1e6:,.{digits}f}"


def reads_vs_qkv(reads, qkv):
    """How DRAM reads compare with Q + K + V read once (to the printed 0.1 MB)."""
    extra = reads - qkv
    if abs(extra) < 0.05e6:
        return "Q + K + V exactly"
    if extra > 0:
        return f"Q + K + V ({mb(qkv)} MB) and {mb(extra)} MB of K and V lines read again after they left the L2"
    return f"{mb(-extra)} MB less than Q + K + V ({mb(qkv)} MB)"


class Sim:
    """results.csv: one row per (profile, config, kernel | pass)."""

    def __init__(self, rows):
        self.rows = rows

    def get(self, profile, config, kernel="pass"):
        return next(r for r in self.rows if (r["profile"], r["config"], r["kernel"]) == (profile, config, kernel))

    def kernels(self, profile, config):
        return [r for r in self.rows if (r["profile"], r["config"]) == (profile, config) and r["kernel"] != "pass"]


def glob_bytes(r, *tensors, rw=("read", "write")):
    return sum(n(r, f"global_{t}_{x}_bytes") for t in tensors for x in rw)


def dram(r):
    return n(r, "dram_read_bytes") + n(r, "dram_write_bytes")


class Measured:
    """measured.csv (build_csv.py's columns, one row per kernel) and the GPU that measured it."""

    def __init__(self):
        src = os.path.join(HERE, "measured-source.txt")
        self.rows, self.device, self.source, self.profile = None, None, None, GPU_PROFILES["h100"]
        if not os.path.exists(src):
            return
        self.source = open(src).read().strip()
        self.device = open(os.path.join(ROOT, self.source, "device-name.txt")).read().split(",")[0].strip()
        rows = read("measured.csv") or []
        self.rows = [r for r in rows if r["status"] == "ok"]
        if rows:
            self.profile = GPU_PROFILES[rows[0]["gpu"]]

    def total(self, config, *cols):
        ks = [r for r in self.rows or [] if r["config"] == config]
        if not ks:
            return None
        return sum(float(r[c]) for r in ks for c in cols)

    def dram(self, config, which=("read", "write")):
        return self.total(config, *[f"meas_dram_{w}_bytes" for w in which])

    def global_(self, config):
        return self.total(config, "meas_global_bytes")


def comparison(sim, meas):
    std, fa2 = sim.get(meas.profile, STD), sim.get(meas.profile, MAIN_FA2)
    std_a, fa2_a = sim.get(PROFILE_ARTICLE, STD), sim.get(PROFILE_ARTICLE, MAIN_FA2)
    glob = lambda r: n(r, "global_read_bytes") + n(r, "global_write_bytes")  # noqa: E731
    art_std = sum(e for _, e in ARTICLE_STD_LINES) * E
    art_fused = sum(e for _, e in ARTICLE_FUSED_LINES) * E
    m = meas.rows is not None
    rows = [
        ("standard, one head (MB)", f"~{ARTICLE['std_head_mb']}", mb(art_std), mb(glob(std) / HEADS),
         mb(dram(std) / HEADS), mb(dram(std_a) / HEADS), mb(meas.global_(STD) and meas.global_(STD) / HEADS),
         mb(meas.dram(STD) and meas.dram(STD) / HEADS)),
        ("standard, 32 heads (GB)", f"~{ARTICLE['std_layer_gb']}", mb(art_std * HEADS / 1e3, 2),
         mb(glob(std) / 1e3, 2), mb(dram(std) / 1e3, 2), mb(dram(std_a) / 1e3, 2),
         mb(meas.global_(STD) and meas.global_(STD) / 1e3, 2), mb(meas.dram(STD) and meas.dram(STD) / 1e3, 2)),
        ("fused, one head (MB)", f"~{ARTICLE['fused_head_mb']}", mb(art_fused, 2), mb(glob(fa2) / HEADS, 2),
         mb(dram(fa2) / HEADS, 2), mb(dram(fa2_a) / HEADS, 2),
         mb(meas.global_(MAIN_FA2) and meas.global_(MAIN_FA2) / HEADS, 2),
         mb(meas.dram(MAIN_FA2) and meas.dram(MAIN_FA2) / HEADS, 2)),
        ("fused, 32 heads (MB)", f"~{ARTICLE['fused_layer_mb']}", mb(art_fused * HEADS), mb(glob(fa2)), mb(dram(fa2)),
         mb(dram(fa2_a)), mb(meas.global_(MAIN_FA2)), mb(meas.dram(MAIN_FA2))),
        ("fused, 32 heads, read (MB)", f"~{ARTICLE['ncu_read_mb']} (its Nsight Compute reading)",
         mb(3 * N * D * E * HEADS), mb(n(fa2, "global_read_bytes")), mb(n(fa2, "dram_read_bytes")),
         mb(n(fa2_a, "dram_read_bytes")), mb(meas.total(MAIN_FA2, "meas_read_bytes")),
         mb(meas.dram(MAIN_FA2, ("read",)))),
        ("fused, 32 heads, written (MB)", f"~{ARTICLE['ncu_write_mb']} (its Nsight Compute reading)",
         mb(N * D * E * HEADS), mb(n(fa2, "global_write_bytes")), mb(n(fa2, "dram_write_bytes")),
         mb(n(fa2_a, "dram_write_bytes")), mb(meas.total(MAIN_FA2, "meas_write_bytes")),
         mb(meas.dram(MAIN_FA2, ("write",)))),
        ("standard / fused", f"{ARTICLE['reduction']}x", f"{art_std / art_fused:.1f}x", f"{glob(std) / glob(fa2):.1f}x",
         f"{dram(std) / dram(fa2):.1f}x", f"{dram(std_a) / dram(fa2_a):.1f}x",
         f"{meas.global_(STD) / meas.global_(MAIN_FA2):.1f}x" if m and meas.global_(STD) and meas.global_(MAIN_FA2) else "–",
         f"{meas.dram(STD) / meas.dram(MAIN_FA2):.1f}x" if m and meas.dram(STD) and meas.dram(MAIN_FA2) else "–"),
        ("FLOP per byte, standard", f"{ARTICLE['ai_std']}", f"{n(std, 'flops') / (art_std * HEADS):.1f}",
         f"{n(std, 'flops') / glob(std):.1f}", f"{n(std, 'flops') / dram(std):.1f}", f"{n(std, 'flops') / dram(std_a):.1f}",
         "–", f"{n(std, 'flops') / meas.dram(STD):.1f}" if m and meas.dram(STD) else "–"),
        ("FLOP per byte, fused", f"{ARTICLE['ai_fused']}", f"{n(fa2, 'flops') / (art_fused * HEADS):,.0f}",
         f"{n(fa2, 'flops') / glob(fa2):.0f}", f"{n(fa2, 'flops') / dram(fa2):,.0f}",
         f"{n(fa2, 'flops') / dram(fa2_a):,.0f}", "–",
         f"{n(fa2, 'flops') / meas.dram(MAIN_FA2):,.0f}" if m and meas.dram(MAIN_FA2) else "–"),
    ]
    measured = f"measured, {meas.device}" if m else "measured (none yet)"
    header = ["<quantity", "<article", "article's arithmetic, exact", "iosim SRAM↔global",
              f"iosim DRAM, {meas.profile}", f"iosim DRAM, {PROFILE_ARTICLE}",
              f"{measured}: SM↔L2", f"{measured}: DRAM"]
    return docgen.md_table(header, rows)


def standard_lines(sim, meas):
    """The article's standard-attention lines against iosim's count, per head."""
    std = sim.get(meas.profile, STD)
    per_head = lambda *t, rw=("read", "write"): glob_bytes(std, *t, rw=rw) / HEADS  # noqa: E731
    rows = [
        (ARTICLE_STD_LINES[0][0], mb(ARTICLE_STD_LINES[0][1] * E, 2), "Q, K read by S = QKᵀ; V read by O = PV",
         mb(per_head("Q", "K", "V"), 2)),
        (ARTICLE_STD_LINES[1][0], mb(ARTICLE_STD_LINES[1][1] * E, 2), "S written", mb(per_head("S", rw=("write",)), 2)),
        (ARTICLE_STD_LINES[2][0], mb(ARTICLE_STD_LINES[2][1] * E, 2), "S read by the softmax",
         mb(per_head("S", rw=("read",)), 2)),
        (ARTICLE_STD_LINES[3][0], mb(ARTICLE_STD_LINES[3][1] * E, 2), "P written", mb(per_head("P", rw=("write",)), 2)),
        (ARTICLE_STD_LINES[4][0], mb(ARTICLE_STD_LINES[4][1] * E, 2), "P read by O = PV (V: first line)",
         mb(per_head("P", rw=("read",)), 2)),
        (ARTICLE_STD_LINES[5][0], mb(ARTICLE_STD_LINES[5][1] * E, 2), "O written", mb(per_head("O"), 2)),
        ("**total**", mb(sum(e for _, e in ARTICLE_STD_LINES) * E, 2), "",
         mb((n(std, "global_read_bytes") + n(std, "global_write_bytes")) / HEADS, 2)),
    ]
    return docgen.md_table(["<article's line", "article MB (exact)", "<iosim's tensors", "iosim SRAM↔global MB"], rows)


def kernel_lines(sim, meas):
    rows = []
    for config in (STD, MAIN_FA2, "fa2-fwd-d128-n4096-bh32-128x128"):
        for k in sim.kernels(meas.profile, config):
            mk = [r for r in meas.rows or [] if r["config"] == config and r["kernel"] == k["kernel"]]
            mr = mk[0] if mk else {}
            rows.append([f"`{config}`", k["kernel"], f"{k['block_m']} x {k['block_n']}" if k["algorithm"] != "standard"
                         else k["gemm"], mb(n(k, "global_read_bytes")), mb(n(k, "global_write_bytes")),
                         mb(n(k, "dram_read_bytes")), mb(n(k, "dram_write_bytes")), mb(n(k, "dram_dirty_left_bytes")),
                         mb(n(mr, "meas_read_bytes")) if mr else "–", mb(n(mr, "meas_write_bytes")) if mr else "–",
                         mb(n(mr, "meas_dram_read_bytes")) if mr else "–",
                         mb(n(mr, "meas_dram_write_bytes")) if mr else "–",
                         f"{n(k, 'time_s') * 1e3:.3f}", f"{n(mr, 'meas_time_s') * 1e3:.3f}" if mr else "–"])
    return docgen.md_table(["<configuration", "<kernel", "tile", "iosim read MB", "iosim write MB", "iosim DRAM read MB",
                     "iosim DRAM write MB", "iosim dirty in L2 at the end MB", "measured SM↔L2 read MB",
                     "measured write MB", "measured DRAM read MB", "measured DRAM write MB", "iosim ms (cold L2)",
                     "measured ms (ncu)"], rows)


def gaps(sim, meas):
    """Every gap between the article and iosim, with the numbers that account for it (H100 profile)."""
    std, fa2 = sim.get(meas.profile, STD), sim.get(meas.profile, MAIN_FA2)
    gemm_m, gemm_n, _ = (int(x) for x in std["gemm"].split("x"))
    qkv_once = 3 * N * D * E * HEADS
    qkv_std = glob_bytes(std, "Q", "K", "V")
    art_std = sum(e for _, e in ARTICLE_STD_LINES) * E * HEADS
    v_twice = N * D * E * HEADS
    dirty_std = n(std, "dram_dirty_left_bytes")
    rest = art_std - v_twice - dirty_std - dram(std)
    glob_std = n(std, "global_read_bytes") + n(std, "global_write_bytes")
    art_fused = sum(e for _, e in ARTICLE_FUSED_LINES) * E * HEADS
    if glob_std - art_std != (qkv_std - qkv_once) - v_twice:
        sys.exit("report.py: iosim's standard-attention count differs from the article's by more than the "
                 "GEMM re-reads of Q, K, V and the article's second count of V; explain the new gap")
    t_r = N // int(fa2["block_m"])
    kv_fa2 = glob_bytes(fa2, "K", "V")
    o_l = glob_bytes(fa2, "O", "L")
    out = [
        f"- **Standard attention, SRAM↔global.** The article loads Q, K and V once ({mb(qkv_once)} MB for 32 "
        f"heads). A tiled GEMM loads a Q tile for every column block of S (⌈N/{gemm_n}⌉ = {-(-N // gemm_n)} "
        f"times), K for every row block (⌈N/{gemm_m}⌉ = {-(-N // gemm_m)}) and V for every row block of O: "
        f"{mb(qkv_std)} MB. iosim's count exceeds the article's by {mb(glob_std - art_std)} MB: those re-reads "
        f"({mb(qkv_std - qkv_once)} MB) less V's second count in the article (next point). The N × N "
        f"matrices agree exactly.",
        f"- **The article counts V twice**: once in \"Q, K, V load\" and again in \"P load, V load\" "
        f"({mb(v_twice)} MB for 32 heads).",
        f"- **Standard attention, DRAM.** The L2 serves the GEMMs' re-reads of Q, K and V, so DRAM sees them "
        f"about once, and the article's per-tensor count is nearly right. iosim's {mb(dram(std))} MB is the "
        f"article's exact {mb(art_std)} MB, minus V's second count ({mb(v_twice)}), minus the bytes still dirty "
        f"in L2 when each kernel ends ({mb(dirty_std)} MB over the three kernels: Nsight Compute does not count "
        f"them as that kernel's DRAM writes, and iosim models this with the profile's measured `l2.dirty_limit`), "
        f"{'plus' if rest < 0 else 'minus'} {mb(abs(rest))} MB of re-reads that miss in L2.",
        f"- **Fused, SRAM↔global.** The article's 4.2 MB per head is Q, K, V read once and O written once: the "
        f"DRAM-level ideal, not what the loop nest moves. FA2 reads K_j and V_j once per query block, T_r = "
        f"N/B_r = {t_r} times: {mb(kv_fa2)} MB of K and V for 32 heads, {mb(n(fa2, 'global_read_bytes') + n(fa2, 'global_write_bytes'))} "
        f"MB in all ({(n(fa2, 'global_read_bytes') + n(fa2, 'global_write_bytes')) / (4 * N * D * E * HEADS):.0f}x the "
        f"article's). B_c does not enter: the 128 x 128 tile below moves the same bytes.",
        f"- **Fused, DRAM.** All query-block CTAs of a head run side by side, so K_j and V_j come from DRAM once "
        f"and from L2 the other T_r − 1 times: iosim's DRAM reads are {mb(n(fa2, 'dram_read_bytes'))} MB, "
        f"{reads_vs_qkv(n(fa2, 'dram_read_bytes'), qkv_once)}. Its writes are O and the log-sum-exp L ({mb(o_l)} MB, which FlashAttention-2 "
        f"also writes) minus {mb(n(fa2, 'dram_dirty_left_bytes'))} MB still dirty in L2 at the end: "
        f"{mb(n(fa2, 'dram_write_bytes'))} MB.",
        f"- **The article's Nsight Compute reading, ~{ARTICLE['ncu_read_mb']} MB read and ~{ARTICLE['ncu_write_mb']} MB "
        f"written**, does not match its own count: ~{ARTICLE['ncu_read_mb']} MB is its total of reads and writes "
        f"({ARTICLE['fused_layer_mb']} MB), and the reads in that count are Q + K + V = {mb(qkv_once)} MB. The "
        f"reads exceed that only when K or V miss in L2. ~{ARTICLE['ncu_write_mb']} MB is O; the counter can "
        f"show less, for the dirty lines left in L2.",
        f"- **The article's intensities** (2.8 and 89 FLOP per byte) do not follow from its own byte counts. "
        f"{n(std, 'flops') / 1e9:.1f} GFLOP (4·N²·d·H, the two products) over its {mb(art_std / 1e3, 2)} GB "
        f"is {n(std, 'flops') / art_std:.0f} FLOP per byte, and over its fused {mb(art_fused)} MB is "
        f"{n(fa2, 'flops') / art_fused:,.0f}.",
    ]
    if meas.rows:
        for config, label in ((STD, "standard"), (MAIN_FA2, "fused")):
            s = sim.get(meas.profile, config)
            mg, md = meas.global_(config), meas.dram(config)
            if mg is None or md is None:
                out.append(f"- **Measured, {label}**: no measurement of `{config}` in the raw data.")
                continue
            written, dram_w = meas.total(config, "meas_write_bytes"), meas.dram(config, ("write",))
            left = (f"{mb(written - dram_w)} MB of the {mb(written)} MB written to global memory were still dirty "
                    f"in L2 at the kernels' ends and not counted as DRAM writes" if written >= dram_w else
                    f"DRAM writes exceed the {mb(written)} MB written to global memory by {mb(dram_w - written)} MB")
            out.append(
                f"- **Measured, {label}** ({meas.device}): SM↔L2 {mb(mg)} MB is "
                f"{mg / (n(s, 'global_read_bytes') + n(s, 'global_write_bytes')):.3f}x iosim's count; DRAM {mb(md)} MB "
                f"is {md / dram(s):.3f}x iosim's prediction (reads {meas.dram(config, ('read',)) / n(s, 'dram_read_bytes'):.3f}x, "
                f"writes {dram_w / max(1.0, n(s, 'dram_write_bytes')):.3f}x). {left} (iosim: "
                f"{mb(n(s, 'dram_dirty_left_bytes'))} MB left dirty).")
    return out


def render():
    sim = Sim(read("results.csv"))
    meas = Measured()
    src = (f"Measured on the **{meas.device}** (`{meas.source}`: `experiments/hbm_article/measure.sh`, Nsight Compute "
           f"with a flushed L2 per kernel; joined by `build_csv.py` into `measured.csv`)." if meas.rows is not None else
           "**Not measured yet**: the measured columns are empty until `measure.sh` has run on a GPU (see above).")
    out = ["<!-- printed by experiments/hbm_article/report.py from results.csv (and measured.csv); do not edit by hand -->",
           "", src, "",
           f"iosim: profiles `{meas.profile}` ({'the GPU that measured' if meas.rows is not None else 'the H100, the GPU measure.sh is meant for'}) and `{PROFILE_ARTICLE}` (the article's A100), "
           f"L2 flushed before each kernel. \"Fused\" is `{MAIN_FA2}` (FlashAttention-2, tile "
           f"{sim.get(meas.profile, MAIN_FA2)['block_m']} x {sim.get(meas.profile, MAIN_FA2)['block_n']}). MB = 1e6 B.",
           ""]
    out += comparison(sim, meas)
    out += ["", "The article's standard-attention count, line by line, per head (iosim: SRAM↔global, the same "
                "on every profile):", ""]
    out += standard_lines(sim, meas)
    out += ["", f"Per kernel ({meas.profile} profile, 32 heads):", ""]
    out += kernel_lines(sim, meas)
    out += ["", "Every gap:", ""]
    out += gaps(sim, meas)
    return "\n".join(out) + "\n"


def draw():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim, meas = Sim(read("results.csv")), Measured()
    art = {"standard": sum(e for _, e in ARTICLE_STD_LINES) * E * HEADS,
           "fused": sum(e for _, e in ARTICLE_FUSED_LINES) * E * HEADS}
    configs = {"standard": STD, "fused": MAIN_FA2}
    series = [("article (exact arithmetic)", lambda a, c: art[a]),
              ("iosim SRAM↔global", lambda a, c: n(sim.get(meas.profile, c), "global_read_bytes")
               + n(sim.get(meas.profile, c), "global_write_bytes")),
              (f"iosim DRAM, {meas.profile}", lambda a, c: dram(sim.get(meas.profile, c))),
              (f"iosim DRAM, {PROFILE_ARTICLE}", lambda a, c: dram(sim.get(PROFILE_ARTICLE, c)))]
    if meas.rows:
        series += [(f"measured SM↔L2, {meas.device}", lambda a, c: meas.global_(c) or 0),
                   (f"measured DRAM, {meas.device}", lambda a, c: meas.dram(c) or 0)]
    fig, ax = plt.subplots(figsize=(9, 4.8))
    width = 0.8 / len(series)
    for k, (label, value) in enumerate(series):
        xs = [x + (k - (len(series) - 1) / 2) * width for x in range(len(configs))]
        ys = [value(a, c) / 1e6 for a, c in configs.items()]
        ax.bar(xs, ys, width, label=label)
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:,.0f}", (x, y), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(configs)), ["standard attention", "fused (FA2, 128 x 64)"])
    ax.set_yscale("log")
    ax.set_ylabel("MB per layer (32 heads, N=4096, d=128, fp16)")
    ax.set_title("The HBM-traffic article's example: bytes per layer")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(HERE, "hbm.png")
    fig.savefig(path, dpi=100)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="put the block into README.md and draw hbm.png")
    ap.add_argument("--check", metavar="FILE")
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args()
    text = render()
    if a.check:
        sys.exit(docgen.check(a.check, text, "experiments/hbm_article/report.py", BLOCK))
    if not a.write:
        sys.stdout.write(text)
        return
    with open(README, encoding="utf-8") as f:
        readme = f.read()
    with open(README, "w", encoding="utf-8") as f:
        f.write(docgen.replace_block(readme, BLOCK, text))
    print(f"wrote {os.path.relpath(README, ROOT)}'s {BLOCK} block", file=sys.stderr)
    if not a.no_plot:
        print(f"wrote {os.path.relpath(draw(), ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
