#!/usr/bin/env bash
# Rebuilds h100/grid.csv, its summary and the README's accuracy block from the committed H100
# measurements: the grid measured on 2026-11-27 with the kernels of the H200 grid (the 2026-11-25
# folders measured earlier kernels; see experiments/results/2026-11-27-h100-validation-grid-raw/NOTE.md)
# and FA3's rows.
set -euo pipefail
cd "$(dirname "$0")/../../.."
R=experiments/results
python3 experiments/validation/build_csv.py h100 \
  $R/2026-11-27-h100-validation-grid-raw \
  $R/2026-11-27-h100-validation-grid-fa3-raw --jobs "${JOBS:-2}"
python3 experiments/validation/summarize.py experiments/validation/h100/grid.csv
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
