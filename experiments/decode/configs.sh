#!/usr/bin/env bash
# The decode grid, one configuration a line: NAME FLAGS. simulate.sh and run_device.sh both read
# it, so the simulator and the GPU see the same problems and tiles.
# A Llama-style attention layer decoding one sequence: B=1, H=32 query heads on H_kv=8 KV heads,
# d=128, fp16, causal (the N_q query rows are the last N_q positions of the N_k keys).
# N_q = 1, 2, 4, 8, 16 new tokens against a KV cache of N_k = 1k..128k.
#   fa2:     the harness's default tile for d=128 (128 x 64): B*H*ceil(N_q/128) = 32 CTAs.
#   splitkv: 16 x 64, splits by the default rule for the GPU's SMs (132 on the H100: 5).
#   splitkv1: the same kernel with one split (32 CTAs, as FA2): what the tile alone changes, so
#            FA2 -> splitkv1 -> splitkv separates the 128-row tile from the CTA count.
set -euo pipefail
common="--batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype fp16 --causal --pass fwd"
for nq in 1 2 4 8 16; do
  for nk in 1024 2048 4096 8192 16384 32768 65536 131072; do
    echo "fa2-q$nq-k$nk --algo fa2 --block-m 128 --block-n 64 --seq-q $nq --seq-k $nk $common"
    echo "splitkv-q$nq-k$nk --algo splitkv --block-m 16 --block-n 64 --seq-q $nq --seq-k $nk $common"
    echo "splitkv1-q$nq-k$nk --algo splitkv --block-m 16 --block-n 64 --splits 1 --seq-q $nq --seq-k $nk $common"
  done
done
