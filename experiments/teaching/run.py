#!/usr/bin/env python3
"""docs/teaching.md's data: runs iosim (the Python module) and writes the CSVs of experiments/teaching/.

Usage: PYTHONPATH=BUILD_DIR/python python3 experiments/teaching/run.py [--only NAME,...]
(build.sh sets the path, then renders the doc and the plots with render.py.)

One CSV per section of the walkthrough, all on the H100 profile (PROFILE) unless said:
  profile.csv       the profile's peaks (iosim.profiles(); the L2 bandwidth from its YAML file)
  roofline.csv      standard attention and FA2 forward, per kernel: FLOPs, SRAM<->global and DRAM bytes
  fa1_terms.csv     FA1 forward's closed form term by term, counted from a walk of the trace
  l2_measured.csv   measured SM<->L2 and DRAM bytes per pass, taken from the committed validation
                    grids (experiments/validation/h100/grid.csv, legacy-h200/grid.csv); no iosim run
  fa1_fa2.csv       FA1 against FA2 forward on the same tiles
  block_rule.csv    FA1 and FA2 forward bytes against the shared memory M under the paper's rule
                    and under FA2's (exchanged) rule
  decode.csv        FA2 forward with few queries (decode) against the KV length
"""
import argparse
import collections
import csv
import os
import re
import sys

import iosim

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROFILE = "h100-sxm5-80gb"

# A prefill-sized forward pass: 64 heads' worth of work, enough CTAs to fill 132 SMs many times.
ROOF = dict(batch=4, heads=16, seq=4096, head_dim=64, pass_="fwd")
# FlashAttention-2's own forward tiles (its d64 and d128 choices), compiled in the CI menu.
FA2_TILE = {64: (128, 128), 128: (128, 64)}
# FA1's closed form on one head, with M chosen so that B_c = M/4d and T_c = N/B_c are whole.
FA1_TERMS = dict(batch=1, heads=1, head_dim=64, smem="128KiB", seqs=[1024, 2048, 4096, 8192])
# FA1 against FA2: few heads (FA1's grid is B*H CTAs) and more heads.
FA1_FA2 = dict(head_dim=64, tile=(128, 128), shapes=[(1, 16), (8, 16)], seqs=[2048, 8192])
# The block rules against M (shared memory per block), one head of N = 4096.
BLOCK_RULE = dict(seq=4096, head_dims=[64, 128], smem_kib=[32, 48, 64, 96, 128, 160, 192, 227])
# Decode: a few new queries against a long KV cache, one sequence of 32 heads (a 7B-class layer).
DECODE = dict(batch=1, heads=32, head_dim=128, seq_q=[1, 2, 4, 8, 16],
              seq_k=[1024, 4096, 16384, 65536, 131072], prefill=4096)

VALIDATION = [  # (gpu, grid.csv, the raw folder whose device-name.txt names the GPU)
    ("H100", "experiments/validation/h100/grid.csv", "experiments/results/2026-11-25-h100-validation-grid-raw"),
    ("H200", "experiments/validation/legacy-h200/grid.csv", "experiments/results/2026-11-23-h200-calibration-raw"),
]


def sim(**flags):
    return iosim.simulate(profile=PROFILE, **flags)


def write(name, rows):
    path = os.path.join(HERE, name)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {os.path.relpath(path, ROOT)} ({len(rows)} rows)", file=sys.stderr)


def dram(j):
    return j["dram"]["read_bytes"] + j["dram"]["write_bytes"]


def yaml_value(path, section, key):
    """`key: {value: ...}` under `section:` of a profile file (the keys iosim.profiles() leaves out)."""
    current = None
    for line in open(path):
        top = re.match(r"^([a-z_0-9]+):", line)
        if top:
            current = top.group(1)
        m = re.match(rf"^\s+{key}:\s*\{{value:\s*([^,}}]+)", line)
        if m and current == section:
            return m.group(1).strip().strip('"')
    sys.exit(f"run.py: no {section}.{key} in {path}")


