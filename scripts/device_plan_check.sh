#!/usr/bin/env bash
# One device call that checks the kernels after a change to the plan or the
# kernels: the GPU tests (numerics, launch checks, the step logs against the
# plan), compute-sanitizer, an interleaved A/B benchmark against the binary of
# an earlier commit, and a static SASS opcode histogram of every kernel.
#   scripts/device_plan_check.sh NEW_BINS OLD_BINS [steps...]
# NEW_BINS, OLD_BINS: bins.tar.xz from scripts/gpu_build.sh (carry both folders); OLD_BINS '-'
# when no step needs it.
# Steps (default all): tests sanitize ab sass. Results under $OUT: results.tar.gz
# (tests, sanitizer), ab.tar.gz (ab.jsonl, table), sass-hist.json.xz, sass-keep.txt.xz.
set -uo pipefail
new=$1
old=$2
shift 2
steps=${*:-tests sanitize ab sass}
out=${OUT:-/tmp/iosim-out}
mkdir -p "$out" /tmp/iosim-old
if [ "$old" != - ]; then
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$old" /tmp/iosim-old || exit 1
fi
gpu_steps=
for s in $steps; do
  case $s in tests|sanitize) gpu_steps="$gpu_steps $s" ;; esac
done
# Unpacks NEW_BINS into /tmp/iosim-bins (also when no GPU step runs).
# shellcheck disable=SC2086
timeout "${TESTS_TIMEOUT:-600}" scripts/gpu_device_run.sh "$new" ${gpu_steps:-none}
rm -rf "$out/r"  # packed in results.tar.gz; a call returns at most 8 files
for s in $steps; do
  t0=$(date +%s)
  case $s in
    ab)
      experiments/ab_bench.sh /tmp/iosim-old/iosim-kernels /tmp/iosim-bins/iosim-kernels "$out/ab" 3 | tee "$out/ab/table.txt"
      tar czf "$out/ab.tar.gz" -C "$out" ab && rm -rf "$out/ab" ;;
    sass)
      cuobjdump -sass /tmp/iosim-bins/iosim-kernels |
        python3 scripts/sass_histogram.py "$out/sass-hist.json" --keep "${SASS_KEEP:-fa2_forward_kernelI6__halfLi(64ELi128ELi128|128ELi128ELi64)E|fa2_backward_kernelI6__halfLi(64ELi128ELi128|128ELi64ELi128)E|fa1_(forward|backward)_kernelI6__half.*Li64ELi64ELi64E|gemm_kernelI6__halfLi128ELi128ELi32E|softmax|fa2_bwd_(preprocess|convert)}" "$out/sass-keep.txt"
      xz -9 "$out/sass-hist.json" "$out/sass-keep.txt" ;;
  esac
  echo "[step $s: $(( $(date +%s) - t0 )) s]"
done
ls -la "$out"
