#!/usr/bin/env python3
"""Join measured counters with iosim's predictions: one CSV row per kernel.

Usage:
  experiments/validation/build_csv.py GPU OUTDIR [OUTDIR ...] [--profile P] [--out CSV]
      [--grid FILE ...: default grid.txt and grid-fa3.txt] [--iosim build/sim/iosim] [--jobs 2] [--no-pass]
  experiments/validation/build_csv.py GPU OUTDIR --legacy [--out CSV]   (validate_counters.sh data)

GPU: h200 | h100 (default profile hw_profiles/h200-sxm-141gb.yaml | h100-sxm5-80gb.yaml; --profile
overrides: a name or a YAML path). OUTDIR: what experiments/validation/run_grid.sh (or, with
--legacy, experiments/validate_counters.sh) wrote: <name>.csv (ncu), <name>.bench.json; several
OUTDIRs (e.g. one per part) are read as one. Configurations: the grid (SET;NAME;REGEX;LAUNCHES;FLAGS),
or with --legacy experiments/calibrate_configs.txt (set calibration) and
experiments/validate_configs.txt (set heldout), NAME;REGEX;LAUNCHES;FLAGS.
Default output: experiments/validation/<gpu>/grid.csv (legacy: experiments/validation/legacy-<gpu>/grid.csv).

Per configuration, `iosim simulate FLAGS --profile P --json --cold-l2` (ncu's --cache-control all
flushes the L2 before every kernel) gives the per-kernel predictions, and, unless --no-pass,
`iosim simulate FLAGS --profile P --json` (L2 kept across the pass's kernels, as in the bench) the
pass time set against the bench median. Predictions are cached under build/validation-sim-cache,
keyed by the iosim binary, the profile's text and the flags.

ncu kernels (launch order) are paired with the trace's kernels (order) and the names checked
(fa2_forward_kernel -> fa2_fwd, fa2_bwd_preprocess_kernel -> fa2_bwd_preprocess,
fa2_backward_kernel -> fa2_bwd_main, fa2_bwd_convert_dq_kernel -> fa2_bwd_convert_dq,
fa1_forward/backward_kernel -> fa1_fwd/bwd, softmax_forward/backward_kernel -> std_fwd/bwd_softmax,
gemm_kernel and wgmma_gemm_kernel -> std_fwd_qk, std_fwd_pv, std_bwd_dv, std_bwd_dp, std_bwd_dq,
std_bwd_dk).
Every simulated kernel gets a row; `status` is `ok`, or says why it has no measurement
(no_ncu_output, ncu_failed, kernel_count_mismatch, kernel_name_mismatch, or `stale: REASON` for
configurations given to --stale REGEX:REASON, measured with a kernel that has changed since): the
summaries count `ok` rows and list the others. --stale-counters REGEX:REASON is narrower: for the
kernels whose "CONFIG KERNEL" matches, a change since the measurement moved only how the kernel's
loads and stores cross to the L2 (not its DRAM bytes or, within what the GPU measured again, its
time), so their SM<->L2 bytes, L2 lookups and instruction counts are left empty with the reason in
`stale_counters` (the summaries list them as exclusions of those metrics) and the rest is kept.

Columns (bytes, seconds): see COLUMNS. formula_bytes is the pass's closed-form I/O (the
simulator's `formula.bytes`), repeated on each kernel of the pass. sim_global_bytes: the trace's
SM<->L2 bytes of the kernel (read + write, reductions included); meas_global_bytes:
l1tex__m_xbar2l1tex_read_bytes + l1tex__m_l1tex2xbar_write_bytes. Lookups: L2 read sector
lookups (lts__t_sectors_srcunit_tex_op_read vs the JSON's l2.by_kind.read.lookups).
meas_time_s: ncu's gpu__time_duration (one launch, flushed L2, clocks not locked).
meas_pass_time_s: the bench median of the whole pass (CUDA events); sim_pass_time_s: the
warm-L2 simulation's pass time. Instruction counters: whichever candidate ncu had (run_grid.sh);
empty when not measured (legacy data has none).
"""
import argparse, concurrent.futures, csv, hashlib, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from check_split import Config, parse_flags  # noqa: E402

