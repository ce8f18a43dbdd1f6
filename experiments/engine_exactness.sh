#!/usr/bin/env bash
# Exactness of an engine change (not a test): runs two iosim binaries on the
# same configurations (every algorithm and pass, causal, GQA, block-sparse,
# layouts, data types, every profile, cold L2, each replacement policy, merge
# window 0, dirty limits, set sampling, a timeline, a replayed trace file and
# the default scenario) and compares their outputs byte for byte, with the
# host's run time (engine.host_seconds) removed. Prints one line per
# configuration, "same" or "DIFFERS" with the first differing lines, and exits
# 1 if any differs.
#
# Usage: experiments/engine_exactness.sh OLD_IOSIM NEW_IOSIM [quick]
#   quick: skips the three slowest configurations (the default scenario,
#   GPT-2 medium standard attention, and standard attention with N = 16384,
#   whose softmax rows are read in 128 load rounds).
set -euo pipefail
old=$1 new=$2 quick=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

small="--batch 2 --heads 8 --seq 1024 --head-dim 64"
configs=(
  "simulate --algo fa2 --pass fwdbwd $small"
  "simulate --algo fa1 --pass fwdbwd $small"
  "simulate --algo standard --pass fwdbwd $small"
  "simulate --algo fa1-swapped --pass fwd $small"
  "simulate --algo fa2 --pass fwdbwd --batch 2 --heads 8 --kv-heads 2 --seq 2048 --head-dim 64 --causal"
  "simulate --algo fa1 --pass fwdbwd --batch 2 --heads 8 --kv-heads 4 --seq 1024 --head-dim 128 --causal"
  "simulate --algo standard --pass fwdbwd --batch 1 --heads 8 --kv-heads 2 --seq-q 512 --seq-k 1536 --head-dim 64 --causal"
  "simulate --algo fa2 --pass fwdbwd $small --block-density 0.5 --mask-seed 3"
  "simulate --algo standard --pass fwdbwd $small --block-density 0.3"
  "simulate --algo fa2 --pass fwdbwd $small --layout bhsd --dtype bf16"
  "simulate --algo fa1 --pass fwdbwd --batch 2 --heads 4 --seq 1024 --head-dim 64 --dtype fp32"
  "simulate --algo fa2 --pass fwdbwd $small --cold-l2"
  "simulate --algo standard --pass fwdbwd $small --cold-l2"
  "simulate --algo fa1 --pass fwdbwd $small --l2-policy fifo"
  "simulate --algo standard --pass fwdbwd $small --l2-policy bip"
  "simulate --algo fa2 --pass fwdbwd $small --l2-policy bip"
  "simulate --algo fa2 --pass fwdbwd $small --merge-window 0"
  "simulate --algo fa1 --pass fwdbwd $small --l2-dirty-limit 4MiB"
  "simulate --algo standard --pass fwdbwd $small --l2-sample 16"
  "simulate --algo fa1 --pass fwdbwd $small --l2-sample 64"
  "simulate --algo fa2 --pass fwdbwd $small --profile h200-sxm-141gb"
  "simulate --algo standard --pass fwdbwd $small --profile h200-sxm-141gb"
  "simulate --algo fa1 --pass fwdbwd $small --profile h100-sxm5-80gb"
  "simulate --algo fa2 --pass fwd --batch 1 --heads 32 --seq 16384 --head-dim 128 --profile h100-sxm5-80gb"
  "simulate --algo standard --pass fwdbwd --batch 1 --heads 4 --seq 1024 --head-dim 64 --profile t4"
  "simulate --algo fa2 --pass fwdbwd --batch 1 --heads 4 --seq 1024 --head-dim 64 --kernel-gap 1e-6"
  "simulate --algo fa2 --pass fwdbwd --batch 1 --heads 2 --seq 512 --head-dim 64 --timeline TIMELINE"
  "replay TRACE --profile a100-sxm4-40gb --json"
)
[[ -z $quick ]] && configs+=(
  "simulate --algo standard --pass fwdbwd --batch 64 --heads 16 --seq 1024 --head-dim 64"
  "simulate --algo standard --batch 1 --heads 4 --seq 16384 --head-dim 64"
  ""
)

# A trace file to replay, written by the old binary.
"$old" trace --algo fa2 --pass fwdbwd --batch 1 --heads 2 --seq 1024 --head-dim 64 --causal --out "$work/t.trace" >/dev/null

differs=0
for c in "${configs[@]}"; do
  for which in old new; do
    bin=${!which}
    args=${c//TIMELINE/$work/$which.timeline.json}
    args=${args//TRACE/$work/t.trace}
    [[ $args == simulate* ]] && args+=" --json"
    # shellcheck disable=SC2086
    "$bin" $args 2>&1 | grep -v '"host_seconds"' | sed "s#$work/$which#WORK#g" >"$work/$which.out" || true
    [[ -f $work/$which.timeline.json ]] && cat "$work/$which.timeline.json" >>"$work/$which.out" && rm "$work/$which.timeline.json"
  done
  label=${c:-"(default scenario)"}
  if cmp -s "$work/old.out" "$work/new.out"; then
    echo "same     $label"
  else
    echo "DIFFERS  $label"
    diff "$work/old.out" "$work/new.out" | head -8
    differs=1
  fi
done
exit $differs
