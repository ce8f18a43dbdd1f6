#!/usr/bin/env bash
# On the GPU machine: measure every configuration of configs.sh (FA2 and split-KV decode).
#   experiments/decode/run_device.sh BINS OUTDIR
# BINS: the iosim-kernels executable or a folder holding it (scripts/gpu_build.sh's
#   bins.tar.xz unpacked, e.g. by scripts/gpu_device_run.sh into /tmp/iosim-bins). The CI menu
#   has both tiles used here (fa2 d128 128x64, splitkv d128 16x64).
# Per configuration, into OUTDIR:
#   NAME.bench.json  `iosim-kernels bench FLAGS --json`: CUDA-event median of BENCH_ITERS runs
#                    after BENCH_WARMUP, inputs rotated over enough buffer sets to exceed 4 L2s
#                    (so K/V come from DRAM, as in decoding); the JSON says the splits used.
#   NAME.csv         Nsight Compute (unless SKIP_NCU=1), `--cache-control all` (L2 flushed before
#                    each kernel), one run of the pass: per kernel its grid, duration and DRAM bytes.
# and device.txt (GPU, driver, ncu version, the binary's sha256) and log.txt (one line per
# configuration). Configurations whose outputs exist already are skipped (REDO=1: not).
# Env: BENCH_ITERS [50], BENCH_WARMUP [10], SKIP_NCU=1, CONFIG_TIMEOUT [300] seconds per command,
#      PART=K/N (only configurations i with i % N == K-1, 0-based: parts of similar length, so each
#      fits one device command), TAR_TO=FILE.tar.gz (OUTDIR packed there after every configuration,
#      so a run stopped at its limit keeps what it measured; the device returns few files).
# Then, here: experiments/decode/build.py OUTDIR (CSV, PNG, README tables).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { sed -n '2,3p' "$0" >&2; exit 2; }
bin=$1
[ -d "$bin" ] && bin=$bin/iosim-kernels
out=$2
[ -x "$bin" ] || { echo "run_device: $bin is not an executable" >&2; exit 2; }
mkdir -p "$out"
iters=${BENCH_ITERS:-50}
warmup=${BENCH_WARMUP:-10}
limit=${CONFIG_TIMEOUT:-300}
metrics=launch__grid_size,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
  command -v ncu > /dev/null && ncu --version | tail -1
  echo "binary sha256 $(sha256sum "$bin" | cut -c1-64)"
  date -u
} > "$out/device.txt" 2>&1
log=$out/log.txt
part=${PART:-1/1}
k=${part%/*}
n=${part#*/}
if ! [[ $k =~ ^[0-9]+$ && $n =~ ^[0-9]+$ ]] || [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then
  echo "run_device: PART wants K/N with 1 <= K <= N, got '$part'" >&2; exit 2
fi
i=-1
"$here/configs.sh" | while read -r name flags; do
  i=$((i + 1))
  [ $((i % n)) -eq $((k - 1)) ] || continue
  if [ -z "${REDO:-}" ] && [ -s "$out/$name.bench.json" ] && { [ -n "${SKIP_NCU:-}" ] || [ -s "$out/$name.csv" ]; }; then
    continue
  fi
  # shellcheck disable=SC2086
  timeout "$limit" "$bin" bench $flags --warmup "$warmup" --iters "$iters" --json \
    > "$out/$name.bench.json" 2> "$out/$name.bench.err"
  bench_rc=$?
  ncu_rc=skipped
  if [ -z "${SKIP_NCU:-}" ]; then
    # shellcheck disable=SC2086
    timeout "$limit" ncu --clock-control none --cache-control all --metrics "$metrics" --csv --page raw \
      --print-units base "$bin" bench $flags --warmup 0 --iters 1 --l2-multiple 0.001 \
      > "$out/$name.csv" 2> "$out/$name.err"
    ncu_rc=$?
  fi
  echo "$name bench=$bench_rc ncu=$ncu_rc $(grep -o '"median_ms": [0-9.e+-]*' "$out/$name.bench.json")" | tee -a "$log"
  if [ -n "${TAR_TO:-}" ]; then
    tar czf "$TAR_TO.tmp" -C "$(dirname "$out")" "$(basename "$out")" && mv "$TAR_TO.tmp" "$TAR_TO"
  fi
done
