#!/usr/bin/env bash
# iosim's predicted pass time for every configuration of configs.txt, per profile (default: the shipped
# H200 and H100 profiles), as the validation grid's "pass time vs bench median" is predicted
# (build_csv.py: `iosim simulate FLAGS --profile P --json`, warm L2): predictions-<profile>.csv with
# iosim's commit.
#   experiments/validation/fa3-blind/predict.sh [IOSIM] [PROFILE...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
iosim=${1:-build/sim/iosim}
shift || true
profiles=${*:-h200-sxm-141gb h100-sxm5-80gb}
for p in $profiles; do
  out=$here/predictions-$p.csv
  echo "# iosim $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty), $(date -u +%Y-%m-%dT%H:%MZ), profile $p" > "$out"
  echo "name,sim_pass_time_s,sim_clock_hz" >> "$out"
  grep -v '^#' "$here/configs.txt" | while IFS=';' read -r set name regex n flags; do
    "$iosim" simulate $flags --profile "$p" --json |
      python3 -c "import json, sys; j = json.load(sys.stdin); print('$name,%r,%r' % (j['time']['seconds'], j['kernels'][0]['sm_model']['clock_hz']))" >> "$out"
  done
  echo "wrote $out"
done
