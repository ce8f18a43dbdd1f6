#!/usr/bin/env bash
# Wall time of exact IO counting (no memory model): GPT-2 medium fwd+bwd for
# every algorithm, and FA2/FA1/standard at N = 1M tokens (64-bit counts).
# Usage: experiments/bench_count.sh [path/to/iosim]
set -euo pipefail
iosim=${1:-build/sim/iosim}
t() {  # prints seconds and the total bytes counted
  local start end out
  start=$(date +%s.%N)
  out=$("$iosim" simulate "$@" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["global"]["total_bytes"], j["formula"]["equals_trace"])')
  end=$(date +%s.%N)
  printf '%8.3f s  %s  | %s\n' "$(echo "$end - $start" | bc)" "$out" "$*"
}
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F)"
for algo in standard fa1 fa2; do
  t --profile a100-sxm4-40gb --algo $algo --pass fwdbwd --batch 64 --heads 16 --seq 1024 --head-dim 64
done
t --profile h100-sxm5-80gb --algo fa2 --pass fwd --seq 1048576 --head-dim 128 --block-m 128 --block-n 64
t --profile h100-sxm5-80gb --algo fa2 --pass fwdbwd --seq 1048576 --head-dim 128 --block-m 128 --block-n 64 --causal
t --profile h100-sxm5-80gb --algo fa1 --pass fwd --seq 1048576 --head-dim 64 --block-m 64 --block-n 128
t --profile h100-sxm5-80gb --algo standard --pass fwd --seq 1048576 --head-dim 64
