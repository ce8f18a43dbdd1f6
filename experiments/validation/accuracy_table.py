#!/usr/bin/env python3
"""Print the accuracy tables for README.md / docs from the committed validation CSVs.

Usage:
  experiments/validation/accuracy_table.py [--csv CSV ...] [--set heldout|calibration|both]
  experiments/validation/accuracy_table.py --check FILE [--csv ...]
Default CSVs: experiments/validation/<gpu>/grid.csv for every GPU directory that has one (h200,
h100, ...; legacy-* directories only when named with --csv). Held-out kernels only by default.

Per GPU, one table: for each metric (kernel time, DRAM read + write, SM<->L2 bytes, L2 read
lookups, pass time vs the bench median) and algorithm (and all together): the number of kernels
(passes for pass time), the true median of predicted/measured, the mean |pred/meas - 1|, the
worst case and its kernel, the Pearson correlation of the logs; exclusions (no measurement,
measured 0) are counted in the line under the table. Same statistics as summarize.py.

--check FILE: exit 1 unless the block of FILE between the lines `<!-- accuracy:begin -->` and
`<!-- accuracy:end -->` equals what this prints (surrounding blank lines ignored), so a test keeps
the README's figures the script's.
"""
import argparse, glob, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from summarize import METRICS, fmt, points, read_rows, stats  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE))
import docgen  # noqa: E402

TABLE_METRICS = [("time", "kernel time"), ("dram", "DRAM read + write"), ("global", "SM↔L2 bytes"),
                 ("lookups", "L2 read lookups"), ("pass_time", "pass time vs bench median")]
ALGOS = ["fa2", "fa1", "standard", "fa3"]


def default_csvs():
    out = []
    for path in sorted(glob.glob(os.path.join(HERE, "*", "grid.csv"))):
        if not os.path.basename(os.path.dirname(path)).startswith("legacy-"):
            out.append(path)
    return out


def table(csv_path, which):
    rows = read_rows(csv_path)
    if not rows:
        return [f"{os.path.relpath(csv_path, ROOT)}: no rows"]
    gpu = rows[0]["gpu"].upper()
    data = rows[0].get("data", "grid")
    set_label = {"heldout": "held-out", "calibration": "calibration", "both": "calibration + held-out"}[which]
    nconf = len({r["config"] for r in rows if which == "both" or r["set"] == which})
    out = [f"**{gpu}**{' (LEGACY data, not the validation grid)' if data == 'legacy' else ''}: {set_label} "
           f"configurations ({nconf}), `{os.path.relpath(csv_path, ROOT)}`, profile "
           f"`{', '.join(sorted({r['profile'] for r in rows}))}`.", "",
           "| metric | algorithm | n | median pred/meas | mean \\|pred/meas − 1\\| | worst pred/meas | Pearson r (log) |",
           "|---|---|---|---|---|---|---|"]
    notes = []
    for metric, label in TABLE_METRICS:
        pts, excl = points(rows, metric)
        pts = [p for p in pts if which == "both" or p["set"] == which]
        excl_n = sum(1 for lab, _ in excl if any(r["config"] == lab.split()[0] and (which == "both" or r["set"] == which)
                                                    for r in rows))
        if excl_n:
            notes.append(f"{label}: {excl_n} excluded")
        for algo in ALGOS + ["all"]:
            sub = [p for p in pts if algo == "all" or p["algo"] == algo]
            s = stats(sub)
            if s is None:
                if algo != "all":
                    continue
                out.append(f"| {label} | {algo} | 0 | | | | |")
                continue
            w = s["worst"]
            r = fmt(s["r"], 3) + (f" (without {s['zero']} predicted 0)" if s["zero"] else "")
            out.append(f"| {label} | {algo} | {s['n']} | {fmt(s['median'])} | {fmt(s['mae'])} | "
                       f"{fmt(w['ratio'])} ({w['label']}) | {r} |")
    out.append("")
    out.append("Exclusions (no measurement, measured 0, or stale: measured with a kernel changed since, or, "
               "for SM↔L2 bytes and lookups only, with a kernel whose loads or stores changed since; "
               "summarize.py lists them): " +
               ("; ".join(notes) if notes else "none") + ".")
    return out


def render(csvs, which):
    out = [f"<!-- printed by experiments/validation/accuracy_table.py{' --set ' + which if which != 'heldout' else ''}; "
           "do not edit by hand -->", ""]
    for i, c in enumerate(csvs):
        if i:
            out.append("")
        out += table(c, which)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", nargs="+")
    ap.add_argument("--set", default="heldout", choices=["heldout", "calibration", "both"])
    ap.add_argument("--check", metavar="FILE")
    a = ap.parse_args()
    csvs = a.csv or default_csvs()
    if not csvs:
        sys.exit("accuracy_table: no experiments/validation/<gpu>/grid.csv yet (give --csv)")
    text = render(csvs, a.set)
    if not a.check:
        sys.stdout.write(text)
        return
    sys.exit(docgen.check(a.check, text, "experiments/validation/accuracy_table.py", "accuracy"))


if __name__ == "__main__":
    main()
