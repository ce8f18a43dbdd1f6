#!/usr/bin/env bash
# On the GPU machine: measure one part of the validation grid (experiments/validation/grid.txt).
#   experiments/validation/run_grid.sh BINS OUTDIR [--part K/N] [--grid FILE] [--only REGEX]
# BINS: the iosim-kernels executable, a folder holding it, or scripts/gpu_build.sh's
#   build-gpu-carry/bins.tar.xz (unpacked to /tmp/iosim-grid-bins with Python, as
#   scripts/gpu_device_run.sh does). Build it with the FULL menu (the default of gpu_build.sh):
#   the grid uses tiles that only the full menu compiles.
# --part K/N: the grid lines i (0-based, comments skipped) with i % N == K-1, so each part mixes
#   every algorithm and the parts take similar time. Default 1/1 (everything).
# --only REGEX: only configurations whose name matches (grep -E), e.g. to redo one.
# Per configuration, the same layout as experiments/validate_counters.sh (so build_csv.py reads
# both): OUTDIR/<name>.csv (+ .err): Nsight Compute, `ncu --clock-control none --cache-control
# all` (every profiled kernel starts with a flushed L2), one launch of the pass, validate_counters'
# metrics plus instruction counters and the clock; OUTDIR/<name>.bench.json (+ .bench.err):
# `iosim-kernels bench FLAGS --json`, CUDA-event median of BENCH_ITERS runs after BENCH_WARMUP.
# Per part (suffix -partKofN, so the parts' archives unpack into one OUTDIR): log-partKofN.txt, one
# line per configuration; device-partKofN.txt (GPU, clocks, ncu version, binary's sha256, the part
# and the grid's sha256); metrics-partKofN.txt (the ncu metrics used); and device-name.txt.
# Metrics: each extra counter has candidates, the first that `ncu --query-metrics` lists is used;
# if ncu still rejects the list, the metrics its error names are dropped (none named: all extras,
# leaving validate_counters.sh's base list, known good on the H200), the configuration is measured
# again and the rest of the part keeps to the shorter list.
# Partial results: after every configuration OUTDIR is packed into TAR_TO (default
# $OUT/<OUTDIR's name>-partKofN.tar.gz when $OUT is set, as on the device machine, which returns at most
# 8 files), written to a temporary name and renamed, so a run stopped at its limit leaves all it
# measured. Configurations whose .csv and .bench.json exist already are skipped (REDO=1: not).
# Env: BENCH_ITERS [20], BENCH_WARMUP [3], SKIP_NCU=1, SKIP_BENCH=1, TAR_TO=FILE.tar.gz,
#      CONFIG_TIMEOUT [240] seconds per ncu or bench command, DRY_RUN=1 (print the commands only;
#      needs neither a GPU nor the binary).
# Then, here: experiments/validation/build_csv.py GPU OUTDIR; experiments/validation/summarize.py CSV.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,4p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
bins=$1
out=$2
shift 2
part=1/1
grid=$here/grid.txt
only=
while [ $# -gt 0 ]; do
  case $1 in
    --part) part=$2; shift 2 ;;
    --grid) grid=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) usage ;;
  esac
done
k=${part%/*}
n=${part#*/}
if ! [[ $k =~ ^[0-9]+$ && $n =~ ^[0-9]+$ ]] || [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then
  echo "run_grid: --part wants K/N with 1 <= K <= N, got '$part'" >&2; exit 2
fi
[ -f "$grid" ] || { echo "run_grid: no grid file $grid" >&2; exit 2; }
dry=${DRY_RUN:-}
iters=${BENCH_ITERS:-20}
warmup=${BENCH_WARMUP:-3}
limit=${CONFIG_TIMEOUT:-240}

# The binary.
if [ -n "$dry" ]; then
  bin=${bins%/}
  [ -d "$bins" ] && bin=$bins/iosim-kernels
  case $bins in *.tar.xz|*.tar.gz|*.tar) bin=/tmp/iosim-grid-bins/iosim-kernels ;; esac
elif [ -f "$bins" ] && [[ $bins == *.tar* ]]; then
  # Unpacked once per machine (a later part on the same warm machine reuses it).
  sum=$(sha256sum "$bins" | cut -c1-16)
  if [ "$(cat /tmp/iosim-grid-bins/.from 2>/dev/null)" != "$sum" ]; then
    rm -rf /tmp/iosim-grid-bins && mkdir -p /tmp/iosim-grid-bins
    python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$bins" /tmp/iosim-grid-bins || exit 1
    echo "$sum" > /tmp/iosim-grid-bins/.from
  fi
  bin=/tmp/iosim-grid-bins/iosim-kernels
