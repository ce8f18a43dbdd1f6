#!/usr/bin/env bash
# On the GPU machine: time every compiled tile of every shape of shapes.txt with iosim-kernels bench.
#   experiments/explore/validate.sh BINS OUTDIR [--part K/N] [--predictions DIR] [--only REGEX]
# BINS: the iosim-kernels executable, a folder holding it, or scripts/gpu_build.sh's
#   build-gpu-carry/bins.tar.xz (unpacked to /tmp/iosim-grid-bins, as run_grid.sh does). Build it with
#   the FULL menu (gpu_build.sh's default): the tiles are the full menu's.
# --predictions DIR: the frozen predictions (predict.sh) whose tiles are timed; default
#   predictions/<profile> for the GPU nvidia-smi names (H100 -> h100-sxm5-80gb, H200 -> h200-sxm-141gb).
# --part K/N: the shapes i (0-based, comments skipped) with i % N == K-1. Default 1/1.
# Per shape and tile: OUTDIR/<shape>/<Br>x<Bc>.bench.json (+ .err): `iosim-kernels bench FLAGS
# --block-m Br --block-n Bc --warmup BENCH_WARMUP --iters BENCH_ITERS --json` (CUDA-event median).
# Tiles already measured are skipped (REDO=1: not), so a stopped run resumes. Per part:
# log-partKofN.txt, device-partKofN.txt (GPU, clocks, binary's sha256, the command, dates), and
# device-name.txt. After every shape OUTDIR is packed into TAR_TO (default
# $OUT/<OUTDIR's name>-partKofN.tar.gz when $OUT is set, as on the device machine).
# Env: BENCH_ITERS [7], BENCH_WARMUP [2], CONFIG_TIMEOUT [60] s per bench call, DRY_RUN=1 (print the
# commands and the count only; needs neither a GPU nor the binary), SHAPES [shapes.txt: another list
# of shapes in this folder, e.g. shapes-blind-2026-11-28.txt].
# Budget: about 360 bench calls of ~1-1.5 s (the process start dominates): ~8 minutes in all; split
# it with --part 1/2 and --part 2/2 when one call must stay shorter.
# Then, here: experiments/explore/analyze.py --predictions DIR OUTDIR.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shapes_file=$here/${SHAPES:-shapes.txt}
usage() { sed -n '2,3p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
bins=$1
out=$2
shift 2
part=1/1
pred=
only=
while [ $# -gt 0 ]; do
  case $1 in
    --part) part=$2; shift 2 ;;
    --predictions) pred=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) usage ;;
  esac
done
k=${part%/*}
n=${part#*/}
if ! [[ $k =~ ^[0-9]+$ && $n =~ ^[0-9]+$ ]] || [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then
  echo "validate: --part wants K/N with 1 <= K <= N, got '$part'" >&2; exit 2
fi
dry=${DRY_RUN:-}
iters=${BENCH_ITERS:-7}
warmup=${BENCH_WARMUP:-2}
limit=${CONFIG_TIMEOUT:-60}

# The binary (as run_grid.sh finds it).
if [ -n "$dry" ]; then
  bin=${bins%/}
  [ -d "$bins" ] && bin=$bins/iosim-kernels
elif [ -f "$bins" ] && [[ $bins == *.tar* ]]; then
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
[ -n "$dry" ] || [ -x "$bin" ] || { echo "validate: $bin is not an executable" >&2; exit 2; }

# The predictions: the GPU's profile unless given.
if [ -z "$pred" ]; then
  gpu=$( [ -n "$dry" ] && echo "${DRY_GPU:-H100}" || nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  case $gpu in
    *H200*) pred=$here/predictions/h200-sxm-141gb ;;
    *H100*) pred=$here/predictions/h100-sxm5-80gb ;;
    *) echo "validate: no predictions for GPU '$gpu'; run predict.sh with its profile and give --predictions DIR" >&2; exit 2 ;;
  esac
fi
[ -d "$pred" ] || { echo "validate: no predictions folder $pred (run experiments/explore/predict.sh)" >&2; exit 2; }

mapfile -t lines < <(grep -v '^#' "$shapes_file" | grep -v '^[[:space:]]*$' | awk -v k="$k" -v n="$n" '(NR - 1) % n == k - 1')
if [ -n "$only" ]; then
  mapfile -t lines < <(printf '%s\n' "${lines[@]}" | awk -F';' -v re="$only" '$1 ~ re')
fi

mkdir -p "$out"
sfx=-part${k}of${n}
log=$out/log$sfx.txt
[ -z "${TAR_TO:-}" ] && [ -n "${OUT:-}" ] && TAR_TO=$OUT/$(basename "$out")$sfx.tar.gz
pack() {
  [ -n "$dry" ] && return 0
  [ -n "${TAR_TO:-}" ] && tar czf "$TAR_TO.tmp" -C "$(dirname "$out")" "$(basename "$out")" && mv "$TAR_TO.tmp" "$TAR_TO"
}
if [ -z "$dry" ]; then
  {
    echo "part: $part of $shapes_file ($(sha256sum "$shapes_file" | cut -c1-16)), ${#lines[@]} shapes${only:+, --only $only}"
    echo "predictions: $pred"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader
    echo "binary: $bin ($(sha256sum "$bin" | cut -c1-16))"
    echo "command: $0 $bins $out --part $part --predictions $pred (BENCH_ITERS=$iters BENCH_WARMUP=$warmup)"
  } >> "$out/device$sfx.txt" 2>&1
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device-name.txt"
fi

t_start=$(date +%s)
calls=0
for l in "${lines[@]}"; do
  IFS=';' read -r name flags <<< "$l"
  csv=$pred/$name.csv
  [ -f "$csv" ] || { echo "$name: no predictions $csv (run predict.sh), skipped" | tee -a "$log"; continue; }
  mkdir -p "$out/$name"
  # The predicted tiles: columns block_m, block_n of explore's CSV.
  mapfile -t tiles < <(awk -F, 'NR > 1 {print $2 "x" $3}' "$csv")
  t0=$(date +%s); measured=0; failed=0
  for t in "${tiles[@]}"; do
    bm=${t%x*}; bn=${t#*x}
    cmd=("$bin" bench $flags --block-m "$bm" --block-n "$bn" --warmup "$warmup" --iters "$iters" --json)
    calls=$((calls + 1))
    if [ -n "$dry" ]; then
      echo "timeout $limit ${cmd[*]} > $out/$name/$t.bench.json"
      continue
    fi
    if [ -z "${REDO:-}" ] && [ -s "$out/$name/$t.bench.json" ]; then continue; fi
    if timeout "$limit" "${cmd[@]}" > "$out/$name/$t.bench.json" 2> "$out/$name/$t.err"; then
      measured=$((measured + 1))
    else
      failed=$((failed + 1))
    fi
  done
  [ -n "$dry" ] && continue
  echo "$name: ${#tiles[@]} tiles, $measured measured, $failed failed, $(( $(date +%s) - t0 )) s [$(( $(date +%s) - t_start )) s]" | tee -a "$log"
  pack
done
if [ -n "$dry" ]; then
  echo "# DRY_RUN: $calls bench calls in part $part (${#lines[@]} shapes)"
  exit 0
fi
echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ) ($(( $(date +%s) - t_start )) s)" >> "$out/device$sfx.txt"
pack
echo "validate: part $part: ${#lines[@]} shapes, $calls tiles in $(( $(date +%s) - t_start )) s; packed: ${TAR_TO:-(no TAR_TO)}"
