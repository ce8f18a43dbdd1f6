// FlashAttention-3 forward (Shah et al. 2024) on Hopper: the schedule the
// CUDA kernel (kernels/fa3) launches. Same tile walk as FlashAttention-2's
// forward (a CTA per (query block, head, batch), query blocks fastest, the
// active key blocks of AttentionTiles::key_blocks in order: an unmasked run,
// then a masked run), but the CTA is warp-specialised:
//   warpgroup 0      producer: one thread issues the TMA loads of Q_i once and
//                    of K_j, V_j into a ring of `stages` shared-memory stages
//   warpgroups 1..2  consumers: each owns 64 of the block's 128 query rows
//                    (wgmma's M is 64 per warpgroup), computes S = Q K^T and
//                    O += P V with wgmma, the online softmax in registers, and
//                    releases each stage to the producer through an mbarrier.
// Tile choice: B_r = 128 (64 rows per consumer) and B_c = 128. A consumer's
// S (64 x 128 fp32) is 64 registers a thread, P (fp16/bf16) 32, O (64 x d
// fp32) 32 or 64, the next block's S (intra-warpgroup overlap) another 64:
// inside the 240 registers setmaxnreg gives a consumer. B_r = 128 per
// consumer would double each of those and spill. FA3's own d=128 tile is
// 128 x 128 (causal) / 128 x 176; 128 keeps B_c a power of two.
// Shared memory: Q (B_r x d), and per stage K_j, V_j (B_c x d each), in the
// data type, in TMA's 128-byte swizzle (rows of 64 elements, d = 128 as two
// 64-column halves); plus the mbarriers.
#pragma once
#include "sim/schedule/kernel_schedules.h"

namespace iosim::schedule {

struct Fa3ForwardSchedule {
  static constexpr bool kLazyRescale = false;  // O is rescaled at every key block
  static constexpr i64 kBlockM = 128;          // B_r
  static constexpr i64 kBlockN = 128;          // B_c
  static constexpr i64 kConsumers = 2;         // consumer warpgroups
  static constexpr i64 kRowsPerConsumer = kBlockM / kConsumers;
  static constexpr i64 kWarpgroups = 1 + kConsumers;  // + the producer
  static constexpr i64 kThreads = 128 * kWarpgroups;
  // Registers per thread after setmaxnreg: producer 24, consumers 240
  // (128 * (24 + 2 * 240) = 64,512 of the SM's 65,536).
  static constexpr i64 kProducerRegs = 24;
  static constexpr i64 kConsumerRegs = 240;
  static constexpr i64 kSwizzleBytes = 128;    // TMA / wgmma swizzle: a row of 64 16-bit elements
  static constexpr i64 kStageBudgetBytes = 200 * 1024;  // leaves room on H100 (227 KB) for barriers
  static constexpr i64 kMaxStages = 4;

  AttentionTiles tiles;  // block_m = kBlockM, block_n = kBlockN
  HeadShape shape;
  i64 head_dim = 128;
  ElementBytes bytes;

  struct Cta {
    i64 m_block, head, batch;
  };
  IOSIM_HD Dim3 grid() const { return {tiles.m_blocks(), shape.heads, shape.batch}; }
  // Causal: the last query block (the most key blocks) runs first, so the
  // short blocks fill the last wave (FlashAttention-3's order).
  IOSIM_HD Cta cta(i64 x, i64 y, i64 z) const { return {tiles.causal ? tiles.m_blocks() - 1 - x : x, y, z}; }
  IOSIM_HD i64 kv_head(const Cta& c) const { return shape.kv_head_of(c.head); }

