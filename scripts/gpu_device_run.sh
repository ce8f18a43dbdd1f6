#!/usr/bin/env bash
# The one command a device call runs (see kernels/README.md): GPU tests,
# compute-sanitizer, the benchmark against PyTorch, and Nsight Compute on the
# main kernels; everything lands under $OUT (results.tar.gz plus the tables).
#   scripts/gpu_device_run.sh BINS [tests|sanitize|bench|quickbench|stdbench|sweep|fwdsweep|ncu|sass|calibrate ...]
# BINS is build-gpu-carry/bins.tar.xz from scripts/gpu_build.sh (iosim-kernels,
# iosim and the test_gpu_* executables) or a folder holding them. With no step
# names: tests sanitize bench ncu.
set -uo pipefail
bins=$1
shift
if [ -f "$bins" ]; then
  bindir=/tmp/iosim-bins
  mkdir -p "$bindir"
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" "$bindir" || exit 1
else
  bindir=$bins
fi
steps=${*:-tests sanitize bench ncu}
out=${OUT:-/tmp/iosim-out}
r=$out/r
mkdir -p "$r"
nvidia-smi > "$r/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$r/nvidia-smi.txt" 2>&1
echo "device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); pwd $(pwd); date $(date -u)"
cuobjdump -res-usage "$bindir/iosim-kernels" > "$r/res-usage.txt" 2>&1

# One line per `iosim-kernels bench --json` record of a sweep file.
print_sweep() {
  python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r['pass'], 'd=%d' % r['head_dim'], '%dx%d' % (r['block_m'], r['block_n']), 'causal' if r['causal'] else 'dense ', '%.3f ms' % r['median_ms'], '%.1f TFLOP/s' % r['tflops'])
" "$1"
}