elif [ -d "$bins" ]; then
  bin=$bins/iosim-kernels
else
  bin=$bins
fi
[ -n "$dry" ] || [ -x "$bin" ] || { echo "run_grid: $bin is not an executable" >&2; exit 2; }

# The configurations of this part.
mapfile -t lines < <(grep -v '^#' "$grid" | grep -v '^[[:space:]]*$' | awk -v k="$k" -v n="$n" '(NR - 1) % n == k - 1')
if [ -n "$only" ]; then
  mapfile -t lines < <(printf '%s\n' "${lines[@]}" | awk -F';' -v re="$only" '$2 ~ re')
fi

# ncu metrics: validate_counters.sh's base list, then the extra counters (first listed candidate).
base=gpu__time_duration.sum,sm__cycles_elapsed.avg,launch__grid_size,dram__bytes_read.sum,dram__bytes_write.sum,\
l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_l1tex2xbar_write_bytes.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,\
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_requests_srcunit_tex_op_read.sum,\
lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_red.sum
extra_groups=(
  "sm__cycles_elapsed.avg.per_second"
  "smsp__inst_executed.sum sm__inst_executed.sum"
  "smsp__inst_executed_pipe_tensor_op_hmma.sum sm__inst_executed_pipe_tensor_op_hmma.sum sm__inst_executed_pipe_tensor.sum"
  "smsp__inst_executed_pipe_fma.sum sm__inst_executed_pipe_fma.sum"
  "smsp__inst_executed_pipe_fp32.sum"
  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
  "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum sm__sass_thread_inst_executed_op_fadd_pred_on.sum"
  "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum sm__sass_thread_inst_executed_op_fmul_pred_on.sum"
  "smsp__inst_executed_pipe_xu.sum sm__inst_executed_pipe_xu.sum"
  "sm__sass_inst_executed_op_ldsm.sum smsp__sass_inst_executed_op_ldsm.sum"
  "smsp__sass_inst_executed_op_shared_ld.sum sm__sass_inst_executed_op_shared_ld.sum"
)
mkdir -p "$out"
sfx=-part${k}of${n}
log=$out/log$sfx.txt
metrics_file=$out/metrics$sfx.txt
device_file=$out/device$sfx.txt
metrics=$base
if [ -z "$dry" ] && [ -z "${SKIP_NCU:-}" ]; then
  known=$(ncu --query-metrics 2>/dev/null | awk '{print $1}' | sort -u)
  nknown=$(printf '%s\n' "$known" | grep -c '__')
  for g in "${extra_groups[@]}"; do
    pick=
    for m in $g; do
      if [ "$nknown" -lt 50 ]; then pick=${pick:-$m}; break; fi  # no list: try the first, fall back below
      printf '%s\n' "$known" | grep -qx "${m%%.*}" && { pick=$m; break; }
    done
    [ -n "$pick" ] && metrics=$metrics,$pick
  done
  echo "ncu --query-metrics listed $nknown metrics" > "$metrics_file"
else
  for g in "${extra_groups[@]}"; do metrics=$metrics,${g%% *}; done
fi
echo "$metrics" | tr ',' '\n' >> "$metrics_file"

[ -z "${TAR_TO:-}" ] && [ -n "${OUT:-}" ] && TAR_TO=$OUT/$(basename "$out")$sfx.tar.gz
pack() {
  [ -n "$dry" ] && return 0
  [ -n "${TAR_TO:-}" ] && tar czf "$TAR_TO.tmp" -C "$(dirname "$out")" "$(basename "$out")" && mv "$TAR_TO.tmp" "$TAR_TO"
}

if [ -z "$dry" ]; then
  {
    echo "part: $part of $grid ($(sha256sum "$grid" | cut -c1-16)), ${#lines[@]} configurations${only:+, --only $only}"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
    ncu --version | tail -1
    echo "binary: $bin ($(sha256sum "$bin" | cut -c1-16))"
    echo "command: $0 $bins $out --part $part --grid $grid (BENCH_ITERS=$iters BENCH_WARMUP=$warmup)"
  } >> "$device_file" 2>&1
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device-name.txt"
fi

