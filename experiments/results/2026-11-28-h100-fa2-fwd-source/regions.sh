#!/usr/bin/env bash
# Prints this folder's tables: FA2 forward's measured cycles per step by region (Nsight Compute's warp
# samples: experiments/probes/source_regions.py) beside iosim's per-step walk of the same kernel.
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=experiments/results/2026-11-28-h100-fa2-fwd-source
# 768 CTAs of 8 warps, 24 key blocks each, one CTA per SM: 139.64 steps per SM, 1056 warps (8 x 132).
echo "## fa2-fwd-d128-n3072-bh32-128x128 (measured)"
python3 experiments/probes/source_regions.py $D/fa2-fwd-d128-n3072-bh32-128x128-source.csv \
  $D/fa2-fwd-d128-n3072-bh32-128x128-raw.csv --steps 139.64 --warps 1056 \
  --cut af380:"step head, K_j wait, V_j copy" --cut af880:"S = Q K^T" --cut b0e10:"row max, V wait, K copy" \
  --cut b1310:"exp, sum, P V (interleaved)" --cut b3350:"(after the loop)"
for n in fa2-fwd-d128-n3072-bh32-128x128 fa2-fwd-d64-n3072-bh32-256x64; do
  python3 -c "import json, sys; print('\n%s: CUDA-event median %.4f ms' % (sys.argv[1], json.load(open(sys.argv[2]))['median_ms']))" \
    $n $D/$n.bench.json
done
echo
echo "## iosim (h100-sxm5-80gb): per-step walk, d 128 128 x 128"
./build/sim/iosim walk --profile h100 --algo fa2 --batch 2 --heads 16 --seq 3072 --head-dim 128 --block-m 128 \
  --block-n 128 --kernel fa2_fwd | sed -n '/^### fa2_fwd d128 128x128:/,/^| all/p'
for a in "128 128 128" "64 256 64"; do
  set -- $a
  ./build/sim/iosim simulate --profile h100 --algo fa2 --batch 2 --heads 16 --seq 3072 --head-dim $1 \
    --block-m $2 --block-n $3 --json |
    python3 -c "import json, sys; k = json.load(sys.stdin)['kernels'][0]; print('iosim d$1 $2x$3: %.4f ms' % (k['time']['seconds'] * 1e3))"
done