for step in $steps; do
  t0=$(date +%s)
  case $step in
    tests)
      export IOSIM_KERNELS_CLI=$bindir/iosim-kernels  # for test_gpu_launch_checks
      export IOSIM_CLI=$bindir/iosim                  # for test_gpu_calibrate (ncu runs its probe mode)
      for t in "$bindir"/test_gpu_*; do
        "$t" --log_level=message --report_level=short > "$r/$(basename "$t").log" 2>&1
        echo "$(basename "$t"): exit $? ($(tail -1 "$r/$(basename "$t").log"))"
      done ;;
    sanitize)
      scripts/gpu_sanitize.sh "$bindir/iosim-kernels" "$r/sanitize.md" | tail -20 ;;
    bench)
      experiments/bench_attention.sh "$bindir/iosim-kernels" "$r" > "$r/bench.log" 2>&1
      echo "bench exit $?"; cat "$r"/*attention-bench.md 2>/dev/null | tail -30 ;;
    quickbench)
      experiments/bench_attention.sh "$bindir/iosim-kernels" "$r" --quick > "$r/bench.log" 2>&1
      echo "bench exit $?"; cat "$r"/*attention-bench.md 2>/dev/null | tail -14 ;;
    stdbench)
      # Standard attention against cuBLAS, the DRAM copy and eager PyTorch (issue 11; a few minutes).
      experiments/bench_attention.sh "$bindir/iosim-kernels" "$r" --standard > "$r/stdbench.log" 2>&1
      echo "stdbench exit $?"; grep -i "failed\|error" "$r/stdbench.log" | head -10; cat "$r"/*standard-bench.md 2>/dev/null ;;
    sweep)
      # Tile sweep at N=4096 (B=4, H*d=2048, fp16, non-causal and causal): which compiled tile is fastest.
      for spec in "fwd 64 128x128 128x64 64x128 64x64 256x64 256x128 128x32" \
                  "fwd 128 128x64 128x128 64x128 64x64 128x32 256x64" \
                  "bwd 64 128x128 64x128 128x64 64x64 64x256 128x32" \
                  "bwd 128 64x128 64x64 128x64 32x128 128x128 128x32"; do
        set -- $spec
        pass=$1 d=$2
        shift 2
        for tile in "$@"; do
          for causal in "" "--causal"; do
            "$bindir/iosim-kernels" bench --algo fa2 --pass "$pass" --batch 4 --heads $((2048 / d)) --seq 4096 \
              --head-dim "$d" --block-m "${tile%x*}" --block-n "${tile#*x}" $causal --iters 20 --json >> "$r/sweep.jsonl" 2>> "$r/sweep.err"
          done
        done
      done
      print_sweep "$r/sweep.jsonl" ;;
    fwdsweep)
      # Forward-only tile sweep at N=4096 (B=4, H*d=2048, fp16, non-causal and causal); tiles from
      # IOSIM_FWD_SWEEP_D64 / IOSIM_FWD_SWEEP_D128 (space-separated BrxBc), defaults below.
      for d in 64 128; do
        if [ $d = 64 ]; then tiles=${IOSIM_FWD_SWEEP_D64:-128x128 128x64 64x128 256x64}
        else tiles=${IOSIM_FWD_SWEEP_D128:-256x64 128x64 128x128 64x128}; fi
        for tile in $tiles; do
          for causal in "" "--causal"; do
            "$bindir/iosim-kernels" bench --algo fa2 --pass fwd --batch 4 --heads $((2048 / d)) --seq 4096 \
              --head-dim "$d" --block-m "${tile%x*}" --block-n "${tile#*x}" $causal --iters 30 --json >> "$r/fwdsweep.jsonl" 2>> "$r/fwdsweep.err"
          done
        done
      done
      print_sweep "$r/fwdsweep.jsonl" ;;
    sass)
      # SASS of the four main fp16 kernels, to read register use, LDL/STL and the MMA/LDSM mix.
      for o in "$bindir"/obj/*.o; do
        cuobjdump -sass "$o" > "$r/sass-$(basename "$o" .cu.o).txt" 2>&1
      done
      # Keep FlashAttention-2's default tiles (fwd d64 128x128, d128 128x64; bwd d64 128x128, d128 64x128) and fwd d128 256x64.
      python3 - "$r" <<'PY'
import glob, os, re, sys
keep = ["fa2_forward_kernelI6__halfLi64ELi128ELi128E", "fa2_forward_kernelI6__halfLi128ELi128ELi64E",
        "fa2_forward_kernelI6__halfLi128ELi256ELi64E",
        "fa2_backward_kernelI6__halfLi64ELi128ELi128E", "fa2_backward_kernelI6__halfLi128ELi64ELi128E"]
ops = ["HMMA", "LDSM", "LDL", "STL", "LDGSTS", "MUFU", "BAR", "SHFL", "REDG", "RED"]
with open(sys.argv[1] + "/sass-main.txt", "w") as out:
    for path in sorted(glob.glob(sys.argv[1] + "/sass-fa2_*.txt")):
        for block in re.split(r"\n\s*Function : ", open(path).read()):
            name = block.split("\n", 1)[0].strip()
            if any(k in name for k in keep):
                print(name[:80], {op: len(re.findall(r"\b" + op + r"\b", block)) for op in ops})
                out.write("Function : " + block + "\n")
        os.remove(path)
PY
      ;;
    calibrate)
      # `iosim calibrate` (full benchmarks, Nsight Compute included) -> $OUT/<name>.yaml, then its GPU test.
      # IOSIM_CALIBRATE_NAME names the profile (e.g. h200-sxm-141gb); default: the GPU's name.
      name=${IOSIM_CALIBRATE_NAME:-$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-+|-+$//g')}
      "$bindir/iosim" calibrate --out "$out/$name.yaml" 2> "$r/calibrate-$name.log"
      echo "iosim calibrate: exit $? -> $out/$name.yaml"
      tail -12 "$r/calibrate-$name.log"
      cp "$out/$name.yaml" "$r/" 2>/dev/null
      IOSIM_CLI=$bindir/iosim "$bindir/test_gpu_calibrate" --log_level=message --report_level=short > "$r/test_gpu_calibrate.log" 2>&1
      echo "test_gpu_calibrate: exit $? ($(tail -1 "$r/test_gpu_calibrate.log"))" ;;
    ncu)
      metrics=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.sum,dram__bytes_read.sum
      for cfg in "fwd 64 fa2_forward" "fwd 128 fa2_forward" "bwd 64 fa2_backward_kernel" "bwd 128 fa2_backward_kernel"; do
        set -- $cfg
        h=$((2048 / $2))
        ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy \
          --section LaunchStats --metrics "$metrics" -k "regex:$3" --launch-skip 1 --launch-count 1 \
          "$bindir/iosim-kernels" bench --algo fa2 --pass "$1" --batch 4 --heads $h --seq 4096 --head-dim "$2" \
          --warmup 1 --iters 1 > "$r/ncu-$1-d$2.txt" 2>&1
        echo "ncu $1 d$2: exit $?"
        grep -E "Duration|Compute \(SM\) Throughput|hmma|bank_conflicts|Registers Per|Achieved Occupancy|local_op_ld|xu.sum" "$r/ncu-$1-d$2.txt" | head -12
      done ;;
  esac
  echo "[step $step: $(( $(date +%s) - t0 )) s]"
done
tar czf "$out/results.tar.gz" -C "$out" r
cp "$r"/*attention-bench.md "$r"/*standard-bench.md "$r"/sanitize.md "$out/" 2>/dev/null
ls -la "$out"