def profile_rows():
    p = next(p for p in iosim.profiles() if p["name"] == PROFILE)
    l2_bw = yaml_value(p["file"], "l2", "bandwidth")
    number, unit = l2_bw.split()
    if unit != "GB/s":
        sys.exit(f"run.py: {p['file']}: l2.bandwidth in {unit}, expected GB/s")
    return [{"name": p["name"], "device": p["device"], "sm_count": p["sm_count"],
             "smem_per_block_bytes": p["smem_per_block_bytes"], "l2_bytes": p["l2_bytes"],
             "dram_bytes_per_s": p["dram_bytes_per_s"], "l2_bytes_per_s": float(number) * 1e9,
             "tensor_fp16_flops_per_s": p["tensor_fp16_flops_per_s"], "provenance": p["provenance"]}]


def roofline_rows():
    rows = []
    for algo in ("standard", "fa2"):
        tile = dict(block_m=FA2_TILE[64][0], block_n=FA2_TILE[64][1]) if algo == "fa2" else {}
        j = sim(algo=algo, **ROOF, **tile)
        for k in [*j["kernels"], None]:
            src = k or j  # None: the whole pass
            rows.append({"algorithm": algo, "kernel": k["name"] if k else "pass", "batch": ROOF["batch"],
                         "heads": ROOF["heads"], "seq": ROOF["seq"], "head_dim": ROOF["head_dim"],
                         "block_m": j["tiling"]["block_m"], "block_n": j["tiling"]["block_n"],
                         "gemm": "x".join(str(j["tiling"]["gemm"][x]) for x in "mnk"),
                         "flops": src["flops"], "global_bytes": src["global"]["total_bytes"],
                         "dram_bytes": dram(src), "time_s": src["time"]["seconds"], "bound": src["bound"],
                         "dram_utilisation": src["utilisation"]["dram"],
                         "formula_bytes": j["formula"]["bytes"]})
    return rows


def fa1_terms_rows():
    rows = []
    c = FA1_TERMS
    for n in c["seqs"]:
        j = sim(algo="fa1", pass_="fwd", batch=c["batch"], heads=c["heads"], seq=n, head_dim=c["head_dim"],
                counts_only=True, count_by="trace", set={"sm.smem_per_block": c["smem"]})
        m = int(re.search(r"M=(\d+)", j["tiling"]["rule"]).group(1))
        for i, t in enumerate(j["formula"]["terms"]):
            rows.append({"seq": n, "head_dim": c["head_dim"], "dtype_bytes": 2, "M": m,
                         "block_m": j["tiling"]["block_m"], "block_n": j["tiling"]["block_n"],
                         "counted_by": j["counted_by"], "trace_bytes": j["global"]["total_bytes"],
                         "formula_bytes": j["formula"]["bytes"], "equals_trace": j["formula"]["equals_trace"],
                         "paper_expression": j["formula"]["expression"], "paper_bytes": j["formula"]["paper_bytes"],
                         "term": i, "what": t["what"], "bytes": t["bytes"]})
    return rows


def l2_measured_rows():
    rows = []
    for gpu, path, raw in VALIDATION:
        device = open(os.path.join(ROOT, raw, "device-name.txt")).read().split(",")[0].strip()
        passes = collections.OrderedDict()
        with open(os.path.join(ROOT, path), newline="") as f:
            for r in csv.DictReader(f):
                if r["status"] == "ok":
                    passes.setdefault(r["config"], []).append(r)
        for config, ks in passes.items():
            total = lambda *cols: sum(float(k[c]) for k in ks for c in cols)  # noqa: E731
            r0 = ks[0]
            rows.append({"gpu": gpu, "device": device, "source": path, "config": config, "algo": r0["algo"],
                         "pass": r0["pass"], "set": r0["set"], "seq_q": r0["seq_q"], "seq_k": r0["seq_k"],
                         "head_dim": r0["d"], "batch_heads": int(r0["batch"]) * int(r0["heads"]),
                         "formula_bytes": int(float(r0["formula_bytes"])),
                         "meas_global_bytes": int(total("meas_global_bytes")),
                         "meas_dram_bytes": int(total("meas_dram_read_bytes", "meas_dram_write_bytes")),
                         "sim_dram_bytes": int(total("sim_dram_read_bytes", "sim_dram_write_bytes"))})
    return rows


