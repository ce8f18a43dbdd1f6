#!/usr/bin/env bash
# Instructions the engine executes (valgrind's callgrind; deterministic, unlike
# times on a shared machine) for small forms of bench_engine.sh's case (a):
# GPT-2 medium's shape (H=16 N=1024 d=64, fp16, forward+backward, A100
# profile) with B=1 for standard attention and B=8 for FA1 and FA2 (B=1 fits
# their working set in the L2). Process start, profile loading and tracing are
# included; they are under 5% of each count.
#
# Usage: experiments/engine_instructions.sh IOSIM [IOSIM ...]
#   One column per binary (e.g. a build of the code before a change, then after).
set -euo pipefail
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 2; }
cases=("standard 1" "fa1 8" "fa2 8")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 $#); do echo "binary $i: ${!i}"; done
printf '%-40s' "instructions"
for i in $(seq 1 $#); do printf ' %16s' "binary $i"; done
echo
for c in "${cases[@]}"; do
  read -r algo batch <<<"$c"
  printf '%-40s' "$algo B=$batch H=16 N=1024 d=64 fwd+bwd"
  for bin in "$@"; do
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$bin" simulate --algo "$algo" --pass fwdbwd \
      --batch "$batch" --heads 16 --seq 1024 --head-dim 64 >/dev/null 2>"$work/err"
    printf ' %16s' "$(sed -n 's/.*Collected : //p' "$work/err")"
  done
  echo
done
