#!/usr/bin/env bash
# Rebuilds <gpu>/grid.csv, its summary, README.md's accuracy block and this folder's README misses
# block from committed raw folders.
#   experiments/validation/rebuild.sh GPU RAW_DIR [RAW_DIR ...]
# The folders are read in the order given and the first holding a configuration wins.
# <gpu>/build.sh names each GPU's folders. Env: JOBS (build_csv.py's simulations, default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
gpu=$1
shift
python3 experiments/validation/build_csv.py "$gpu" "$@" --jobs "${JOBS:-2}"
python3 experiments/validation/summarize.py "experiments/validation/$gpu/grid.csv"
python3 - <<'PY'
import subprocess
block = subprocess.run(["python3", "experiments/validation/accuracy_table.py"], check=True,
                       capture_output=True, text=True).stdout.strip("\n")
s = open("README.md").read()
b = s.index("<!-- accuracy:begin -->") + len("<!-- accuracy:begin -->")
e = s.index("<!-- accuracy:end -->")
open("README.md", "w").write(s[:b] + "\n" + block + "\n" + s[e:])
PY
python3 experiments/validation/accuracy_table.py --check README.md
python3 - <<'PY'
import subprocess
block = subprocess.run(["python3", "experiments/validation/misses.py"], check=True,
                       capture_output=True, text=True).stdout.strip("\n")
p = "experiments/validation/README.md"
s = open(p).read()
b = s.index("<!-- misses:begin -->") + len("<!-- misses:begin -->")
e = s.index("<!-- misses:end -->")
open(p, "w").write(s[:b] + "\n" + block + "\n" + s[e:])
PY
python3 experiments/validation/misses.py --check experiments/validation/README.md
