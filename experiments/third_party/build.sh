#!/usr/bin/env bash
# Here: iosim's predictions beside the recorded PyTorch kernels (compare.py), written to
# results/h200.md and results/h200.csv, and the summary table pasted into README.md between its
# BEGIN/END markers.   experiments/third_party/build.sh [IOSIM]   (default: build/sim/iosim)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
iosim=${1:-build/sim/iosim}
raw=experiments/results/2026-12-01-h200-third-party-raw
mkdir -p "$here/results"
python3 "$here/compare.py" "$raw" --iosim "$iosim" --profile h200-sxm-141gb --csv "$here/results/h200.csv" \
  > "$here/results/h200.md" 2> "$here/results/h200-notes.txt"
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
sed -n '/^## Summary/,$p' "$here/results/h200.md" | tail -n +3 > "$summary"
awk -v s="$summary" '
  /^<!-- BEGIN summary/ { print; while ((getline l < s) > 0) print l; skip = 1; next }
  /^<!-- END summary/ { skip = 0 }
  !skip { print }' "$here/README.md" > "$here/README.md.new"
mv "$here/README.md.new" "$here/README.md"
echo "wrote $here/results/h200.md, h200.csv; README summary updated"
