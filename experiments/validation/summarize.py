#!/usr/bin/env python3
"""Accuracy of iosim's predictions against the measurements of one GPU (build_csv.py's CSV).

Usage: experiments/validation/summarize.py CSV [--outdir DIR] [--no-plots]
  (default DIR: summary/ beside the CSV)

Writes, per metric (time, dram = DRAM read + write, dram_read, dram_write, global = SM<->L2
bytes, lookups = L2 read lookups, pass_time = the whole pass vs the bench median), DIR/<metric>.md:
per algorithm and pass, and per kernel, for the calibration set, the held-out set and both:
  n (kernels counted), mean |pred/meas - 1|, worst case (largest |pred/meas - 1|, which kernel),
  Pearson correlation of (log pred, log meas), the true median of pred/meas (mean of the two
  middle values for an even count), min and max of pred/meas;
DIR/README.md: the overview and every exclusion (kernels without a measurement, status != ok;
measured values <= 0, where the ratio is undefined; a kernel predicted at 0 counts
(ratio 0) but not in the correlation of logs, and the cell says so), and DIR/<metric>.png: predicted against
measured, log-log, one colour per algorithm, filled marks calibration / open marks held-out,
with the line y = x (python3-matplotlib; skipped with a note when it is missing: the numbers
do not depend on it). Every kernel with a measurement is counted; nothing else is dropped.
"""
import argparse, csv, math, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))

# metric -> (title, unit, pred(row), meas(row), per_pass)
def _f(r, k):
    v = r.get(k, "")
    return float(v) if v not in ("", None) else None


def _sum(a, b):
    return None if a is None or b is None else a + b


METRICS = {
    "time": ("Kernel time (ncu gpu__time_duration, flushed L2)", "s",
             lambda r: _f(r, "sim_time_s"), lambda r: _f(r, "meas_time_s"), False),
    "dram": ("DRAM bytes, read + write", "B",
             lambda r: _sum(_f(r, "sim_dram_read_bytes"), _f(r, "sim_dram_write_bytes")),
             lambda r: _sum(_f(r, "meas_dram_read_bytes"), _f(r, "meas_dram_write_bytes")), False),
    "dram_read": ("DRAM read bytes", "B", lambda r: _f(r, "sim_dram_read_bytes"),
                  lambda r: _f(r, "meas_dram_read_bytes"), False),
    "dram_write": ("DRAM write bytes", "B", lambda r: _f(r, "sim_dram_write_bytes"),
                   lambda r: _f(r, "meas_dram_write_bytes"), False),
    "global": ("SM<->L2 bytes (32-byte sectors of the trace's requests and the spills vs l1tex xbar read + write)", "B",
               lambda r: _sum(_f(r, "sim_read_bytes"), _f(r, "sim_write_bytes")),
               lambda r: _f(r, "meas_global_bytes"), False),
    "lookups": ("L2 read sector lookups (lts__t_sectors_srcunit_tex_op_read)", "sectors",
                lambda r: _f(r, "sim_lookups"), lambda r: _f(r, "meas_lookups"), False),
    "pass_time": ("Pass time (warm-L2 simulation vs bench median)", "s",
                  lambda r: _f(r, "sim_pass_time_s"), lambda r: _f(r, "meas_pass_time_s"), True),
}
ALGOS = ["fa2", "fa1", "standard", "fa3"]
SETS = ["calibration", "heldout"]
COLORS = {"fa2": "tab:blue", "fa1": "tab:orange", "standard": "tab:green", "fa3": "tab:red"}


def read_rows(path):
    return list(csv.DictReader(open(path)))


