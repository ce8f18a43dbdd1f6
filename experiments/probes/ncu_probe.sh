# Sourced by the probes' run scripts (writeback_run.sh, merge_run.sh): one Nsight Compute run over
# a probe binary's launches, L2 flushed before each.
#   ncu_probe OUT KERNEL_REGEX METRICS PROBE CONFIG...
# Writes OUT/device.txt (date, GPU, clocks, ncu version), OUT/ncu.csv (raw: ncu's CSV with the
# probe's own stdout lines mixed in), OUT/ncu.err and OUT/configs.csv (the probe's lines: a header
# starting `index`, then one line per profiled launch, in launch order).
ncu_probe() {
  local out=$1 regex=$2 metrics=$3 probe=$4
  shift 4
  mkdir -p "$out"
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
    ncu --version | tail -1
  } > "$out/device.txt"
  cat "$out/device.txt"
  ncu --clock-control none --cache-control all -k "regex:$regex" --launch-skip 1 --metrics "$metrics" \
      --csv --page raw --print-units base "$probe" "$@" > "$out/ncu.csv" 2> "$out/ncu.err"
  echo "ncu exit $?"
  grep -E '^(index|[0-9]+,)' "$out/ncu.csv" > "$out/configs.csv"
}
