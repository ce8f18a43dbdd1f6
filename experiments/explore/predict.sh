#!/usr/bin/env bash
# Here (no GPU): freeze explore's predictions before anything is measured.
#   experiments/explore/predict.sh [IOSIM] [PROFILE ...]
# For each shape of shapes.txt and each profile (default: h100-sxm5-80gb h200-sxm-141gb), writes
# predictions/<profile>/<name>.csv: `iosim explore --compiled-only --format csv` (every tile compiled
# in iosim-kernels' full menu that fits the profile, ranked by predicted time; rank 1 is the
# recommendation), and predictions/<profile>/README.txt: the commands, iosim's commit and the date.
# IOSIM defaults to build/sim/iosim. Commit the predictions; validate.sh then measures their tiles.
# PREDICTIONS_DIR (default: predictions here) writes them elsewhere, e.g. a later model's predictions
# of tiles already measured, for analyze.py --predictions.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
iosim=${1:-$root/build/sim/iosim}
[ $# -gt 0 ] && shift
profiles=("$@")
[ ${#profiles[@]} -gt 0 ] || profiles=(h100-sxm5-80gb h200-sxm-141gb)
[ -x "$iosim" ] || { echo "predict: $iosim is not an executable (build: cmake --build build --target iosim)" >&2; exit 2; }
for prof in "${profiles[@]}"; do
  dir=${PREDICTIONS_DIR:-$here/predictions}/$prof
  mkdir -p "$dir"
  {
    echo "iosim explore predictions for $prof, frozen before measuring (experiments/explore/predict.sh)."
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "iosim commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD -- sim 2>/dev/null || echo ' (sim/ modified)')"
    echo "commands:"
  } > "$dir/README.txt"
  grep -v '^#' "$here/${SHAPES:-shapes.txt}" | grep -v '^[[:space:]]*$' | while IFS=';' read -r name flags; do
    cmd="iosim explore --compiled-only --format csv --profile $prof $flags"
    echo "  $cmd > $name.csv" >> "$dir/README.txt"
    # shellcheck disable=SC2086
    "$iosim" explore --compiled-only --format csv --profile "$prof" $flags > "$dir/$name.csv"
    echo "$prof $name: $(($(wc -l < "$dir/$name.csv") - 1)) tiles, recommended $(awk -F, 'NR == 2 {print $2 "x" $3}' "$dir/$name.csv")"
  done
done
