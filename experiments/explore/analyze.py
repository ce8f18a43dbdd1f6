#!/usr/bin/env python3
"""Compare `iosim explore`'s frozen predictions with the tiles' measured times (validate.sh).

Usage: experiments/explore/analyze.py MEASURED_DIR [--predictions DIR] [--out DIR]
  MEASURED_DIR: validate.sh's OUTDIR (the parts' archives unpacked into one folder).
  --predictions: predict.sh's predictions/<profile> [the one named in MEASURED_DIR/device-part*.txt]
  --out: where the results go [experiments/explore/results/<gpu>, gpu from device-name.txt]

Per shape (shapes.txt): the Spearman rank correlation of predicted against measured time over the
tiles with a measurement (ties get their average rank), and whether the recommended tile (explore's
rank 1) measures within 5% of the best measured tile. The issue's bar: rho >= 0.9 per shape and the
recommended tile within 5%. Writes OUT/validation.csv (one row per shape) and OUT/README.md (the
table, the GPU, the dates and commands of the measurement and of the predictions, and every tile
without a measurement).
"""
import argparse, csv, glob, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RHO_MIN, WITHIN = 0.9, 0.05


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    if len(x) < 3:
        return float("nan")
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")


def shapes(name="shapes.txt"):
    out = []
    for line in open(os.path.join(HERE, name)):
        line = line.strip()
        if line and not line.startswith("#"):
            name, flags = line.split(";", 1)
            out.append((name.strip(), flags.strip()))
    return out


def device_lines(measured, key):
    vals = []
    for path in sorted(glob.glob(os.path.join(measured, "device-part*.txt"))):
        for line in open(path):
            if line.startswith(key + ":"):
                vals.append(line.split(":", 1)[1].strip())
    return vals


def median_ms(path):
    try:
        return float(json.load(open(path))["median_ms"])
    except (OSError, ValueError, KeyError):
        return None


def analyze_shape(name, flags, pred_dir, measured):
    path = os.path.join(pred_dir, name + ".csv")
    if not os.path.exists(path):
        return None, [f"{name}: no predictions {path}"]
    rows = list(csv.DictReader(open(path)))
    tiles, pred, meas, missing = [], [], [], []
    rec = None
    for r in rows:
        tile = f"{r['block_m']}x{r['block_n']}"
        if r["recommended"] == "1":
            rec = tile
        m = median_ms(os.path.join(measured, name, tile + ".bench.json"))
        if m is None:
            missing.append(f"{name} {tile}")
            continue
        tiles.append(tile)
        pred.append(float(r["time_s"]) * 1e3)
        meas.append(m)
    out = {"shape": name, "flags": flags, "tiles_predicted": len(rows), "tiles_measured": len(tiles),
           "spearman": spearman(pred, meas), "recommended": rec}
    if meas:
        b = min(range(len(meas)), key=lambda i: meas[i])
        out.update(best_measured=tiles[b], best_measured_ms=meas[b])
        if rec in tiles:
            rm = meas[tiles.index(rec)]
            out.update(recommended_predicted_ms=pred[tiles.index(rec)], recommended_measured_ms=rm,
                       recommended_vs_best=rm / meas[b] - 1)
    return out, missing


def fmt(x, spec):
    return "n/a" if x is None or x != x else format(x, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("measured")
    ap.add_argument("--predictions")
    ap.add_argument("--out")
    ap.add_argument("--shapes", default="shapes.txt", help="the list of shapes (a file of this folder) [shapes.txt]")
    a = ap.parse_args()
    if not os.path.isdir(a.measured):
        sys.exit(f"analyze: no folder {a.measured}")
    gpu_name = open(os.path.join(a.measured, "device-name.txt")).read().strip() \
        if os.path.exists(os.path.join(a.measured, "device-name.txt")) else "unknown GPU"
    pred_dir = a.predictions or (device_lines(a.measured, "predictions") or [None])[0]
    if not pred_dir or not os.path.isdir(pred_dir):
        sys.exit("analyze: give --predictions DIR (predict.sh's predictions/<profile>)")
    tag = "h200" if "H200" in gpu_name else "h100" if "H100" in gpu_name else "gpu"
    out_dir = a.out or os.path.join(HERE, "results", tag)
    os.makedirs(out_dir, exist_ok=True)
    results, missing = [], []
    for name, flags in shapes(a.shapes):
        r, m = analyze_shape(name, flags, pred_dir, a.measured)
        missing += m
        if r:
            results.append(r)
    cols = ["shape", "tiles_predicted", "tiles_measured", "spearman", "recommended", "recommended_predicted_ms",
            "recommended_measured_ms", "best_measured", "best_measured_ms", "recommended_vs_best", "flags"]
    with open(os.path.join(out_dir, "validation.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in results:
            w.writerow({k: r.get(k, "") for k in cols})
    done = [r for r in results if r["tiles_measured"] > 0]
    rho_ok = [r for r in done if r["spearman"] == r["spearman"] and r["spearman"] >= RHO_MIN]
    rec_ok = [r for r in done if r.get("recommended_vs_best") is not None and r["recommended_vs_best"] <= WITHIN]
    pred_readme = os.path.join(pred_dir, "README.txt")
    lines = [f"# iosim explore against measured tiles: {gpu_name}", "",
             "Printed by `experiments/explore/analyze.py` from the measurements of `validate.sh` and the frozen "
             "predictions of `predict.sh`; do not edit by hand.", "",
             f"- measured: {', '.join(device_lines(a.measured, 'date')) or 'unknown date'}",
             *[f"- command: `{c}`" for c in device_lines(a.measured, "command")],
             f"- predictions: `{os.path.relpath(pred_dir, ROOT)}`" +
             (f" ({open(pred_readme).read().splitlines()[1]}; {open(pred_readme).read().splitlines()[2]})"
              if os.path.exists(pred_readme) else ""),
             f"- analysis: `experiments/explore/analyze.py {' '.join(sys.argv[1:])}`", "",
             f"Shapes with Spearman rho >= {RHO_MIN}: {len(rho_ok)} of {len(done)}; recommended tile within "
             f"{WITHIN:.0%} of the best measured: {len(rec_ok)} of {len(done)}.", "",
             "| shape | tiles | Spearman rho | recommended | its measured ms | best measured | best ms | recommended vs best |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['shape']} | {r['tiles_measured']}/{r['tiles_predicted']} | {fmt(r['spearman'], '.3f')} | "
                     f"{r['recommended']} | {fmt(r.get('recommended_measured_ms'), '.4f')} | {r.get('best_measured', 'n/a')} | "
                     f"{fmt(r.get('best_measured_ms'), '.4f')} | {fmt(r.get('recommended_vs_best'), '+.1%')} |")
    lines += ["", f"Tiles without a measurement ({len(missing)}): " + ("; ".join(missing) if missing else "none") + "."]
    open(os.path.join(out_dir, "README.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nanalyze: wrote {out_dir}/validation.csv and README.md")


if __name__ == "__main__":
    main()
