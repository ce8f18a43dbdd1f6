#!/usr/bin/env bash
# Prints this folder's tables: per FA3 CTA, where the consumer warps' cycles go (Nsight Compute's
# warp samples per region, shares over the consumer warps' regions: experiments/probes/source_regions.py
# --of), and iosim's prediction for the same configurations: the kernel's time, its per-CTA programs'
# cycles, and from its timeline the first CTA's wait for its first loads and its steps.
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=experiments/results/2026-11-28-h100-fa3-short
# 1536 CTAs of 12 warps (8 consumer warps) on 132 SMs, one CTA per SM: 11.636 CTAs per SM.
echo "## fa3-d128-n768-bh256 (measured, per consumer warp and CTA)"
python3 experiments/probes/source_regions.py $D/fa3-d128-n768-bh256-source.csv $D/fa3-d128-n768-bh256-raw.csv \
  --steps 11.636 --warps 1056 --of '^consumer' \
  --cut ac200:"kernel entry, barriers, setmaxnreg" --cut ac4a0:"consumer: setup, Q/K_0 wait, first block" \
  --cut b0c70:"consumer: key-block loop (5 iterations)" --cut b3d80:"consumer: last P V, epilogue (O, L stores)" \
  --cut b5430:"consumer: exit (drain)" --cut b5460:"producer" --cut b7b00:"(tail)"
for d in 128 64; do
  python3 - "$D/fa3-d$d-n768-bh256.bench.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"\n{sys.argv[1].split('/')[-1]}: CUDA-event median {j['median_ms']:.4f} ms")
PY
  tl=$(mktemp)
  ./build/sim/iosim simulate --profile h100 --algo fa3 --batch 16 --heads 16 --seq 768 --head-dim $d --cold-l2 \
    --json --timeline "$tl" 2>/dev/null |
    python3 -c "
import json, sys
k = json.load(sys.stdin)['kernels'][0]
clock = k['sm_model']['clock_hz']
print('iosim (h100-sxm5-80gb, --cold-l2): %.4f ms; per step and CTA (SM cycles): %s' % (k['time']['seconds'] * 1e3,
      ', '.join('%s %.0f' % (p['name'], p['cycles_at_occupancy']) for p in k['sm_model']['programs'])))
ev = json.load(open('$tl'))
ev = ev['traceEvents'] if isinstance(ev, dict) else ev
lane = sorted((e for e in ev if e.get('ph') == 'X' and e.get('pid') == 1 and e.get('tid') == 0), key=lambda e: e['ts'])
wait = next(e for e in lane if e['name'] == 'wait')
print('iosim timeline, SM 0 first CTA: first loads %.0f cycles (%.3f us at the model clock %.0f MHz)'
      % (wait['dur'] * 1e-6 * clock, wait['dur'], clock / 1e6))"
  rm -f "$tl"
done
