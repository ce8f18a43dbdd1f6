#!/usr/bin/env bash
# On the GPU machine: Nsight Compute's per-instruction counters (SourceCounters section: executed
# instructions, threads, warp-state samples per SASS instruction) and the SASS listing of one
# kernel per configuration, so that a warp program can be compared with what each instruction of
# the kernel really executed (loop trip counts, spin-waits, which warps run what).
#   experiments/probes/source_counters.sh IOSIM_KERNELS OUTDIR 'NAME|KERNEL_REGEX|BENCH_FLAGS'...
# Writes OUTDIR/NAME.ncu-rep, NAME-source.csv.xz (ncu --page source --print-source sass --csv,
# xz-compressed: a few MB each, committed compressed),
# NAME-raw.csv (the sections' metrics) and OUTDIR/kernels.sass.gz (cuobjdump -sass of the binary;
# NO_SASS=1: not).
# Read with experiments/probes/source_table.py.
set -uo pipefail
[ $# -ge 3 ] || { sed -n '6p' "$0" >&2; exit 2; }
bin=$1
out=$2
shift 2
mkdir -p "$out"
[ -n "${NO_SASS:-}" ] || cuobjdump -sass "$bin" 2> "$out/cuobjdump.err" | gzip > "$out/kernels.sass.gz"
for arg in "$@"; do
  IFS='|' read -r name regex flags <<< "$arg"
  ncu --clock-control none --cache-control all --kernel-name "regex:$regex" --launch-count 1 \
      --section SourceCounters --section WarpStateStats --section SchedulerStats --import-source no \
      -f -o "$out/$name" "$bin" bench $flags --warmup 0 --iters 1 > "$out/$name.log" 2>&1 ||
    { echo "source_counters: ncu failed for $name (see $out/$name.log)" >&2; continue; }
  ncu --import "$out/$name.ncu-rep" --page source --print-source sass --csv > "$out/$name-source.csv" \
      2> "$out/$name-source.err" || echo "source_counters: source page export failed for $name" >&2
  xz -9 -f "$out/$name-source.csv"
  ncu --import "$out/$name.ncu-rep" --page raw --csv --print-units base > "$out/$name-raw.csv" 2>> "$out/$name-source.err"
done
