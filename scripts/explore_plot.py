#!/usr/bin/env python3
"""Plot `iosim explore --format csv`: predicted time, DRAM and SM<->L2 bytes against the tile.

Usage: scripts/explore_plot.py CSV OUT.png [--title TEXT]
(`iosim explore ... --plot OUT.png` runs it.) Tiles in size order along x; top: predicted time,
compiled tiles (iosim-kernels' full menu) dark, the recommended one marked; bottom: DRAM read +
write and SM<->L2 bytes, log scale. Needs python3-matplotlib.
"""
import argparse, csv, sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("explore_plot: python3-matplotlib is missing (apt-get install python3-matplotlib)")
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        sys.exit(f"explore_plot: {a.csv} has no rows")
    standard = all(r["block_m"] == "" for r in rows)
    key = (lambda r: (int(r["gemm_m"]), int(r["gemm_n"]), int(r["gemm_k"]))) if standard else \
          (lambda r: (int(r["block_m"]), int(r["block_n"])))
    rows.sort(key=key)
    labels = ["x".join(str(v) for v in key(r)) for r in rows]
    x = range(len(rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 0.45 * len(rows)), 7), sharex=True)
    times = [float(r["time_s"]) * 1e6 for r in rows]
    colors = ["tab:blue" if r["compiled"] == "1" else "lightsteelblue" for r in rows]
    top.bar(x, times, color=colors)
    for i, r in enumerate(rows):
        if r["recommended"] == "1":
            top.annotate("recommended", (i, times[i]), xytext=(0, 6), textcoords="offset points", ha="center",
                         fontsize=8, color="tab:red")
            top.bar([i], [times[i]], color="none", edgecolor="tab:red", linewidth=2)
    top.set_ylabel("predicted time (us)")
    top.set_title(a.title or "iosim explore", fontsize=10)
    top.legend(handles=[plt.Rectangle((0, 0), 1, 1, color="tab:blue"), plt.Rectangle((0, 0), 1, 1, color="lightsteelblue")],
               labels=["compiled (full menu)", "not compiled"], fontsize=8)
    w = 0.4
    bottom.bar([i - w / 2 for i in x], [int(r["dram_bytes"]) / 1e6 for r in rows], w, label="DRAM read + write")
    bottom.bar([i + w / 2 for i in x], [int(r["l2_bytes"]) / 1e6 for r in rows], w, label="SM<->L2 read + write")
    bottom.set_yscale("log")
    low = min(v for r in rows for v in (int(r["dram_bytes"]), int(r["l2_bytes"])) if v > 0) / 1e6
    bottom.set_ylim(bottom=low / 3)
    bottom.set_ylabel("MB (predicted)")
    bottom.legend(fontsize=8)
    bottom.set_xticks(list(x))
    bottom.set_xticklabels(labels, rotation=60, fontsize=8)
    bottom.set_xlabel("GEMM tile m x n x k" if standard else "B_r x B_c")
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
