#!/usr/bin/env python3
"""The HBM-traffic article's example through iosim: writes results.csv.

Usage: PYTHONPATH=BUILD_DIR/python python3 experiments/hbm_article/run.py
(build.sh sets the path, joins measurements when there are any, and prints README.md's block.)

Every configuration of grid.txt (the flags the GPU measurement uses too) is simulated with the
Python module on each profile of PROFILES, with the L2 flushed before each kernel (`cold_l2`, as
Nsight Compute's --cache-control all measures). One row per kernel and one per pass (kernel
"pass"): SRAM<->global bytes by tensor, DRAM bytes, dirty bytes left in L2, time.
"""
import csv
import os
import sys

import iosim

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "experiments", "validation"))
from build_csv import read_configs  # noqa: E402

# The GPUs measure.sh may run on, and the article's (an A100 with 40 MB of L2 and 80 GB of HBM2e).
PROFILES = ["h100-sxm5-80gb", "h200-sxm-141gb", "a100-sxm4-80gb"]
TENSORS = ["Q", "K", "V", "S", "P", "O", "L"]
COLUMNS = (["profile", "device", "config", "algorithm", "kernel", "batch", "heads", "seq", "head_dim", "block_m",
            "block_n", "gemm", "ctas", "flops", "global_read_bytes", "global_write_bytes", "formula_bytes"]
           + [f"global_{t}_{rw}_bytes" for t in TENSORS for rw in ("read", "write")]
           + ["dram_read_bytes", "dram_write_bytes", "dram_dirty_left_bytes", "time_s"])


def flags_to_kwargs(flags):
    """'--algo fa2 --batch 1 --causal' -> {'algo': 'fa2', 'batch': '1', 'causal': True} (module keywords)."""
    out, tokens = {}, flags.split()
    for k, tok in enumerate(tokens):
        if not tok.startswith("--"):
            continue
        key = tok[2:].replace("-", "_")
        key = "pass_" if key == "pass" else key
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        out[key] = nxt if nxt is not None and not nxt.startswith("--") else True
    return out


def row(profile, config, j, k):
    src = k or j  # k None: the whole pass
    bt = src["global"]["by_tensor"]
    r = {"profile": profile, "device": j["device"], "config": config, "algorithm": j["algorithm"],
         "kernel": k["name"] if k else "pass", "batch": j["problem"]["batch"], "heads": j["problem"]["heads"],
         "seq": j["problem"]["seq_q"], "head_dim": j["problem"]["head_dim"], "block_m": j["tiling"]["block_m"],
         "block_n": j["tiling"]["block_n"], "gemm": "x".join(str(j["tiling"]["gemm"][x]) for x in "mnk"),
         "ctas": k["ctas"] if k else sum(x["ctas"] for x in j["kernels"]), "flops": src["flops"],
         "global_read_bytes": src["global"]["read_bytes"], "global_write_bytes": src["global"]["write_bytes"],
         "formula_bytes": j["formula"]["bytes"],
         "dram_read_bytes": src["dram"]["read_bytes"], "dram_write_bytes": src["dram"]["write_bytes"],
         "dram_dirty_left_bytes": (src["dram"]["dirty_left_bytes"] if k
                                   else sum(x["dram"]["dirty_left_bytes"] for x in j["kernels"])),
         "time_s": src["time"]["seconds"]}
    for t in TENSORS:
        for rw in ("read", "write"):
            r[f"global_{t}_{rw}_bytes"] = bt.get(t, {}).get(f"{rw}_bytes", 0)
    return r


def main():
    rows = []
    for c in read_configs(os.path.join(HERE, "grid.txt")):
        for profile in PROFILES:
            j = iosim.simulate(profile=profile, cold_l2=True, **flags_to_kwargs(c.flags))
            rows += [row(profile, c.name, j, k) for k in [*j["kernels"], None]]
            print(f"{profile} {c.name}: {j['time']['seconds'] * 1e3:.3f} ms", file=sys.stderr)
    out = os.path.join(HERE, "results.csv")
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {os.path.relpath(out, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
