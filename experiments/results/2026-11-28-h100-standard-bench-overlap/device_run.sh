#!/usr/bin/env bash
# The final device call (issue 11): stdbench, the standard GPU tests, the standard GEMM sanitizer configs.
set -uo pipefail
b=/tmp/b; o=/tmp/o
mkdir -p $b $o
python3 -c "import tarfile; tarfile.open('build-gpu-carry-gemm-small/bins.tar.xz').extractall('$b')" || exit 1
OUT=$o/std timeout 110 scripts/gpu_device_run.sh $b stdbench
export IOSIM_KERNELS_CLI=$b/iosim-kernels
for t in "test_gpu_standard_fa1 --run_test=!fa1_every_compiled_block_size_matches_reference"; do
  set -- $t
  timeout 60 $b/$1 "${@:2}" --log_level=message --report_level=short > $o/$1.log 2>&1
  echo "$t: exit $? ($(tail -1 $o/$1.log))" | tee -a $o/tests.txt
done
{
  echo "# compute-sanitizer on the standard configurations of scripts/gpu_sanitize.sh"
  echo; echo "- GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); $(date -u); $(compute-sanitizer --version | tail -1)"; echo
  echo "| config | tool | exit | summary |"; echo "|---|---|---|---|"
} > $o/sanitize.md
small="--batch 1 --heads 2 --kv-heads 1 --seq-q 200 --seq-k 263 --causal"
grep -E '^  "standard (fwd|bwd) d(64|72|128) (fp16|GEMM)' scripts/gpu_sanitize.sh | sed -E 's/^  "//; s/"$//' > $o/configs.txt
while IFS='|' read -r name flags; do
  eval "flags=\"$flags\""
  for tool in memcheck racecheck; do
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 99 $b/iosim-kernels check $flags > $o/san.tmp 2>&1
    rc=$?
    echo "| $name | $tool | $rc | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $o/san.tmp | tail -1) | \`$flags\` |" | tee -a $o/sanitize.md
    cat $o/san.tmp >> $o/sanitize.log
  done
done < $o/configs.txt