def median(v):
    s = sorted(v)
    n = len(s)
    if not n:
        return float("nan")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def pearson(x, y):
    n = len(x)
    if n < 3:
        return float("nan")
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def points(rows, metric):
    """(points, exclusions): points are dicts with pred, meas, ratio, label, algo, set, kernel."""
    _, _, pred, meas, per_pass = METRICS[metric]
    pts, excl = [], []
    seen = set()
    for r in rows:
        label = r["config"] if per_pass else f"{r['config']} {r['kernel']}"
        if per_pass:
            if r["config"] in seen:
                continue
            seen.add(r["config"])
        m, p = meas(r), pred(r)
        if per_pass:
            if r["status"].startswith("stale"):
                excl.append((label, r["status"]))
                continue
            if m is None:
                excl.append((label, "no bench median"))
                continue
        elif r["status"] != "ok":
            excl.append((label, f"no measurement ({r['status']})"))
            continue
        elif metric in ("global", "lookups") and r.get("stale_counters"):
            excl.append((label, f"counters stale: {r['stale_counters']}"))
            continue
        if m is None or p is None:
            excl.append((label, "value missing"))
            continue
        if m <= 0:
            excl.append((label, f"measured {m:g} (predicted {p:g}): ratio undefined"))
            continue
        pts.append({"pred": p, "meas": m, "ratio": p / m, "label": label, "algo": r["algo"], "pass": r["pass"],
                    "set": r["set"], "kernel": "pass" if per_pass else r["kernel"]})
    return pts, excl


def stats(pts):
    if not pts:
        return None
    ratios = [p["ratio"] for p in pts]
    worst = max(pts, key=lambda p: abs(p["ratio"] - 1))
    return {
        "n": len(pts),
        "mae": sum(abs(x - 1) for x in ratios) / len(ratios),
        "worst": worst,
        # log needs pred > 0: a kernel predicted at 0 counts everywhere but here (stated in the cell)
        "r": pearson([math.log(p["pred"]) for p in pts if p["pred"] > 0], [math.log(p["meas"]) for p in pts if p["pred"] > 0]),
        "zero": sum(p["pred"] <= 0 for p in pts),
        "median": median(ratios),
        "min": min(ratios),
        "max": max(ratios),
    }


def fmt(x, nd=2):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def stat_cells(s):
    if s is None:
        return "0 | | | | | |"
    w = s["worst"]
    r = fmt(s["r"], 3) + (f" (without {s['zero']} predicted 0)" if s["zero"] else "")
    return (f"{s['n']} | {fmt(s['mae'])} | {fmt(w['ratio'])} ({w['label']}) | {r} | "
            f"{fmt(s['median'])} | {fmt(s['min'])}–{fmt(s['max'])} |")


HEAD = ("| n | mean \\|pred/meas − 1\\| | worst pred/meas (kernel) | Pearson r (log) | median pred/meas | "
        "range pred/meas |")


def metric_markdown(gpu, metric, pts, excl, source):
    title, unit = METRICS[metric][0], METRICS[metric][1]
    out = [f"# {gpu.upper()}: {title}", "", source, "",
           f"Predicted / measured ({unit}); {len(pts)} counted, {len(excl)} excluded (README.md lists them).", ""]
    p = out.append
    p("## By algorithm and pass")
    p("")
    p("| algorithm | pass | set " + HEAD)
    p("|---|---|---" + "|---" * 6 + "|")
    for algo in ALGOS + ["all"]:
        for pas in (["fwd", "bwd", "both"] if algo != "all" else ["both"]):
            for st in SETS + ["both"]:
                sub = [q for q in pts if (algo == "all" or q["algo"] == algo) and (pas == "both" or q["pass"] == pas)
                       and (st == "both" or q["set"] == st)]
                if not sub and algo != "all":
                    continue
                p(f"| {algo} | {pas} | {st} | " + stat_cells(stats(sub)))
    if not METRICS[metric][4]:
        p("")
        p("## By kernel")
        p("")
        p("| kernel | set " + HEAD)
        p("|---|---" + "|---" * 6 + "|")
        for k in sorted({q["kernel"] for q in pts}):
            for st in SETS + ["both"]:
                sub = [q for q in pts if q["kernel"] == k and (st == "both" or q["set"] == st)]
                if sub:
                    p(f"| {k} | {st} | " + stat_cells(stats(sub)))
    return "\n".join(out) + "\n"


