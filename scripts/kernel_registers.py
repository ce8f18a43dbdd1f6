#!/usr/bin/env python3
"""Registers per thread of every compiled kernel, from ptxas's reports, for the simulator's occupancy.

    scripts/kernel_registers.py generate PTXAS_LOG_DIR > sim/schedule/kernel_registers.inc
    scripts/kernel_registers.py check PTXAS_LOG_DIR [TABLE]      (default TABLE: that .inc)

PTXAS_LOG_DIR holds one log per object file (scripts/ptxas_log.sh, the CUDA compiler launcher of
kernels/CMakeLists.txt: `-Xptxas=-v` lines). Each kernel's mangled name is demangled (c++filt) and
mapped to the key the plan knows it by (sim/schedule/kernel_registers.h): the kernel kind, the
data type and three numbers: head dim and tile (B_r, B_c) for attention kernels, the tile
(M, N, K) for GEMMs, the operation for elementwise kernels, nothing for row kernels. Variants the
plan does not tell apart (a GEMM's operand layouts, the softmax's threads per row) take the most
registers of their instantiations. Instantiations that only tests launch (LOG = true) are left out.

`generate` writes the X-macro table from a FULL-menu build (scripts/gpu_build.sh's build-gpu).
`check` fails (exit 1) when a kernel of the logs is missing from the table or has another count:
run by ctest on every CUDA build (CI's compiles the small menu), so a kernel change that moves
its registers, or another nvcc, cannot leave the table stale.
"""
import collections
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(os.path.dirname(HERE), "sim", "schedule", "kernel_registers.inc")
ENTRY = re.compile(r"Compiling entry function '(_Z\w+)' for '(sm_\w+)'")
USED = re.compile(r"Used (\d+) registers")
DTYPE = {"__half": "fp16", "__nv_bfloat16": "bf16"}
ROW = re.compile(r"^X\((\w+), (\w+), (-?\d+), (-?\d+), (-?\d+), (\d+)\)$")


def ptxas_entries(log_dir):
    """(mangled name, arch, registers) of every kernel in the logs."""
    logs = sorted(glob.glob(os.path.join(log_dir, "*.log")))
    if not logs:
        sys.exit(f"kernel_registers: no *.log in {log_dir} (a CUDA build writes them to build/kernels/ptxas)")
    out = []
    for path in logs:
        name = arch = None
        for line in open(path):
            m = ENTRY.search(line)
            if m:
                name, arch = m.group(1), m.group(2)
                continue
            m = USED.search(line)
            if m and name:
                out.append((name, arch, int(m.group(1))))
                name = None
    return out


def demangle(names):
    r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return r.stdout.split("\n")[: len(names)]


def template_args(demangled):
    """The kernel's name and its template arguments, split at top-level commas."""
    m = re.match(r"void (?:\w+::|\(anonymous namespace\)::)*(\w+)<(.*?)>\(", demangled)
    if not m:
        return None, []
    return m.group(1), [a.strip() for a in m.group(2).split(",")]


