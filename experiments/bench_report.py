#!/usr/bin/env python3
"""Merges `iosim-kernels bench --json` lines (ours) and bench_attention.py lines
(PyTorch SDPA backends) into one table: <prefix>.md and <prefix>.json.

The ratio column is PyTorch flash time / our FA2 time on the same shape in the
same run (> 1: ours is faster). Targets (issue 4): forward >= 1.0, backward >= 0.8.

  python3 experiments/bench_report.py --ours ours.jsonl --torch torch.jsonl \
      --gpu "NVIDIA H100 80GB HBM3" --date 2026-11-22 --command "..." --prefix out/2026-11-22-h100-attention-bench
"""
import argparse
import json

TARGET = {"fwd": 1.0, "bwd": 0.8}
BACKENDS = ["flash", "cudnn", "efficient", "math"]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--date", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--notes", default="")
    ap.add_argument("--prefix", required=True)
    args = ap.parse_args()

    ours = {}
    for r in load(args.ours):
        key = (r["head_dim"], r["seq_q"], r["batch"], r["heads"], bool(r["causal"]), r["pass"])
        ours[key] = r
    theirs = {}
    torch_version = ""
    for r in load(args.torch):
        key = (r["head_dim"], r["seq"], r["batch"], r["heads"], bool(r["causal"]), r["pass"])
        theirs.setdefault(key, {})[r["backend"]] = r
        torch_version = r.get("torch", torch_version)

    rows = []
    for key in sorted(set(ours) | set(theirs), key=lambda k: (k[5], k[0], k[4], k[1])):
        d, n, b, h, causal, pass_ = key
        o = ours.get(key, {})
        t = theirs.get(key, {})
        row = {"head_dim": d, "seq": n, "batch": b, "heads": h, "causal": causal, "pass": pass_,
               "ours_ms": o.get("median_ms"), "ours_tflops": o.get("tflops"),
               "ours_blocks": f"{o['block_m']}x{o['block_n']}" if o else None}
        for be in BACKENDS:
            rec = t.get(be, {})
            row[f"{be}_ms"] = rec.get("median_ms")
            row[f"{be}_tflops"] = rec.get("tflops")
            if "error" in rec:
                row[f"{be}_error"] = rec["error"]
        if row["ours_ms"] and row["flash_ms"]:
            row["ratio_vs_flash"] = row["flash_ms"] / row["ours_ms"]
            row["meets_target"] = row["ratio_vs_flash"] >= TARGET[pass_]
        rows.append(row)

    with open(args.prefix + ".json", "w") as f:
        json.dump({"gpu": args.gpu, "date": args.date, "command": args.command, "torch": torch_version,
                   "notes": args.notes, "targets": TARGET, "rows": rows}, f, indent=1)

    def fmt(x, p=1):
        return "—" if x is None else f"{x:.{p}f}"

    lines = [f"# Attention benchmark: our FA2 kernels vs PyTorch SDPA", "",
             f"- GPU: {args.gpu}", f"- Date: {args.date}", f"- PyTorch: {torch_version}",
             f"- Command: `{args.command}`",
             "- Shapes: batch*seq = 16384, heads*head_dim = 2048 (the FlashAttention-2/3 papers' setting), fp16, "
             "BSHD layout; FLOPs = 4*B*H*N^2*d forward (halved for causal), 2.5x for backward.",
             "- Timing: CUDA events, warm-up then median of the timed runs, inputs rotated over buffer sets "
             "> 4x L2 (both ours and PyTorch's).",
             "- ratio = PyTorch flash time / our FA2 time (> 1: ours faster); targets: fwd >= 1.0, bwd >= 0.8.", ""]
    if args.notes:
        lines += [args.notes, ""]
    lines.append("| pass | d | N | B x H | causal | ours tile | ours ms | ours TFLOP/s | flash ms | flash TFLOP/s "
                 "| cuDNN TFLOP/s | efficient TFLOP/s | math TFLOP/s | ratio vs flash |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r.get("ratio_vs_flash")
        mark = "" if ratio is None else (" ✓" if r["meets_target"] else " ✗")
        lines.append(f"| {r['pass']} | {r['head_dim']} | {r['seq']} | {r['batch']} x {r['heads']} | "
                     f"{'yes' if r['causal'] else 'no'} | {r['ours_blocks'] or '—'} | {fmt(r['ours_ms'], 3)} | "
                     f"{fmt(r['ours_tflops'])} | {fmt(r['flash_ms'], 3)} | {fmt(r['flash_tflops'])} | "
                     f"{fmt(r['cudnn_tflops'])} | {fmt(r['efficient_tflops'])} | {fmt(r['math_tflops'])} | "
                     f"{fmt(ratio, 2)}{mark} |")
    errors = [(r, be) for r in rows for be in BACKENDS if f"{be}_error" in r]
    if errors:
        lines += ["", "Backends that refused a shape:"]
        for r, be in errors:
            lines.append(f"- {be}, {r['pass']} d={r['head_dim']} N={r['seq']} causal={r['causal']}: {r[be + '_error']}")
    with open(args.prefix + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
