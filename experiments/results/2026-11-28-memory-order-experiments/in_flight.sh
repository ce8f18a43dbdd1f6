#!/usr/bin/env bash
# The peak of loaded-but-unread registers in the loop bodies of the kernels whose per-instruction CSVs
# are committed (experiments/probes/sass_loads_in_flight.py): FA2 forward and backward, FA1 forward.
set -euo pipefail
cd "$(dirname "$0")/../../.."
S=experiments/results
p=experiments/probes/sass_loads_in_flight.py
python3 $p $S/2026-11-28-h100-fa2-fwd-source/fa2-fwd-d128-n3072-bh32-128x128-source.csv 147456
python3 $p $S/2026-11-28-h100-fa2-fwd-source/fa2-fwd-d64-n3072-bh32-256x64-source.csv 147456
python3 $p $S/2026-11-27-h100-source-counters/fa2-bwd-d128-n4096-bh16-s50-128x64-source.csv 128000
python3 $p $S/2026-11-27-h100-source-counters/fa1-fwd-d128-n4096-bh128-s50-64x128-source.csv 512000
python3 $p $S/2026-11-27-h100-source-counters/fa1-fwd-d64-n1024-bh128-64x64-source.csv 131072
