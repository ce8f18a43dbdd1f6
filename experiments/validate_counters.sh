#!/usr/bin/env bash
# On the GPU machine: for every line of one or more configuration files (default
# experiments/validate_configs.txt; see experiments/calibrate_configs.txt for the format),
#   1. Nsight Compute counters of our kernels (ncu --clock-control none, default
#      --cache-control all: every profiled kernel starts with a flushed L2), one launch
#      of the pass: OUTDIR/<name>.csv (+ .err);
#   2. CUDA-event timing of the whole pass: `iosim-kernels bench FLAGS --json` (median of
#      --iters runs after --warmup runs, inputs rotated over buffer sets > 4x the L2):
#      OUTDIR/<name>.bench.json (+ .bench.err).
# ncu's single-launch kernel times and bench's medians differ (clocks ramping, the L2 flush,
# launch gaps); the engine is compared with ncu's per-kernel times (the bench medians of the
# passes agree with their sums within ~2% here). The validation grid's run_grid.sh supersedes
# this script (experiments/validation/README.md); build_csv.py --legacy reads its output.
# Usage: experiments/validate_counters.sh IOSIM_KERNELS_BINARY OUTDIR [CONFIG_FILE ...]
# Env: BENCH_ITERS [20], BENCH_WARMUP [3], SKIP_NCU=1, SKIP_BENCH=1,
#      TAR_TO=FILE.tar.gz: re-pack OUTDIR into FILE after every configuration, so that a
#      run stopped at its time limit still leaves what it measured.
# Then, here: experiments/compare_counters.py OUTDIR PROFILE, or experiments/validation/build_csv.py GPU OUTDIR --legacy.
set -uo pipefail
bin=$1
out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
files=("$@")
[ ${#files[@]} -eq 0 ] && files=("$here/validate_configs.txt")
iters=${BENCH_ITERS:-20}
warmup=${BENCH_WARMUP:-3}
mkdir -p "$out"
# lts__t_*: L2 sectors / requests looked up from the SMs (after request merging), by kind;
# launch__grid_size identifies which launch was profiled; sm__cycles_elapsed gives the clock.
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg,launch__grid_size,dram__bytes_read.sum,dram__bytes_write.sum,\
l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,\
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_requests_srcunit_tex_op_read.sum,\
lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_red.sum
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
  ncu --version | tail -1
  echo "binary: $bin ($(sha256sum "$bin" | cut -c1-16))"
  echo "command: $0 $bin $out ${files[*]} (BENCH_ITERS=$iters BENCH_WARMUP=$warmup)"
} > "$out/device.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device-name.txt"

# Packed to a temporary name and renamed, so a kill in the middle leaves the last whole archive.
pack() {
  [ -n "${TAR_TO:-}" ] && tar czf "$TAR_TO.tmp" -C "$(dirname "$out")" "$(basename "$out")" && mv "$TAR_TO.tmp" "$TAR_TO"
}

for cfgfile in "${files[@]}"; do
  [ -f "$cfgfile" ] || cfgfile=$here/$cfgfile
  grep -v '^#' "$cfgfile" | while IFS=';' read -r name regex launches flags; do
    name=$(echo $name); regex=$(echo $regex); launches=$(echo $launches)
    [ -z "$name" ] && continue
    count=${launches%@*}
    skip=0
    [ "$launches" != "$count" ] && skip=${launches#*@}
    t0=$(date +%s)
    ncu_rc=; bench_rc=
    if [ -z "${SKIP_NCU:-}" ]; then
      # shellcheck disable=SC2086
      ncu --clock-control none --cache-control all --metrics "$metrics" --csv --page raw --print-units base \
        -k "regex:$regex" --launch-skip "$skip" --launch-count "$count" \
        "$bin" bench $flags --warmup 0 --iters 1 --l2-multiple 0.001 > "$out/$name.csv" 2> "$out/$name.err"
      ncu_rc=$?
    fi
    t1=$(date +%s)
    if [ -z "${SKIP_BENCH:-}" ]; then
      # shellcheck disable=SC2086
      "$bin" bench $flags --warmup "$warmup" --iters "$iters" --json > "$out/$name.bench.json" 2> "$out/$name.bench.err"
      bench_rc=$?
    fi
    t2=$(date +%s)
    echo "$name: ncu exit ${ncu_rc:-skipped} ($(grep -c '^"' "$out/$name.csv" 2>/dev/null) csv lines, $((t1 - t0)) s);" \
         "bench exit ${bench_rc:-skipped} ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["median_ms"], "ms")' "$out/$name.bench.json" 2>/dev/null), $((t2 - t1)) s)" \
      | tee -a "$out/log.txt"
    pack
  done
done
echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$out/device.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> "$out/device.txt" 2>&1
pack