def fa1_fa2_rows():
    rows = []
    c = FA1_FA2
    for batch, heads in c["shapes"]:
        for n in c["seqs"]:
            for algo in ("fa1", "fa2"):
                j = sim(algo=algo, pass_="fwd", batch=batch, heads=heads, seq=n, head_dim=c["head_dim"],
                        block_m=c["tile"][0], block_n=c["tile"][1])
                bt = j["global"]["by_tensor"]
                tensor = lambda *names: sum(bt.get(t, {}).get("read_bytes", 0) + bt.get(t, {}).get("write_bytes", 0)  # noqa: E731
                                            for t in names)
                k = j["kernels"][0]
                rows.append({"algorithm": algo, "batch": batch, "heads": heads, "seq": n, "head_dim": c["head_dim"],
                             "block_m": c["tile"][0], "block_n": c["tile"][1], "ctas": k["ctas"],
                             "global_bytes": j["global"]["total_bytes"], "qkv_bytes": tensor("Q", "K", "V"),
                             "o_bytes": tensor("O"), "stat_bytes": tensor("l", "m", "L"), "dram_bytes": dram(j),
                             "flops": j["flops"], "fp32_ops": j["nonmatmul"]["fp32_ops"],
                             "sfu_ops": j["nonmatmul"]["sfu_ops"], "time_s": j["time"]["seconds"],
                             "bound": j["bound"]})
    return rows


def block_rule_rows():
    rows = []
    c = BLOCK_RULE
    for d in c["head_dims"]:
        for kib in c["smem_kib"]:
            m = kib * 1024 // 2  # fp16 elements
            # FA2's rule: the paper's with B_r and B_c exchanged, so the outer (query) block grows with M.
            br = -(-m // (4 * d))
            fa2_rule = dict(block_m=br, block_n=min(br, d))
            for algo, rule, tile in (("fa1", "paper", {}), ("fa2", "paper", {}), ("fa2", "fa2", fa2_rule)):
                j = sim(algo=algo, pass_="fwd", batch=1, heads=1, seq=c["seq"], head_dim=d, counts_only=True,
                        set={"sm.smem_per_block": f"{kib}KiB"}, **tile)
                rule_m = re.search(r"M=(\d+)", j["tiling"]["rule"])
                rows.append({"algorithm": algo, "rule": rule, "head_dim": d, "seq": c["seq"], "smem_kib": kib,
                             "M": m, "rule_M": rule_m.group(1) if rule_m else m,
                             "block_m": j["tiling"]["block_m"], "block_n": j["tiling"]["block_n"],
                             "sram_bytes": j["tiling"]["sram_bytes"], "global_bytes": j["global"]["total_bytes"]})
    return rows


def decode_rows():
    rows = []
    c = DECODE
    bm, bn = FA2_TILE[c["head_dim"]]
    points = [(q, k) for q in c["seq_q"] for k in c["seq_k"]] + [(c["prefill"], c["prefill"])]
    for nq, nk in points:
        j = sim(algo="fa2", pass_="fwd", batch=c["batch"], heads=c["heads"], seq_q=nq, seq_k=nk,
                head_dim=c["head_dim"], causal=True, block_m=bm, block_n=bn)
        bt = j["global"]["by_tensor"]
        rows.append({"seq_q": nq, "seq_k": nk, "batch": c["batch"], "heads": c["heads"], "head_dim": c["head_dim"],
                     "block_m": bm, "block_n": bn, "ctas": j["kernels"][0]["ctas"],
                     "global_bytes": j["global"]["total_bytes"],
                     "kv_bytes": bt["K"]["read_bytes"] + bt["V"]["read_bytes"], "dram_bytes": dram(j),
                     "flops": j["flops"], "time_s": j["time"]["seconds"],
                     "dram_utilisation": j["utilisation"]["dram"], "bound": j["bound"]})
    return rows


TABLES = collections.OrderedDict([
    ("profile.csv", profile_rows), ("roofline.csv", roofline_rows), ("fa1_terms.csv", fa1_terms_rows),
    ("l2_measured.csv", l2_measured_rows), ("fa1_fa2.csv", fa1_fa2_rows), ("block_rule.csv", block_rule_rows),
    ("decode.csv", decode_rows),
])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated CSV names (default: all)")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(TABLES)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        sys.exit(f"run.py: unknown table {unknown}; expected some of {list(TABLES)}")
    for n in names:
        write(n, TABLES[n]())


if __name__ == "__main__":
    main()