t_start=$(date +%s)
done_n=0
for l in "${lines[@]}"; do
  IFS=';' read -r cset name regex launches flags <<< "$l"
  cset=$(echo $cset); name=$(echo $name); regex=$(echo $regex); launches=$(echo $launches)
  count=${launches%@*}
  skip=0
  [ "$launches" != "$count" ] && skip=${launches#*@}
  ncu_cmd=(ncu --clock-control none --cache-control all --metrics "$metrics" --csv --page raw --print-units base
           -k "regex:$regex" --launch-skip "$skip" --launch-count "$count"
           "$bin" bench $flags --warmup 0 --iters 1 --l2-multiple 0.001)
  bench_cmd=("$bin" bench $flags --warmup "$warmup" --iters "$iters" --json)
  if [ -n "$dry" ]; then
    echo "# $cset $name"
    echo "timeout $limit ${ncu_cmd[*]} > $out/$name.csv 2> $out/$name.err"
    echo "timeout $limit ${bench_cmd[*]} > $out/$name.bench.json 2> $out/$name.bench.err"
    done_n=$((done_n + 1))
    continue
  fi
  if [ -z "${REDO:-}" ] && [ -s "$out/$name.csv" ] && [ -s "$out/$name.bench.json" ]; then
    echo "$name: measured already, skipped" | tee -a "$log"
    continue
  fi
  t0=$(date +%s)
  ncu_rc=; bench_rc=
  if [ -z "${SKIP_NCU:-}" ]; then
    timeout "$limit" "${ncu_cmd[@]}" > "$out/$name.csv" 2> "$out/$name.err"
    ncu_rc=$?
    tries=0
    while [ "$ncu_rc" -ne 0 ] && [ "$metrics" != "$base" ] && grep -qi "metric" "$out/$name.err" && [ $tries -lt 3 ]; do
      # Drop the extra metrics ncu names in its error; none named: keep to the base list.
      tries=$((tries + 1))
      errs=$(grep -i "error" "$out/$name.err")
      kept=$base
      for m in $(echo "${metrics#"$base"}" | tr ',' ' '); do
        printf '%s\n' "$errs" | grep -qwF "${m%%.*}" || kept=$kept,$m
      done
      [ "$kept" = "$metrics" ] && kept=$base
      echo "$name: ncu rejected the metric list (exit $ncu_rc): $(printf '%s\n' "$errs" | head -2 | tr '\n' ' ')-> now $(echo "$kept" | tr ',' '\n' | wc -l) metrics" | tee -a "$log"
      cp "$out/$name.err" "$out/$name.err.rejected$tries"
      metrics=$kept
      { echo "after $name: ncu rejected the list; from here on:"; echo "$metrics" | tr ',' '\n'; } >> "$metrics_file"
      ncu_cmd[6]=$metrics
      timeout "$limit" "${ncu_cmd[@]}" > "$out/$name.csv" 2> "$out/$name.err"
      ncu_rc=$?
    done
  fi
  t1=$(date +%s)
  if [ -z "${SKIP_BENCH:-}" ]; then
    timeout "$limit" "${bench_cmd[@]}" > "$out/$name.bench.json" 2> "$out/$name.bench.err"
    bench_rc=$?
  fi
  t2=$(date +%s)
  done_n=$((done_n + 1))
  echo "$name: ncu exit ${ncu_rc:-skipped} ($(grep -c '^"' "$out/$name.csv" 2>/dev/null) csv lines, $((t1 - t0)) s);" \
       "bench exit ${bench_rc:-skipped} ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["median_ms"], "ms")' "$out/$name.bench.json" 2>/dev/null), $((t2 - t1)) s)" \
       "[$done_n/${#lines[@]}, $(( $(date +%s) - t_start )) s]" \
    | tee -a "$log"
  pack
done
if [ -n "$dry" ]; then
  echo "# DRY_RUN: $done_n configurations in part $part; ncu metrics: $metrics"
  exit 0
fi
{
  echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ) ($(( $(date +%s) - t_start )) s)"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1
} >> "$device_file"
pack
echo "run_grid: part $part: $done_n configurations measured in $(( $(date +%s) - t_start )) s; packed: ${TAR_TO:-(no TAR_TO)}"