PROFILES = {"h200": "hw_profiles/h200-sxm-141gb.yaml", "h100": "hw_profiles/h100-sxm5-80gb.yaml"}

COLUMNS = [
    "gpu", "algo", "pass", "kernel", "d", "seq_q", "seq_k", "batch", "heads", "kv_heads", "causal", "density",
    "block_m", "block_n", "set", "formula_bytes", "sim_global_bytes", "meas_global_bytes",
    "sim_dram_read_bytes", "meas_dram_read_bytes", "sim_dram_write_bytes", "meas_dram_write_bytes",
    "sim_lookups", "meas_lookups", "sim_time_s", "meas_time_s",
    # extras
    "config", "data", "status", "kernel_index", "ncu_kernel", "gemm_m", "gemm_n", "gemm_k", "profile",
    "timing_calibrated", "sim_bound", "sim_ctas", "meas_grid_size",
    "sim_read_bytes", "meas_read_bytes", "sim_write_bytes", "meas_write_bytes",
    "sim_lookup_hits", "meas_lookup_hits", "meas_read_requests",
    "sim_flops", "sim_fp32_ops", "sim_sfu_ops",
    "sim_inst_total", "sim_inst_tensor", "sim_inst_fma", "sim_inst_alu", "sim_inst_mufu", "sim_inst_shfl",
    "sim_inst_smem", "sim_inst_global",
    "meas_clock_hz", "meas_cycles", "meas_ncu_passes",
    "meas_inst_executed", "meas_inst_tensor", "meas_inst_fma_pipe", "meas_inst_fp32_pipe",
    "stale_counters",
    "meas_thread_ffma", "meas_thread_fadd", "meas_thread_fmul", "meas_inst_xu", "meas_inst_ldsm",
    "meas_inst_shared_ld",
    "sim_pass_time_s", "meas_pass_time_s",
]
# Extra ncu counters: column -> candidates (as in run_grid.sh; the first present is used).
EXTRA = {
    "meas_clock_hz": ["sm__cycles_elapsed.avg.per_second"],
    "meas_inst_executed": ["smsp__inst_executed.sum", "sm__inst_executed.sum"],
    "meas_inst_tensor": ["smsp__inst_executed_pipe_tensor_op_hmma.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
                         "sm__inst_executed_pipe_tensor.sum"],
    "meas_inst_fma_pipe": ["smsp__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_fma.sum"],
    "meas_inst_fp32_pipe": ["smsp__inst_executed_pipe_fp32.sum"],
    "meas_thread_ffma": ["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"],
    "meas_thread_fadd": ["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                         "sm__sass_thread_inst_executed_op_fadd_pred_on.sum"],
    "meas_thread_fmul": ["smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
                         "sm__sass_thread_inst_executed_op_fmul_pred_on.sum"],
    "meas_inst_xu": ["smsp__inst_executed_pipe_xu.sum", "sm__inst_executed_pipe_xu.sum"],
    "meas_inst_ldsm": ["sm__sass_inst_executed_op_ldsm.sum", "smsp__sass_inst_executed_op_ldsm.sum"],
    "meas_inst_shared_ld": ["smsp__sass_inst_executed_op_shared_ld.sum", "sm__sass_inst_executed_op_shared_ld.sum"],
}
NCU_TO_TRACE = {
    "fa2_forward_kernel": {"fa2_fwd"},
    "fa2_bwd_preprocess_kernel": {"fa2_bwd_preprocess"},
    "fa2_backward_kernel": {"fa2_bwd_main"},
    "fa2_bwd_convert_dq_kernel": {"fa2_bwd_convert_dq"},
    "fa1_forward_kernel": {"fa1_fwd"},
    "fa1_backward_kernel": {"fa1_bwd"},
    "softmax_forward_kernel": {"std_fwd_softmax"},
    "softmax_backward_kernel": {"std_bwd_softmax"},
    "fa3_forward_kernel": {"fa3_fwd"},
    "gemm_kernel": {"std_fwd_qk", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_dq", "std_bwd_dk"},
    "wgmma_gemm_kernel": {"std_fwd_qk", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_dq", "std_bwd_dk"},
}


def short_kernel_name(full):
    """'void detail::<unnamed>::gemm_kernel<__half, 64, ...>(...)' -> 'gemm_kernel'."""
    m = re.search(r"([A-Za-z_]\w*_kernel)\b", full)
    return m.group(1) if m else full.split("(")[0].strip()


def read_configs(path, set_name=None):
    out = []
    for ln in open(path):
        if not ln.strip() or ln.startswith("#"):
            continue
        parts = [x.strip() for x in ln.rstrip("\n").split(";")]
        if set_name is None:
            out.append(Config(*parts))
        else:
            name, regex, launches, flags = parts
            out.append(Config(set_name, name, regex, launches, flags))
    return out


def ncu_rows(path):
    with open(path, errors="replace") as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    return [r for r in rows if r.get("Kernel Name") and re.fullmatch(r"[0-9,.]+", r.get("gpu__time_duration.sum", "") or "")]


def num(r, k):
    v = r.get(k)
    if v is None or v.strip() in ("", "n/a", "N/A"):
        return None
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return None


def file_sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Simulator:
    def __init__(self, iosim, profile, cache_dir, extra_flags=""):
        self.iosim, self.profile, self.cache_dir = iosim, profile, cache_dir
        self.extra = extra_flags.split()
        prof_path = profile if os.path.exists(profile) else os.path.join(ROOT, "hw_profiles", profile + ".yaml")
        prof_text = open(prof_path, "rb").read() if os.path.exists(prof_path) else profile.encode()
        self.salt = file_sha(iosim) + hashlib.sha256(prof_text).hexdigest()
        os.makedirs(cache_dir, exist_ok=True)

    def run(self, flags, cold):
        args = [self.iosim, "simulate", *flags.split(), *self.extra, "--profile", self.profile, "--json"] + (
            ["--cold-l2"] if cold else [])
        key = hashlib.sha256((self.salt + " ".join(args[1:])).encode()).hexdigest()[:32]
        path = os.path.join(self.cache_dir, key + ".json")
        if os.path.exists(path):
            return json.load(open(path))
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
        data = json.loads(r.stdout)
        with open(path + ".tmp", "w") as f:
            f.write(r.stdout)
        os.replace(path + ".tmp", path)
        return data


def find_file(dirs, name):
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


# The measured columns a --stale-counters kernel leaves empty: how its accesses crossed to the L2
# and what it executed.
STALE_COUNTER_COLUMNS = ("meas_global_bytes", "meas_read_bytes", "meas_write_bytes", "meas_lookups",
                         "meas_lookup_hits", "meas_read_requests")


def rows_for(c, gpu, data, dirs, sim_cold, sim_warm, profile, stale=(), stale_counters=()):
    kernels = sim_cold["kernels"]
    base = {
        "gpu": gpu, "algo": c.algo, "pass": c.pas, "d": c.d, "seq_q": c.seq_q, "seq_k": c.seq_k, "batch": c.batch,
        "heads": c.heads, "kv_heads": c.kv_heads, "causal": int(c.causal), "density": c.density,
        "block_m": c.block_m, "block_n": c.block_n, "set": c.set, "config": c.name, "data": data,
        "formula_bytes": sim_cold.get("formula", {}).get("bytes", ""), "profile": profile,
        "timing_calibrated": int(bool(sim_cold.get("engine", {}).get("timing_calibrated", False))),
    }
    if c.algo == "standard":
        base.update(gemm_m=c.tile[0], gemm_n=c.tile[1], gemm_k=c.tile[2])
    bench = find_file(dirs, c.name + ".bench.json")
    meas_pass = ""
    if bench:
        try:
            meas_pass = json.load(open(bench))["median_ms"] / 1e3
        except (ValueError, KeyError):
            meas_pass = ""
    base["sim_pass_time_s"] = sim_warm["time"]["seconds"] if sim_warm else ""

    ncu_path = find_file(dirs, c.name + ".csv")
    status, mrows = "ok", []
    reason = next((why for rx, why in stale if re.search(rx, c.name)), None)
    base["meas_pass_time_s"] = "" if reason else meas_pass
    if reason:  # measured with a kernel that has changed since: counted nowhere
        status = f"stale: {reason}"
    elif not ncu_path:
        status = "no_ncu_output"
    else:
        mrows = ncu_rows(ncu_path)
        if not mrows:
            status = "ncu_failed"
        elif len(mrows) != len(kernels):
            status = f"kernel_count_mismatch(ncu {len(mrows)}, iosim {len(kernels)})"
        else:
            for r, k in zip(mrows, kernels):
                s = short_kernel_name(r["Kernel Name"])
                if k["name"] not in NCU_TO_TRACE.get(s, set()):
                    status = f"kernel_name_mismatch({s} vs {k['name']})"
                    break
    out = []
    for i, k in enumerate(kernels):
        row = dict(base)
        g, l2rd, dram = k["global"], k["l2"]["by_kind"]["read"], k["dram"]
        # The crossbar carries whole 32-byte sectors: the L2's sectors of each kind, which hold the
        # trace's requests (a ragged row's last sector whole) and the warps' spills (the stores, and
        # the loads the L1 missed); and its read counter the TMA boxes' zero fill past the tensors'
        # ends (FA3), which no memory holds.
        by_kind = k["l2"]["by_kind"]
        fill = k.get("requests", {}).get("zero_fill_read_bytes", 0)
        row.update({
            "kernel": k["name"], "kernel_index": i, "status": status,
            "sim_global_bytes": g["read_bytes"] + g["write_bytes"],
            "sim_read_bytes": by_kind["read"]["sector_bytes"] + fill,
            "sim_write_bytes": by_kind["write"]["sector_bytes"] + by_kind["reduce"]["sector_bytes"],
            "sim_dram_read_bytes": dram["read_bytes"], "sim_dram_write_bytes": dram["write_bytes"],
            "sim_lookups": l2rd["lookups"], "sim_lookup_hits": l2rd["lookup_hits"],
            "sim_time_s": k["time"]["seconds"], "sim_bound": k.get("bound", ""), "sim_ctas": k.get("ctas", ""),
            "sim_flops": k.get("flops", ""), "sim_fp32_ops": k.get("nonmatmul", {}).get("fp32_ops", ""),
            "sim_sfu_ops": k.get("nonmatmul", {}).get("sfu_ops", ""),
        })
        inst = k.get("sm_model", {}).get("instructions", {})  # the SM model's warp instructions by pipe
        for pipe in ("total", "tensor", "fma", "alu", "mufu", "shfl", "smem", "global"):
            row["sim_inst_" + pipe] = inst.get(pipe, "")
        if status == "ok":
            r = mrows[i]
            rd, wr = num(r, "l1tex__m_xbar2l1tex_read_bytes.sum"), num(r, "l1tex__m_l1tex2xbar_write_bytes.sum")
            t = num(r, "gpu__time_duration.sum")
            row.update({
                "ncu_kernel": short_kernel_name(r["Kernel Name"]),
                "meas_global_bytes": rd + wr if rd is not None and wr is not None else "",
                "meas_read_bytes": rd, "meas_write_bytes": wr,
                "meas_dram_read_bytes": num(r, "dram__bytes_read.sum"),
                "meas_dram_write_bytes": num(r, "dram__bytes_write.sum"),
                "meas_lookups": num(r, "lts__t_sectors_srcunit_tex_op_read.sum"),
                "meas_lookup_hits": num(r, "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"),
                "meas_read_requests": num(r, "lts__t_requests_srcunit_tex_op_read.sum"),
                "meas_time_s": t * 1e-9 if t is not None else "",
                "meas_cycles": num(r, "sm__cycles_elapsed.avg"),
                "meas_grid_size": num(r, "launch__grid_size"),
                "meas_ncu_passes": num(r, "profiler__replayer_passes"),
            })
            for col, cands in EXTRA.items():
                for m in cands:
                    v = num(r, m)
                    if v is not None:
                        row[col] = v
                        break
            if row.get("meas_clock_hz") in (None, "") and row["meas_cycles"] and t:
                # ncu lists no .per_second form on some GPUs (the H200's run): the same ratio.
                row["meas_clock_hz"] = row["meas_cycles"] / (t * 1e-9)
            why = next((w for rx, w in stale_counters if re.search(rx, f"{c.name} {k['name']}")), None)
            if why:
                row["stale_counters"] = why
                counts = tuple(x for x in row if x.startswith(("meas_inst_", "meas_thread_")))
                for col in STALE_COUNTER_COLUMNS + counts:
                    row[col] = ""
        out.append({k2: ("" if v is None else v) for k2, v in row.items()})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpu", help="h200 | h100 (names the output and the default profile)")
    ap.add_argument("outdirs", nargs="+")
    ap.add_argument("--profile")
    ap.add_argument("--out")
    ap.add_argument("--grid", action="append",
                    help="grid file(s), repeatable (default: grid.txt and grid-fa3.txt, FA3's rows)")
    ap.add_argument("--legacy", action="store_true",
                    help="validate_counters.sh data: experiments/calibrate_configs.txt + validate_configs.txt")
    ap.add_argument("--iosim", default=os.path.join(ROOT, "build/sim/iosim"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-pass", action="store_true", help="skip the warm-L2 pass simulation")
    ap.add_argument("--sim-flags", default="", metavar="FLAGS",
                    help="more `iosim simulate` flags for every simulation, e.g. --sim-flags=--l2-copies (a model variant)")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build/validation-sim-cache"))
    ap.add_argument("--stale", action="append", default=[], metavar="REGEX:REASON",
                    help="configurations whose name matches REGEX were measured with a kernel that has changed "
                         "since: status 'stale: REASON', no measured values, counted in no metric (repeatable)")
    ap.add_argument("--stale-counters", action="append", default=[], metavar="REGEX:REASON",
                    help="kernels whose 'CONFIG KERNEL' matches REGEX changed since their measurement only in how "
                         "their accesses cross to the L2: SM<->L2 bytes, lookups and instruction counts left "
                         "empty, the reason in stale_counters (repeatable)")
    a = ap.parse_args()
    stale = [tuple(x.split(":", 1)) for x in a.stale]
    stale_counters = [tuple(x.split(":", 1)) for x in a.stale_counters]
    if any(len(x) != 2 or not x[1].strip() for x in stale + stale_counters):
        sys.exit("build_csv: --stale and --stale-counters take REGEX:REASON")
    gpu = a.gpu.lower()
    profile = a.profile or os.path.join(ROOT, PROFILES.get(gpu, ""))
    if not a.profile and gpu not in PROFILES:
        sys.exit(f"build_csv: no default profile for GPU '{gpu}': give --profile")
    if a.legacy:
        configs = (read_configs(os.path.join(ROOT, "experiments/calibrate_configs.txt"), "calibration")
                   + read_configs(os.path.join(ROOT, "experiments/validate_configs.txt"), "heldout"))
        data = "legacy"
        out = a.out or os.path.join(HERE, f"legacy-{gpu}", "grid.csv")
    else:
        configs = [c for g in (a.grid or [os.path.join(HERE, "grid.txt"), os.path.join(HERE, "grid-fa3.txt")])
                   for c in read_configs(g)]
        data = "grid"
        out = a.out or os.path.join(HERE, gpu, "grid.csv")
    for d in a.outdirs:
        name_file = find_file([d], "device-name.txt")
        if name_file:
            dev = open(name_file).read().strip()
            if gpu not in dev.lower().replace(" ", ""):
                print(f"build_csv: warning: {d} says '{dev}', not {gpu}", file=sys.stderr)
    sim = Simulator(a.iosim, profile, a.cache, a.sim_flags)
    prof_label = os.path.relpath(profile, ROOT) if os.path.exists(profile) else profile

    def one(c):
        cold = sim.run(c.flags, True)
        warm = None if a.no_pass else sim.run(c.flags, False)
        return rows_for(c, gpu, data, a.outdirs, cold, warm, prof_label, stale, stale_counters)

    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        results = list(ex.map(one, configs))
    rows = [r for rs in results for r in rs]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="raise", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in COLUMNS})
    ok = sum(r["status"] == "ok" for r in rows)
    print(f"wrote {out}: {len(rows)} kernels of {len(configs)} configurations, {ok} measured (status ok)")
    for c, rs in zip(configs, results):
        if rs and rs[0]["status"] != "ok":
            print(f"  {c.name}: {rs[0]['status']}")


if __name__ == "__main__":
    main()
