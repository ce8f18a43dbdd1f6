#!/usr/bin/env bash
# FlashAttention paper Figure 2 on the A100 40 GB profile: simulate (results.csv), then draw
# fig2.png and print README.md's tables. `run.sh --plot-only` redraws from the committed CSV.
# Needs the Python module (build/python, built when pybind11-dev is installed) and python3-matplotlib.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python=${PYTHON:-python3}
if [ "${1:-}" != "--plot-only" ]; then
  PYTHONPATH="${IOSIM_PYTHON_PATH:-$root/build/python}" "$python" "$here/run.py" "$@"
fi
"$python" "$here/plot.py"