def key_of(demangled):
    """(kind, dtype, a, b, c) or None for kernels the plan does not launch."""
    kernel, args = template_args(demangled)
    if not kernel or not args or args[0] not in DTYPE:
        return None
    dt, rest = DTYPE[args[0]], args[1:]
    nums = [int(re.sub(r"^\(.*\)", "", a)) if re.match(r"^(\(.*\))?-?\d+$", a) else a for a in rest]
    if kernel == "fa2_forward_kernel":
        return None if nums[3] == "true" else ("fa2_fwd", dt, *nums[:3])
    if kernel == "fa2_backward_kernel":
        return ("fa2_bwd_main", dt, *nums[:3])
    if kernel == "splitkv_forward_kernel":
        return None if nums[3] == "true" else ("splitkv_fwd", dt, *nums[:3])
    if kernel == "fa3_forward_kernel":  # <Elem, D>: its one tile, Fa3ForwardSchedule::kBlockM x kBlockN
        return ("fa3_fwd", dt, nums[0], 128, 128)
    if kernel == "fa1_forward_kernel":
        return ("fa1_fwd", dt, *nums[:3])
    if kernel == "fa1_backward_kernel":
        return ("fa1_bwd", dt, *nums[:3])
    if kernel == "gemm_kernel":
        return ("gemm", dt, *nums[:3])
    if kernel == "wgmma_gemm_kernel":  # <Elem, A_KC, B_KC>: its one tile, schedule::WgmmaGemmShape
        return ("gemm_wgmma", dt, 128, 128, 64)
    if kernel == "elementwise_kernel":
        return ("elementwise", dt, nums[0], 0, 0)
    simple = {"fa2_bwd_preprocess_kernel": "fa2_bwd_preprocess", "fa2_bwd_convert_dq_kernel": "fa2_bwd_convert_dq",
              "softmax_forward_kernel": "softmax_fwd", "softmax_backward_kernel": "softmax_bwd",
              "splitkv_combine_kernel": "splitkv_combine"}
    return (simple[kernel], dt, 0, 0, 0) if kernel in simple else None


ARCH = "sm_90"  # the table's: the simulator's Hopper profiles run the sm_90 build
# FA3 (wgmma, TMA, setmaxnreg) is compiled for sm_90a only: the same Hopper build.
ARCHS = (ARCH, ARCH + "a")


def measured(log_dir):
    """{key: registers} (the most over variants) of the sm_90 kernels, and the arch."""
    entries = [e for e in ptxas_entries(log_dir) if e[1] in ARCHS]
    if not entries:
        print(f"SKIPPED: no {ARCH} kernels in {log_dir} (the table is for sm_90 builds)")
        sys.exit(77)
    regs = collections.defaultdict(int)
    for (name, _, n), dm in zip(entries, demangle([e[0] for e in entries])):
        k = key_of(dm)
        if k:
            regs[k] = max(regs[k], n)
    return dict(regs), ARCH


def read_table(path):
    rows = {}
    for line in open(path):
        m = ROW.match(line.strip())
        if m:
            rows[(m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5)))] = int(m.group(6))
    return rows


def nvcc_version():
    try:
        out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
        return re.search(r"release [\d.]+, V[\d.]+", out).group(0)
    except (OSError, AttributeError):
        return "unknown"


def generate(log_dir):
    regs, arch = measured(log_dir)
    print("// Registers per thread of each compiled kernel instantiation (ptxas -v), read by")
    print("// sim/schedule/kernel_registers.h for the occupancy of the kernels the plan launches.")
    print(f"// Generated by scripts/kernel_registers.py from a full-menu build ({arch}, nvcc {nvcc_version()});")
    print("// the ctest kernel_registers_match_ptxas checks it against every CUDA build's own reports.")
    print("// X(kind, dtype, a, b, c, registers): a, b, c = head dim, B_r, B_c (attention kernels);")
    print("// tile M, N, K (gemm); the operation (elementwise); 0 (row kernels).")
    for k in sorted(regs):
        print(f"X({k[0]}, {k[1]}, {k[2]}, {k[3]}, {k[4]}, {regs[k]})")


def check(log_dir, table_path):
    regs, arch = measured(log_dir)
    table = read_table(table_path)
    bad = [f"  {k}: ptxas {n}, table {table.get(k, 'missing')}" for k, n in sorted(regs.items()) if table.get(k) != n]
    if bad:
        print(f"kernel_registers: {len(bad)} of {len(regs)} compiled kernels ({arch}) disagree with {table_path}:")
        print("\n".join(bad))
        print("regenerate it from a full-menu build: scripts/kernel_registers.py generate build-gpu/kernels/ptxas")
        return 1
    print(f"kernel_registers: all {len(regs)} compiled kernels ({arch}) match {table_path}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("generate", "check"):
        sys.exit(__doc__)
    if sys.argv[1] == "generate":
        generate(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else TABLE))
