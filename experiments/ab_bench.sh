#!/usr/bin/env bash
# A/B kernel timing: two iosim-kernels binaries (before and after a change) on
# the same shapes, in the same run, interleaved A B A B ... so that clock and
# thermal drift hit both alike. Each `bench` is the median of --iters CUDA-event
# timings (inputs rotated over buffer sets > 4x the L2); each shape is run
# ROUNDS times per binary and the report takes the median of those medians.
#   experiments/ab_bench.sh BIN_A BIN_B OUTDIR [ROUNDS]
# Writes OUTDIR/ab.jsonl (one line per bench run, with "binary": "A"|"B") and
# prints a table (experiments/ab_report.py).
set -uo pipefail
a=$1
b=$2
out=$3
rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
: > "$out/ab.jsonl"
shapes=(
  "--algo fa2 --pass fwd --batch 4 --heads 32 --seq 4096 --head-dim 64"
  "--algo fa2 --pass fwd --batch 4 --heads 32 --seq 4096 --head-dim 64 --causal"
  "--algo fa2 --pass fwd --batch 4 --heads 16 --seq 4096 --head-dim 128"
  "--algo fa2 --pass fwd --batch 4 --heads 16 --seq 4096 --head-dim 128 --causal"
  "--algo fa2 --pass bwd --batch 4 --heads 32 --seq 4096 --head-dim 64"
  "--algo fa2 --pass bwd --batch 4 --heads 16 --seq 4096 --head-dim 128 --causal"
  "--algo fa1 --pass fwd --batch 8 --heads 16 --seq 2048 --head-dim 64 --block-m 64 --block-n 64"
  "--algo fa1 --pass bwd --batch 8 --heads 16 --seq 1024 --head-dim 64 --block-m 64 --block-n 64"
  "--algo standard --pass fwd --batch 2 --heads 16 --seq 4096 --head-dim 64 --gemm-m 128 --gemm-n 128"
  "--algo standard --pass bwd --batch 2 --heads 16 --seq 2048 --head-dim 64 --gemm-m 128 --gemm-n 128"
)
for shape in "${shapes[@]}"; do
  for r in $(seq "$rounds"); do
    for which in A B; do
      bin=$a
      [ $which = B ] && bin=$b
      # shellcheck disable=SC2086
      line=$("$bin" bench $shape --iters 20 --json 2>> "$out/ab.err")
      [ -n "$line" ] && echo "$line" | python3 -c "
import json, sys
r = json.loads(sys.stdin.read()); r['binary'] = sys.argv[1]; r['shape'] = sys.argv[2]; r['round'] = int(sys.argv[3])
print(json.dumps(r))" "$which" "$shape" "$r" >> "$out/ab.jsonl"
    done
  done
done
python3 "$here/ab_report.py" "$out/ab.jsonl"
