#!/usr/bin/env bash
# Simulates every configuration of configs.sh with `iosim simulate --json` on a profile and
# writes one JSON object a line to OUT (default simulated-<profile>.jsonl here).
#   experiments/decode/simulate.sh [PROFILE] [OUT]      PROFILE default h100-sxm5-80gb
# Env: IOSIM (default build/sim/iosim).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
profile=${1:-h100-sxm5-80gb}
out=${2:-$here/simulated-$profile.jsonl}
iosim=${IOSIM:-$root/build/sim/iosim}
[ -x "$iosim" ] || { echo "simulate.sh: $iosim is not built (bash scripts/setup.sh)" >&2; exit 2; }
tmp=$out.tmp
: > "$tmp"
"$here/configs.sh" | while read -r name flags; do
  # shellcheck disable=SC2086
  json=$("$iosim" simulate --profile "$profile" $flags --json)
  printf '{"name": "%s", "result": %s}\n' "$name" "$(echo "$json" | tr -d '\n')" >> "$tmp"
  echo "$name" >&2
done
mv "$tmp" "$out"
