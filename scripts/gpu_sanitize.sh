#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck on a small configuration of every
# kernel the harness runs (FlashAttention-2, FlashAttention-1, standard
# attention, standard-eager, split-KV and FlashAttention-3; forward, and backward after its
# forward), on the GPU machine.
#   [ONLY=REGEX] scripts/gpu_sanitize.sh BIN REPORT.md   (ONLY: the configurations whose name matches)
# BIN is the iosim-kernels executable. Each run is `iosim-kernels check` under
# the tool with --error-exitcode; the report lists each run's result and
# summary line. Exit status: 0 when every run is clean.
set -uo pipefail
bin=$1
report=$2
log=${report%.md}.log
: > "$log"
small="--batch 1 --heads 2 --kv-heads 1 --seq-q 200 --seq-k 263 --causal"
configs=(
  "fa2 fwd d64 fp16|--algo fa2 --pass fwd --head-dim 64 $small"
  "fa2 bwd d64 fp16|--algo fa2 --pass bwd --head-dim 64 $small"
  "fa2 fwd d128 bf16|--algo fa2 --pass fwd --head-dim 128 --dtype bf16 $small"
  "fa2 bwd d128 bf16|--algo fa2 --pass bwd --head-dim 128 --dtype bf16 $small"
  "fa2 bwd d64 block-sparse|--algo fa2 --pass bwd --head-dim 64 --batch 1 --heads 2 --seq 300 --block-density 0.5 --mask-seed 3"
  "fa1 fwd d64 fp16|--algo fa1 --pass fwd --head-dim 64 $small"
  "fa1 bwd d64 fp16|--algo fa1 --pass bwd --head-dim 64 $small"
  "standard fwd d64 fp16|--algo standard --pass fwd --head-dim 64 $small"
  "standard bwd d64 fp16|--algo standard --pass bwd --head-dim 64 $small"
  "standard bwd d128 GEMM 128x128x64 interior chunks|--algo standard --pass bwd --head-dim 128 --batch 1 --heads 2 --seq 256 --gemm-m 128 --gemm-n 128 --gemm-k 64"
  "standard bwd d64 GEMM 64x64x32 ragged|--algo standard --pass bwd --head-dim 64 --batch 1 --heads 2 --seq-q 130 --seq-k 190 --gemm-m 64 --gemm-n 64"
  "standard bwd d72 GEMM 64x64x32, 4 tiles per CTA, ragged|--algo standard --pass bwd --head-dim 72 --batch 2 --heads 4 --kv-heads 2 --seq-q 1000 --seq-k 1100 --gemm-m 64 --gemm-n 64"
  "splitkv fwd d128 fp16 decode|--algo splitkv --head-dim 128 --batch 1 --heads 4 --kv-heads 2 --seq-q 3 --seq-k 1000 --causal --splits 3"
  "splitkv fwd d64 bf16|--algo splitkv --head-dim 64 --dtype bf16 $small --splits 5"
  "fa3 fwd d128 fp16 causal GQA|--algo fa3 --pass fwd --head-dim 128 $small"
  "fa3 fwd d64 bf16|--algo fa3 --pass fwd --head-dim 64 --dtype bf16 --batch 1 --heads 2 --seq-q 300 --seq-k 200"
  "standard bwd d64 16-byte softmax paths, causal ragged|--algo standard --pass bwd --head-dim 64 --batch 1 --heads 2 --kv-heads 1 --seq-q 200 --seq-k 264 --causal"
  "standard bwd d64 16-byte softmax paths, block-sparse|--algo standard --pass bwd --head-dim 64 --batch 1 --heads 2 --seq 256 --block-density 0.5 --mask-seed 3"
  "standard bwd d64 CTA-per-row softmax|--algo standard --pass bwd --head-dim 64 --batch 1 --heads 2 --kv-heads 1 --seq-q 70 --seq-k 1100 --causal"
  "standard-eager fwd d64 element path|--algo standard-eager --pass fwd --head-dim 64 $small"
  "standard-eager bwd d64 element path|--algo standard-eager --pass bwd --head-dim 64 $small"
  "standard-eager bwd d64 vector path, 1 row per CTA|--algo standard-eager --pass bwd --head-dim 64 --batch 1 --heads 2 --kv-heads 1 --seq-q 72 --seq-k 1104 --causal --dtype bf16"
)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
{
  echo "# compute-sanitizer on every kernel"
  echo
  echo "- GPU: $gpu; date: $(date -u +%Y-%m-%d); $(compute-sanitizer --version | tail -1)"
  echo "- Command: \`scripts/gpu_sanitize.sh $bin $report\`; each run is \`compute-sanitizer --tool T --error-exitcode 99 iosim-kernels check FLAGS\`."
  echo
  echo "| kernel | tool | result | summary | flags |"
  echo "|---|---|---|---|---|"
} > "$report"
status=0
for entry in "${configs[@]}"; do
  name=${entry%%|*}
  flags=${entry#*|}
  [[ -n ${ONLY:-} && ! $name =~ $ONLY ]] && continue  # ONLY=REGEX: the configurations whose name matches
  for tool in memcheck racecheck; do
    echo "=== $name / $tool: $flags" >> "$log"
    # shellcheck disable=SC2086
    out=$(compute-sanitizer --tool $tool --error-exitcode 99 "$bin" check $flags 2>&1)
    rc=$?
    echo "$out" >> "$log"
    summary=$(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    case $rc in
      0) result="clean" ;;
      99) result="**errors**"; status=1 ;;
      *) result="did not run (exit $rc: $(echo "$out" | grep -m1 'iosim-kernels:' | cut -c1-120))"; status=1 ;;
    esac
    echo "| $name | $tool | $result | ${summary:-—} | \`$flags\` |" >> "$report"
    echo "$name / $tool: $result ${summary}"
  done
done
exit $status
