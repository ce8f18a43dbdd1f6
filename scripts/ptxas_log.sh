#!/usr/bin/env bash
# CUDA compiler launcher (kernels/CMakeLists.txt): runs one nvcc command and
# moves ptxas's register reports (-Xptxas=-v: "ptxas info ..." and the
# "N bytes stack frame, ..." lines) out of the build output into
# LOG_DIR/<object file name>.log, one file per object so parallel compiles do
# not interleave. Everything else (errors, warnings) still goes to stderr.
#   ptxas_log.sh LOG_DIR nvcc ARGS...
set -uo pipefail
log_dir=$1
shift
object=unknown.o
prev=
for arg in "$@"; do
  [ "$prev" = "-o" ] && object=$arg
  prev=$arg
done
mkdir -p "$log_dir"
log="$log_dir/$(basename "$object").log"
err=$(mktemp)
"$@" 2> "$err"
rc=$?
grep -E '^ptxas info|^ +[0-9]+ bytes stack frame' "$err" > "$log"
grep -vE '^ptxas info|^ +[0-9]+ bytes stack frame' "$err" >&2
rm -f "$err"
exit $rc
