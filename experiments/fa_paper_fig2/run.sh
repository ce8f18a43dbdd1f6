#!/usr/bin/env bash
# FlashAttention paper Figure 2 on the A100, H100 and H200 profiles: simulate (results-<gpu>.csv),
# take the simulated values into measured-<gpu>.csv where one exists, then draw fig2-<gpu>.png and
# write README.md's tables. `run.sh --plot-only` redraws from the committed CSVs; other arguments
# go to run.py (e.g. --profile h100).
# Needs the Python module (build/python, built when pybind11-dev is installed) and python3-matplotlib.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python=${PYTHON:-python3}
if [ "${1:-}" != "--plot-only" ]; then
  PYTHONPATH="${IOSIM_PYTHON_PATH:-$root/build/python}" "$python" "$here/run.py" "$@"
  for gpu in h100 h200; do
    [ -f "$here/measured-$gpu.csv" ] && "$python" "$here/measured.py" --rejoin --gpu "$gpu"
  done
fi
"$python" "$here/plot.py" --write "$here/README.md"