def plot(gpu, metric, pts, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    title, unit = METRICS[metric][0], METRICS[metric][1]
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    for algo in ALGOS:
        for st, filled in (("calibration", True), ("heldout", False)):
            sub = [q for q in pts if q["algo"] == algo and q["set"] == st and q["pred"] > 0]
            if not sub:
                continue
            ax.scatter([q["meas"] for q in sub], [q["pred"] for q in sub], s=22, marker="o",
                       facecolors=COLORS[algo] if filled else "none", edgecolors=COLORS[algo],
                       label=f"{algo}, {'calibration' if filled else 'held-out'}")
    zero = sum(q["pred"] <= 0 for q in pts)
    if zero:
        ax.text(0.98, 0.02, f"{zero} kernel(s) predicted 0 not drawn", transform=ax.transAxes, ha="right", fontsize=7)
    pts = [q for q in pts if q["pred"] > 0]
    if pts:
        lo = min(min(q["meas"], q["pred"]) for q in pts) / 1.5
        hi = max(max(q["meas"], q["pred"]) for q in pts) * 1.5
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="y = x")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"measured ({unit})")
    ax.set_ylabel(f"predicted ({unit})")
    ax.set_title(f"{gpu.upper()}: {title}", fontsize=9)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--outdir")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--plots-only", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    rows = read_rows(a.csv)
    if not rows:
        sys.exit(f"{a.csv}: no rows")
    gpu = rows[0]["gpu"]
    data = rows[0].get("data", "grid")
    outdir = a.outdir or os.path.join(os.path.dirname(os.path.abspath(a.csv)), "summary")
    os.makedirs(outdir, exist_ok=True)
    if a.plots_only:
        for metric in METRICS:
            plot(gpu, metric, points(rows, metric)[0], os.path.join(outdir, metric + ".png"))
        return
    profiles = sorted({r["profile"] for r in rows})
    source = (f"Source: `{os.path.relpath(a.csv, os.path.dirname(outdir))}` ({len(rows)} kernels, "
              f"{len({r['config'] for r in rows})} configurations; data: {data}; profile: {', '.join(profiles)}); "
              "written by experiments/validation/summarize.py.")
    if data == "legacy":
        source += (" LEGACY DATA: the 29 configurations of experiments/calibrate_configs.txt and "
                   "validate_configs.txt measured with validate_counters.sh, not the validation grid.")
    overview = [f"# {gpu.upper()}: accuracy of iosim's predictions", "", source, "",
                "| metric | set " + HEAD, "|---|---" + "|---" * 6 + "|"]
    excl_md = ["", "## Exclusions", ""]
    for metric in METRICS:
        pts, excl = points(rows, metric)
        with open(os.path.join(outdir, metric + ".md"), "w") as f:
            f.write(metric_markdown(gpu, metric, pts, excl, source))
        for st in SETS + ["both"]:
            sub = [q for q in pts if st == "both" or q["set"] == st]
            overview.append(f"| [{metric}]({metric}.md) | {st} | " + stat_cells(stats(sub)))
        excl_md.append(f"- **{metric}**: {len(excl)} excluded" + (":" if excl else "."))
        for label, why in excl:
            excl_md.append(f"  - {label}: {why}")
    plots_note = []
    if not a.no_plots:
        if have_matplotlib():
            for metric in METRICS:
                plot(gpu, metric, points(rows, metric)[0], os.path.join(outdir, metric + ".png"))
        elif os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
                and subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode == 0:
            subprocess.run(["/usr/bin/python3", os.path.abspath(__file__), a.csv, "--outdir", outdir, "--plots-only"],
                           check=True)
        else:
            plots_note = ["", "(No plots: python3-matplotlib is not installed; scripts/setup.sh installs it.)"]
            print("summarize: no matplotlib, plots skipped", file=sys.stderr)
    if not plots_note and not a.no_plots:
        overview += ["", "Plots (predicted against measured, log-log, y = x): " +
                     ", ".join(f"[{m}]({m}.png)" for m in METRICS) + "."]
    with open(os.path.join(outdir, "README.md"), "w") as f:
        f.write("\n".join(overview + plots_note + excl_md) + "\n")
    print(f"wrote {outdir}: README.md, {len(METRICS)} metric tables" + ("" if plots_note or a.no_plots else " and plots"))


if __name__ == "__main__":
    main()
