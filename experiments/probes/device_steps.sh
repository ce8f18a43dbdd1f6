# Steps shared by the standard-attention device calls (std_regrid_run.sh, pitch_run.sh, softmax_stores_run.sh,
# gemm_spill_run.sh, h200_std_run.sh), sourced on the GPU machine with $OUT set.
#   unpack_bins ARCHIVE DIR       the carried executables (xz tar, unpacked with Python's lzma)
#   record_device                 $OUT/device.txt (GPU, driver) and $OUT/date.txt
#   gpu_tests DIR TEST...         each GPU test against DIR/iosim-kernels, its log in $OUT, one line each
#   standard_sanitize DIR         memcheck + racecheck of every standard configuration -> $OUT/sanitize-standard.md
#   standard_checks ARCHIVE DIR   the four above with the two standard tests
unpack_bins() {
  rm -rf "$2" && mkdir -p "$2"
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" "$2"
}
record_device() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
  date -u > "$OUT/date.txt"
}
gpu_tests() {
  local dir=$1 t
  shift
  for t in "$@"; do
    IOSIM_KERNELS_CLI=$dir/iosim-kernels $dir/$t --log_level=message --report_level=short > "$OUT/$t.log" 2>&1
    echo "$t: exit $? ($(grep -E 'test cases' "$OUT/$t.log" | tail -1))"
  done
}
standard_sanitize() {
  ONLY='^standard' scripts/gpu_sanitize.sh "$1/iosim-kernels" "$OUT/sanitize-standard.md" > /dev/null 2>&1
  echo "sanitize exit $?: $(grep -c '| clean |' "$OUT/sanitize-standard.md") clean rows"
}
# The checks before re-measuring standard rows: unpack, device, both standard GPU tests, sanitizer.
standard_checks() {
  unpack_bins "$1" "$2"
  record_device
  gpu_tests "$2" test_gpu_standard_fa1 test_gpu_standard_eager
  standard_sanitize "$2"
}
