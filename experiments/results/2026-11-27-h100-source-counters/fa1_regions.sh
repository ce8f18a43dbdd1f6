#!/usr/bin/env bash
# FA1 forward d 128 64 x 128 (fa1-fwd-d128-n4096-bh128-s50-64x128), per step, region by region: the
# H100's cycles from Nsight Compute's warp samples (experiments/probes/source_regions.py; 128 CTAs of 4
# warps, one CTA per SM, 1000 steps each) and iosim's SM model (`iosim walk --external-loads`: the part
# after the loads' barrier is what follows the loads; the engine waits for the loads in its rounds).
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=experiments/results/2026-11-27-h100-source-counters
N=fa1-fwd-d128-n4096-bh128-s50-64x128
echo "## $N (measured)"
python3 experiments/probes/source_regions.py $D/$N-source.csv $D/$N-raw.csv --steps 1000 --warps 512 \
  --cut b1680:"head, Q_i O_i l_i m_i loads" --cut b3ee0:"S = Q K^T" --cut b4660:"scale, mask" \
  --cut bbe60:"max, exp, sum" --cut c0960:"rescale factors" --cut c0fa0:"P V" --cut c4e00:"O_i update" \
  --cut c6560:"O_i store, l_i m_i store, next block"
echo
echo "## iosim $(git rev-parse --short HEAD) (h100-sxm5-80gb), the step after its loads"
./build/sim/iosim walk --profile h100 --algo fa1 --batch 2 --heads 64 --seq 4096 --head-dim 128 --block-m 64 \
  --block-n 128 --block-density 0.5 --mask-seed 1 --external-loads --kernel fa1_fwd |
  sed -n '/^### fa1_fwd d128 64x128 (after its loads)/,/^| all/p'