  IOSIM_HD static constexpr i64 tile_bytes(i64 rows, i64 d, i64 elem) { return rows * d * elem; }
  IOSIM_HD static constexpr i64 stage_bytes(i64 d, i64 elem) { return 2 * tile_bytes(kBlockN, d, elem); }
  // As many K/V stages as fit beside Q in the budget, at least 2, at most kMaxStages
  // (d = 128 fp16: 2 stages, 160 KB; d = 64: 4 stages, 144 KB).
  IOSIM_HD static constexpr i64 stages_for(i64 d, i64 elem) {
    return max_i64(2, min_i64(kMaxStages, (kStageBudgetBytes - tile_bytes(kBlockM, d, elem)) / stage_bytes(d, elem)));
  }
  // mbarriers: Q full, and per stage K and V full and empty (8 bytes each),
  // rounded up to 1 KB so the tiles after them keep the swizzle's 1024-byte alignment.
  IOSIM_HD static constexpr i64 barrier_bytes_for(i64 stages) { return ceil_div(8 * (1 + 4 * stages), 1024) * 1024; }
  // Byte offsets in dynamic shared memory (1024-aligned): barriers, Q, then the stages.
  IOSIM_HD static constexpr i64 q_offset_for(i64 d, i64 elem) { return barrier_bytes_for(stages_for(d, elem)); }
  IOSIM_HD static constexpr i64 k_offset_for(i64 d, i64 elem, i64 stage) {
    return q_offset_for(d, elem) + tile_bytes(kBlockM, d, elem) + stage * stage_bytes(d, elem);
  }
  IOSIM_HD static constexpr i64 v_offset_for(i64 d, i64 elem, i64 stage) {
    return k_offset_for(d, elem, stage) + tile_bytes(kBlockN, d, elem);
  }
  // + 1024: the dynamic shared memory base is only 16-byte aligned; the kernel rounds it up.
  IOSIM_HD static constexpr i64 sram_bytes_for(i64 d, i64 elem) {
    return k_offset_for(d, elem, stages_for(d, elem)) + 1024;
  }
  IOSIM_HD i64 stages() const { return stages_for(head_dim, bytes.data); }
  IOSIM_HD i64 sram_bytes() const { return sram_bytes_for(head_dim, bytes.data); }

  // The CTA's key blocks, FlashAttention-2's walk (the producer and both
  // consumers iterate the same range, so the stage ring stays in step).
  template <class Index = i64>
  IOSIM_HD AttentionTiles::KeyBlockRange<Index> key_blocks(const Cta& c) const {
    return tiles.key_blocks<Index>(c.m_block);
  }
  // Key block j's stage in the ring and the mbarrier phase parity of its use:
  // the n-th block the CTA visits uses stage n % stages, for the
  // (n / stages)-th time.
  IOSIM_HD static constexpr i64 stage_of(i64 n, i64 stages) { return n % stages; }
  IOSIM_HD static constexpr i64 phase_of(i64 n, i64 stages) { return (n / stages) & 1; }

  // Bytes of the TMA boxes past the tensors' last rows (zero-filled): a CTA's
  // Q box is B_r rows and each K, V box B_c rows whatever the rows left. The
  // SM<->L2 crossbar counter carries them as read bytes (the H200's FA3 rows
  // at N = 1000: 1.0240 of the trace's reads, B_r x 8 / 1000 exactly,
  // experiments/results/2026-12-02-h200-staged-stores); memory holds none, so
  // the trace does not load them. A CTA with no key block loads nothing.
  i64 tma_zero_fill_bytes() const {
    const i64 row = head_dim * bytes.data, last = tiles.n_blocks() - 1;
    i64 per_head = 0;
    for (i64 i = 0; i < tiles.m_blocks(); ++i) {
      const auto keys = key_blocks(Cta{i, 0, 0});
      if (keys.first >= keys.end) continue;
      per_head += (kBlockM - tiles.rows_in(i)) * row;
      // No block masks: the CTA visits all of [first, end), the ragged block last if any.
      if (keys.end - 1 == last) per_head += 2 * (kBlockN - tiles.cols_in(last)) * row;
    }
    return per_head * shape.heads * shape.batch;
  }
};

}  // namespace iosim::schedule
