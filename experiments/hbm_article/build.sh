#!/usr/bin/env bash
# The HBM-traffic article's example: simulate, join any measurement, print README.md's block, draw.
#   experiments/hbm_article/build.sh [BUILD_DIR] [RAW_DIR]     (BUILD_DIR default: build)
# 1. run.py: grid.txt's configurations through the Python module in BUILD_DIR/python -> results.csv.
# 2. Measurements: RAW_DIR (what measure.sh wrote on the GPU machine, committed under
#    experiments/results/) is recorded in measured-source.txt; without RAW_DIR the folder already
#    recorded there is used, if any. experiments/validation/build_csv.py joins it with
#    BUILD_DIR/sim/iosim's predictions -> measured.csv (the GPU, h100 or h200, from its
#    device-name.txt).
# 3. report.py --write: README.md's block between <!-- hbm:begin --> and <!-- hbm:end -->, hbm.png.
# `build.sh --report-only` does step 3 alone, from the committed CSVs. PYTHON picks the
# interpreter (default: python3 on PATH if it has matplotlib, else /usr/bin/python3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python=${PYTHON:-}
if [ -z "$python" ]; then
  python=python3
  python3 -c 'import matplotlib' 2>/dev/null || python=/usr/bin/python3
fi
if [ "${1:-}" = "--report-only" ]; then exec "$python" "$here/report.py" --write; fi
build="$(cd "${1:-$root/build}" && pwd)"
[ -d "$build/python" ] || { echo "build.sh: no $build/python: build the Python module first (scripts/setup.sh)" >&2; exit 2; }
PYTHONPATH="$build/python" "$python" "$here/run.py"
if [ $# -ge 2 ]; then
  raw="$(cd "$2" && pwd)"
  case $raw in "$root"/*) ;; *) echo "build.sh: $2 is outside the repository: commit it under experiments/results/ first" >&2; exit 2 ;; esac
  echo "${raw#"$root"/}" > "$here/measured-source.txt"
fi
if [ -f "$here/measured-source.txt" ]; then
  raw="$root/$(cat "$here/measured-source.txt")"
  [ -f "$raw/device-name.txt" ] || { echo "build.sh: $raw has no device-name.txt (is it measure.sh's OUTDIR?)" >&2; exit 2; }
  case $(tr 'A-Z' 'a-z' < "$raw/device-name.txt") in
    *h100*) gpu=h100 ;;
    *h200*) gpu=h200 ;;
    *) echo "build.sh: $raw/device-name.txt names neither an H100 nor an H200: $(cat "$raw/device-name.txt")" >&2; exit 2 ;;
  esac
  "$python" "$root/experiments/validation/build_csv.py" "$gpu" "$raw" --grid "$here/grid.txt" \
    --out "$here/measured.csv" --iosim "$build/sim/iosim"
fi
"$python" "$here/report.py" --write
