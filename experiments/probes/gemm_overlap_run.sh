#!/usr/bin/env bash
# On the GPU machine (issue 11): what limits the standard GEMM std_fwd_qk (S = Q K^T, K = 128) and
# whether a CTA computing several output tiles in turn helps. Nsight Compute on one launch of
# std_fwd_qk (the kernel before the change, and after it with 4 tiles per CTA), then
# per-kernel timings of the variants (the IOSIM_GEMM_* knobs of that build's launcher), cuBLAS on
# the same GEMMs, and a correctness / sanitizer check of the multi-tile path.
#   experiments/probes/gemm_overlap_run.sh BINDIR OUTDIR
# BINDIR holds iosim-kernels (after), iosim-kernels-base (before), iosim-peer, test_gpu_standard_fa1.
# The IOSIM_GEMM_* knobs existed only in the measured build (experiments/results/
# 2026-11-28-h100-gemm-overlap/README.md), not in the committed launcher: against it they do nothing.
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; ncu --version | tail -1; date -u; } > "$out/device.txt" 2>&1
cat "$out/device.txt"
shape_4k="--batch 2 --heads 16 --seq 4096 --head-dim 128 --layout bhsd"
shape_1k="--batch 16 --heads 16 --seq 1024 --head-dim 64 --layout bhsd"
tile="--gemm-m 128 --gemm-n 128 --gemm-k 64"
t0=$(date +%s)

# 1. Nsight Compute on the first GEMM launch of the forward pass (std_fwd_qk).
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
metrics=dram__bytes_write.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,smsp__warp_issue_stalled_drain_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__cycles_active.avg,sm__cycles_elapsed.avg
ncu_one() {  # name binary env...
  local name=$1 exe=$2
  shift 2
  env "$@" timeout 240 ncu --clock-control none $sections --metrics "$metrics" -k regex:gemm_kernel --launch-count 1 \
    "$exe" bench --algo standard --pass fwd $shape_4k $tile --warmup 0 --iters 1 > "$out/ncu-$name.txt" 2>&1
  echo "ncu $name: exit $?"
}
ncu_one base "$bin/iosim-kernels-base"
ncu_one tpc4 "$bin/iosim-kernels" IOSIM_GEMM_TPC=4
echo "[ncu: $(( $(date +%s) - t0 )) s]"

# 2. Per-kernel times (fwd + bwd, one event after each launch), variant by variant.
. "$(dirname "$0")/gemm_variants.sh"  # bench VARIANT SHAPE EXE [ENV...]
for s in 4k 1k; do
  sh_var=shape_$s
  sh=${!sh_var}
  bench "$s base" "$sh" "$bin/iosim-kernels-base"
  for tpc in 1 2 4 8; do
    for cs in 0 1; do
      bench "$s tpc=$tpc cs=$cs" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=$tpc IOSIM_GEMM_STORE_CS=$cs
    done
  done
  bench "$s tpc=2 sepc" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=2 IOSIM_GEMM_SEP_C=1
  bench "$s tpc=4 sepc" "$sh" "$bin/iosim-kernels" IOSIM_GEMM_TPC=4 IOSIM_GEMM_SEP_C=1
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
names = ["std_fwd_qk", "std_fwd_pv", "std_bwd_dv", "std_bwd_dp", "std_bwd_dq", "std_bwd_dk"]
print("| variant | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for r in rows:
    ks = {k["name"]: k["median_ms"] for k in r["kernels"]}
    print("| %s | " % r["variant"] + " | ".join("%.3f (%.2f)" % (ks[n], cub.get((r["seq_q"], n), float("nan")) / ks[n]) for n in names) + " |")
PY

# 3. The multi-tile path against the double-precision reference, and under the sanitizer.
for tpc in 1 2 3; do
  IOSIM_GEMM_TPC=$tpc "$bin/test_gpu_standard_fa1" --run_test=standard_every_compiled_gemm_tile_matches_reference \
    --log_level=message --report_level=short > "$out/test-tpc$tpc.log" 2>&1
  echo "test_gpu_standard_fa1 (GEMM tiles) tpc=$tpc: exit $? ($(tail -1 "$out/test-tpc$tpc.log"))"
done
for tool in memcheck racecheck; do
  for flags in "--head-dim 128 --batch 1 --heads 2 --seq 384 --gemm-m 128 --gemm-n 128 --gemm-k 64" \
               "--head-dim 64 --batch 1 --heads 2 --kv-heads 1 --seq-q 130 --seq-k 300 --gemm-m 64 --gemm-n 64" \
               "--head-dim 72 --batch 1 --heads 2 --seq-q 150 --seq-k 290 --gemm-m 128 --gemm-n 128 --gemm-k 32"; do
    IOSIM_GEMM_TPC=2 compute-sanitizer --tool $tool --error-exitcode 99 "$bin/iosim-kernels" check --algo standard --pass bwd $flags \
      > "$out/sanitize.log.tmp" 2>&1
    rc=$?
    echo "sanitize $tool tpc=2 [$flags]: exit $rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize.log.tmp" | tail -1)"
    cat "$out/sanitize.log.tmp" >> "$out/sanitize.log"
  done
done
rm -f "$out/sanitize.log.tmp"
echo "[all: $(( $(date +%s) - t0 )) s]"
