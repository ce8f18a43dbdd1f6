#!/usr/bin/env bash
# On the GPU machine (issue 11), second round: Nsight Compute's per-instruction counters and
# warp states on std_fwd_qk with 4 output tiles per CTA and streaming stores (where the warps
# wait), then per-kernel timings of the round-2 variants (IOSIM_GEMM_VARIANT: 1 one barrier per
# k step, 2 stmatrix for the C staging, 3 both) beside the kernel before the change and cuBLAS.
#   experiments/probes/gemm_overlap_run2.sh BINDIR OUTDIR
# The IOSIM_GEMM_* knobs existed only in the measured build (experiments/results/
# 2026-11-28-h100-gemm-overlap/README.md), not in the committed launcher: against it they do nothing.
set -uo pipefail
bin=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; ncu --version | tail -1; date -u; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
shape_4k="--batch 2 --heads 16 --seq 4096 --head-dim 128 --layout bhsd"
shape_1k="--batch 16 --heads 16 --seq 1024 --head-dim 64 --layout bhsd"
tile="--gemm-m 128 --gemm-n 128 --gemm-k 64"
t0=$(date +%s)
IOSIM_GEMM_TPC=4 IOSIM_GEMM_STORE_CS=1 NO_SASS=1 "$here/source_counters.sh" "$bin/iosim-kernels" "$out/sc" \
  "qk-tpc4-cs1|gemm_kernel|--algo standard --pass fwd $shape_4k $tile"
IOSIM_GEMM_TPC=4 IOSIM_GEMM_STORE_CS=1 IOSIM_GEMM_VARIANT=3 NO_SASS=1 "$here/source_counters.sh" "$bin/iosim-kernels" "$out/sc" \
  "qk-tpc4-cs1-v3|gemm_kernel|--algo standard --pass fwd $shape_4k $tile"
echo "[ncu: $(( $(date +%s) - t0 )) s]"
. "$(dirname "$0")/gemm_variants.sh"  # bench VARIANT SHAPE EXE [ENV...]
for s in 4k 1k; do
  sh_var=shape_$s
  sh=${!sh_var}
  bench "$s base" "$sh" "$bin/iosim-kernels-base"
  bench "$s tpc=1" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=1
  for v in 0 1 2 3; do
    bench "$s tpc=4 cs=1 v=$v" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=4 IOSIM_GEMM_STORE_CS=1 IOSIM_GEMM_VARIANT=$v
  done
  bench "$s tpc=4 cs=0 v=3" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=4 IOSIM_GEMM_STORE_CS=0 IOSIM_GEMM_VARIANT=3
  bench "$s tpc=8 cs=1 v=3" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=8 IOSIM_GEMM_STORE_CS=1 IOSIM_GEMM_VARIANT=3
  bench "$s tpc=2 cs=1 v=3" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=2 IOSIM_GEMM_STORE_CS=1 IOSIM_GEMM_VARIANT=3
  bench "$s base again" "$sh" "$bin/iosim-kernels-base"
  "$bin/iosim-peer" gemm --algo standard --pass fwdbwd $sh --warmup 3 --iters 20 >> "$out/cublas.jsonl" 2>> "$out/bench.err"
done
echo "[bench: $(( $(date +%s) - t0 )) s]"
python3 - "$out/variants.jsonl" "$out/cublas.jsonl" <<'PY' | tee "$out/variants.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cub = {}
for l in open(sys.argv[2]):
    r = json.loads(l)
    if r.get("source") == "cublas":
        cub[(r["seq_q"], r["kernel"])] = r["median_ms"]
names = ["std_fwd_qk", "std_fwd_softmax", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_softmax", "std_bwd_dq", "std_bwd_dk"]
print("| variant | pass ms | " + " | ".join(names) + " |")
print("|---|---|" + "---|" * len(names))
for r in rows:
    ks = {k["name"]: k["median_ms"] for k in r["kernels"]}
    cell = lambda n: "%.3f" % ks[n] + (" (%.2f)" % (cub[(r["seq_q"], n)] / ks[n]) if (r["seq_q"], n) in cub else "")
    print("| %s | %.3f | " % (r["variant"], r["median_ms"]) + " | ".join(cell(n) for n in names) + " |")
PY
echo "[all: $(( $(date +%s) - t0 )) s]"
