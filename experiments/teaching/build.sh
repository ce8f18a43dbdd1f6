#!/usr/bin/env bash
# docs/teaching.md, its CSVs and its plots, in one command:
#   experiments/teaching/build.sh [BUILD_DIR]      (default: build)
# run.py runs iosim through the Python module in BUILD_DIR/python (built when pybind11-dev is
# installed) and writes experiments/teaching/*.csv; render.py fills teaching.md.in into
# docs/teaching.md and draws experiments/teaching/*.png (python3-matplotlib).
# `build.sh --render-only` renders from the committed CSVs. PYTHON picks the interpreter
# (default: python3 on PATH if it has matplotlib, else /usr/bin/python3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
render_only=
if [ "${1:-}" = "--render-only" ]; then render_only=1; shift; fi
build="${1:-$root/build}"
python=${PYTHON:-}
if [ -z "$python" ]; then
  python=python3
  python3 -c 'import matplotlib' 2>/dev/null || python=/usr/bin/python3
fi
if [ -z "$render_only" ]; then
  [ -d "$build/python" ] || { echo "build.sh: no $build/python: build the Python module first (scripts/setup.sh)" >&2; exit 2; }
  PYTHONPATH="$build/python" "$python" "$here/run.py"
fi
"$python" "$here/render.py"
