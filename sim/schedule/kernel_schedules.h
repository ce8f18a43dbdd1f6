// One schedule per kernel: its grid, which tiles each CTA owns, the order it
// visits them (the loop nest, as HD iterators), and the CTA it launches. The
// plan (plan.h) lists them per pass; the trace (sim/trace), the CPU numerics
// (sim/numerics) and the CUDA kernels (kernels/) all walk the same iterators.
// Nothing here allocates.
#pragma once
#include "sim/common/hd.h"
#include "sim/schedule/attention_tiles.h"

namespace iosim::schedule {

struct Dim3 {
  i64 x = 1, y = 1, z = 1;
  IOSIM_HD i64 count() const { return x * y * z; }
};

// Where a kernel records the steps its CTAs execute, so a test can compare
// them with the plan's (tests only: null in production, one uniform branch
// per step). CTA c (x fastest) writes its k-th step at entries[4 * (c *
// max_steps + k)] as {i, j, g, masked} and its step count at counts[c].
struct StepLog {
  std::int32_t* entries = nullptr;
  std::int32_t* counts = nullptr;
  i64 max_steps = 0;
  IOSIM_HD bool on() const { return entries != nullptr; }
};

// Batch and heads. Grouped-query attention: query head h reads K/V head
// h / group(); H_kv == H is multi-head, H_kv == 1 multi-query.
struct HeadShape {
  i64 batch = 1;
  i64 heads = 1;
  i64 kv_heads = 1;
  IOSIM_HD i64 group() const { return heads / kv_heads; }
  IOSIM_HD i64 kv_head_of(i64 head) const { return head / group(); }
};

// Bytes per element: the input dtype for Q/K/V/O and gradients; statistics
// (l, m, L, D) and the dQ accumulator are always fp32.
struct ElementBytes {
  i64 data = 2;
  static constexpr i64 kStat = 4;
  static constexpr i64 kAccum = 4;
};

// ---------------------------------------------------------------------------
// FlashAttention-2 forward: a CTA per (query block, head, batch), blockIdx.x
// fastest, so all query blocks of one head run side by side and share K/V in
// L2. Inner loop over the active key blocks; O and L = m + log(l) written once.
struct Fa2ForwardSchedule {
  // The softmax rescales O lazily: only where a row's maximum grew past 2^8,
  // as every row's does at its CTA's first key block (its own step program).
  static constexpr bool kLazyRescale = true;
  AttentionTiles tiles;
  HeadShape shape;
  i64 head_dim = 64;
  ElementBytes bytes;

  struct Cta {
    i64 m_block, head, batch;
  };
  IOSIM_HD Dim3 grid() const { return {tiles.m_blocks(), shape.heads, shape.batch}; }
  IOSIM_HD Cta cta(i64 x, i64 y, i64 z) const { return {x, y, z}; }
  // A warp owns 16 query rows, or 32 (two MMA fragments, halving K/V fragment
  // loads) when the S and O accumulators fit in registers; the CUDA kernel's
  // traits (kernels/fa2/fa2_traits.cuh) take their warp count from here.
  IOSIM_HD static constexpr i64 rows_per_warp(i64 d, i64 bm, i64 bn) {
    return (bm > 128 || (bm >= 32 && bn + d <= 192)) ? 32 : 16;
  }
  IOSIM_HD static constexpr i64 warps_for(i64 d, i64 bm, i64 bn) { return max_i64(1, bm / rows_per_warp(d, bm, bn)); }
  IOSIM_HD i64 warps() const { return warps_for(head_dim, tiles.block_m, tiles.block_n); }
  IOSIM_HD i64 threads() const { return 32 * warps(); }
  // Shared memory: Q_i, K_j, V_j tiles (S/P and the O accumulator live in
  // registers), one buffer each; the kernel allocates exactly this.
  IOSIM_HD static constexpr i64 sram_bytes_for(i64 d, i64 bm, i64 bn, i64 elem) { return (bm + 2 * bn) * d * elem; }
  IOSIM_HD i64 sram_bytes() const { return sram_bytes_for(head_dim, tiles.block_m, tiles.block_n, bytes.data); }
  // The CTA's loop nest: its active key blocks in order, an unmasked run then
  // a masked run (AttentionTiles::KeyBlockRange). One step per key block.
  template <class Index = i64>
  IOSIM_HD AttentionTiles::KeyBlockRange<Index> key_blocks(const Cta& c) const {
    return tiles.key_blocks<Index>(c.m_block);
  }
};

// FlashAttention-2 backward main kernel: a CTA per (key block, KV head, batch).
// For grouped-query attention the CTA loops over the query heads of its group,
// so dK_j/dV_j sum over the group on chip and are written once (FlashAttention-2
// instead writes per-query-head dK/dV and reduces them afterwards; this saves
// that traffic and a kernel). dQ is accumulated in fp32 with atomic adds.
struct Fa2BackwardSchedule {
  AttentionTiles tiles;
  HeadShape shape;
  i64 head_dim = 64;
  ElementBytes bytes;

  struct Cta {
    i64 n_block, kv_head, batch;
  };
  IOSIM_HD Dim3 grid() const { return {tiles.n_blocks(), shape.kv_heads, shape.batch}; }
  IOSIM_HD Cta cta(i64 x, i64 y, i64 z) const { return {x, y, z}; }
  IOSIM_HD i64 first_head(const Cta& c) const { return c.kv_head * shape.group(); }
  // Up to 8 warps (FlashAttention-2's choice), fewer when the S (Br x Bc),
  // dK/dV (Bc x d) or dQ (Br x d) products cannot be split 16-aligned that
  // many ways; kernels/fa2/fa2_traits.cuh (BwdTraits) takes it from here.
  IOSIM_HD static constexpr i64 warps_for(i64 d, i64 bm, i64 bn) {
    return min_i64(min_i64(8, (bm / 16) * (bn / 16)), min_i64(min_i64((bn / 16) * (d / 16), (bm / 16) * (d / 16)), 8));
  }
  IOSIM_HD i64 warps() const { return warps_for(head_dim, tiles.block_m, tiles.block_n); }
  IOSIM_HD i64 threads() const { return 32 * warps(); }
  // Shared memory: K_j, V_j, Q_i, dO_i tiles, and P_ij, dS_ij in the data type.
  // Q_i and dO_i are double-buffered (the next query block loads while this
  // one computes) when that fits in 160 KB, which A100 (163 KB) and H100
  // (227 KB) allow; otherwise single-buffered. The CUDA kernel
  // (kernels/fa2/fa2_traits.cuh, BwdTraits) allocates exactly this.
  IOSIM_HD static constexpr i64 bytes_with_q_stages_for(i64 d, i64 bm, i64 bn, i64 elem, i64 stages) {
    return (2 * bn * d + 2 * stages * bm * d + 2 * bm * bn) * elem;
  }
  IOSIM_HD static constexpr i64 q_stages_for(i64 d, i64 bm, i64 bn, i64 elem) {
    return bytes_with_q_stages_for(d, bm, bn, elem, 2) <= 160 * 1024 ? 2 : 1;
  }
  IOSIM_HD static constexpr i64 sram_bytes_for(i64 d, i64 bm, i64 bn, i64 elem) {
    return bytes_with_q_stages_for(d, bm, bn, elem, q_stages_for(d, bm, bn, elem));
  }
  IOSIM_HD i64 q_stages() const { return q_stages_for(head_dim, tiles.block_m, tiles.block_n, bytes.data); }
  IOSIM_HD i64 sram_bytes() const { return sram_bytes_for(head_dim, tiles.block_m, tiles.block_n, bytes.data); }
  IOSIM_HD i64 bytes_with_q_stages(i64 stages) const {
    return bytes_with_q_stages_for(head_dim, tiles.block_m, tiles.block_n, bytes.data, stages);
  }

  // The CTA's loop nest: after loading K_j, V_j, every query head g of its
  // GQA group (outer) and every active query block i of key block j (inner),
  // one walk with its bounds computed once (no division per step):
  //   const auto r = s.work_items<int>(c);
  //   for (auto w = r.first(); !r.done(w); w = r.next(s.tiles, w)) ... r.masked(w)
  // One step per work item, then dK_j, dV_j are written.
  template <class Index>
  struct WorkRange {
    struct Work {
      Index g, i;
    };
    AttentionTiles::QueryBlockRange<Index> rows;  // query blocks of key block j
    Index groups;                                  // query heads per KV head
    IOSIM_HD Work first() const { return {0, rows.first}; }
    IOSIM_HD bool done(const Work& w) const { return w.g >= groups || w.i >= rows.end; }
    // `tiles`: the schedule's (in a kernel, its parameters; see QueryBlockRange).
    IOSIM_HD Work next(const AttentionTiles& tiles, const Work& w) const {
      const Index i = rows.next(tiles, w.i);
      return i < rows.end ? Work{w.g, i} : Work{static_cast<Index>(w.g + 1), rows.first};
    }
    IOSIM_HD bool masked(const Work& w) const { return rows.masked(w.i); }
  };
  template <class Index = i64>
  IOSIM_HD WorkRange<Index> work_items(const Cta& c) const {
    return {tiles.query_blocks<Index>(c.n_block), static_cast<Index>(shape.group())};
  }
};

// Split-KV forward (flash-decoding): the key range of every query block cut
// into `splits` runs, a CTA per (query block, split, head, batch), so a
// decode step (N_q of 1..16 rows, one query block) still fills the GPU. Each
// CTA runs FA2's inner loop over its run of key blocks and writes its own
// normalised partial O and log-sum-exp, fp32 (Oaccum, LSEaccum, row
// split * seq_q + r); a CTA whose run is empty writes O = 0, LSE = -inf.
// SplitKvCombineSchedule's kernel reduces the partials. GQA: a CTA per query
// head, as in FA2's forward (K/V of a group are read once per query head).
struct SplitKvSchedule {
  AttentionTiles tiles;
  HeadShape shape;
  i64 head_dim = 64;
  ElementBytes bytes;
  i64 splits = 1;

  struct Cta {
    i64 m_block, split, head, batch;
  };
  // Query blocks fastest: the CTAs of one split read the same K/V in L2.
  IOSIM_HD Dim3 grid() const { return {tiles.m_blocks() * splits, shape.heads, shape.batch}; }
  IOSIM_HD Cta cta(i64 x, i64 y, i64 z) const { return {x % tiles.m_blocks(), x / tiles.m_blocks(), y, z}; }
  // The kernel's warps all own the block's B_r rows, each a quarter of the
  // B_c key columns of every key block, with its own softmax statistics;
  // the warps' partial results are merged through shared memory at the end
  // (kernels/splitkv/splitkv_traits.cuh takes its layout from here).
  static constexpr i64 kWarps = 4;
  IOSIM_HD i64 threads() const { return 32 * kWarps; }
  // Shared memory: Q_i, then two stages of (K_j, V_j) so block j+1 loads
  // while j computes; after the loop the stages hold each warp's fp32 O
  // accumulator and its row maximum and sum, when that is larger.
  IOSIM_HD static constexpr i64 merge_bytes_for(i64 d, i64 bm) { return kWarps * bm * (d + 2) * ElementBytes::kAccum; }
  IOSIM_HD static constexpr i64 sram_bytes_for(i64 d, i64 bm, i64 bn, i64 elem) {
    return bm * d * elem + max_i64(4 * bn * d * elem, merge_bytes_for(d, bm));
  }
  IOSIM_HD i64 sram_bytes() const { return sram_bytes_for(head_dim, tiles.block_m, tiles.block_n, bytes.data); }

  // The split's run of query block i's active key blocks [0, n_block_end(i)):
  // split s takes [E s / S, E (s + 1) / S), so runs differ by at most one
  // block and none is empty while E >= S (the last run holds the ragged last
  // block). Block masks are not supported (make_plan rejects them).
  IOSIM_HD i64 split_begin(i64 i, i64 s) const { return tiles.n_block_end(i) * s / splits; }
  // The CTA's loop nest: its run, an unmasked then a masked part, one step
  // per key block (the iterator of FA2's forward, its ends set to the run).
  template <class Index = i64>
  IOSIM_HD AttentionTiles::KeyBlockRange<Index> key_blocks(const Cta& c) const {
    const i64 first_masked = tiles.first_masked_n_block(c.m_block);
    return {nullptr, static_cast<Index>(split_begin(c.m_block, c.split)),
            static_cast<Index>(split_begin(c.m_block, c.split + 1)), static_cast<Index>(first_masked)};
  }
  // Row r of split s in Oaccum and LSEaccum.
  IOSIM_HD i64 partial_row(i64 s, i64 r) const { return s * tiles.seq_q + r; }
};

// Split-KV combine: a CTA per (row block, head, batch); a thread per four
// columns of a row, so kThreads * 4 / d rows per CTA. It walks the splits
// in order, one step per split (LSE_s and O_s of its rows), merging them as
// online softmax does: L = log sum_s exp(LSE_s), O = sum_s exp(LSE_s - L) O_s;
// then writes O in the data type and L.
struct SplitKvCombineSchedule {
  static constexpr i64 kThreads = 128;
  i64 seq_q = 0;
  HeadShape shape;
  i64 head_dim = 64;
  i64 splits = 1;
  IOSIM_HD static constexpr i64 rows_per_cta_for(i64 d) { return max_i64(1, kThreads * 4 / max_i64(4, d)); }
  IOSIM_HD i64 rows_per_cta() const { return rows_per_cta_for(head_dim); }
  IOSIM_HD i64 row_blocks() const { return ceil_div(seq_q, rows_per_cta()); }
  IOSIM_HD Dim3 grid() const { return {row_blocks(), shape.heads, shape.batch}; }
  IOSIM_HD i64 first_row(i64 x) const { return x * rows_per_cta(); }
  IOSIM_HD i64 rows_in(i64 x) const { return min_i64(rows_per_cta(), seq_q - first_row(x)); }
};

// Row-wise pre/post-processing kernels of the FlashAttention-2 backward pass
// (D = rowsum(dO * O) and zeroing dQaccum; converting dQaccum to dQ): a CTA per
// (row block, head, batch).
struct RowBlockSchedule {
  static constexpr i64 kThreads = 128;
  i64 rows = 0;
  i64 block_rows = 128;
  HeadShape shape;
  i64 head_dim = 0;
  IOSIM_HD i64 row_blocks() const { return ceil_div(rows, block_rows); }
  IOSIM_HD Dim3 grid() const { return {row_blocks(), shape.heads, shape.batch}; }
  IOSIM_HD i64 rows_in(i64 b) const { return min_i64(block_rows, rows - b * block_rows); }
};

// ---------------------------------------------------------------------------
// FlashAttention (v1) forward, Algorithm 1: a CTA per (head, batch). Outer loop
// over key blocks j, inner over query blocks i; O_i, l_i, m_i are read and
// written in global memory in every inner step. Step 2's initialisation
// (O = 0, l = 0, m = -inf) is done by the same CTA before the loops. A key block
// with no active tile is skipped entirely.
struct Fa1ForwardSchedule {
  AttentionTiles tiles;
  HeadShape shape;
  i64 head_dim = 64;
  ElementBytes bytes;

  struct Cta {
    i64 head, batch;
  };
  IOSIM_HD Dim3 grid() const { return {shape.heads, shape.batch, 1}; }
  IOSIM_HD Cta cta(i64 x, i64 y, i64 /*z*/) const { return {x, y}; }
  // A warp owns 16 whole query rows, up to 8 warps (kernels/fa1/fa1_forward.cu).
  IOSIM_HD static constexpr i64 warps_for(i64 bm) { return bm / 16 < 8 ? max_i64(1, bm / 16) : 8; }
  IOSIM_HD i64 threads() const { return 32 * warps_for(tiles.block_m); }
  // Shared memory: K_j, V_j, Q_i, O_i tiles and l_i, m_i (S_ij/P_ij stay in
  // registers). Under the paper's rule each tile is at most M/4 elements.
  IOSIM_HD i64 sram_bytes() const {
    return (2 * tiles.block_n * head_dim + 2 * tiles.block_m * head_dim) * bytes.data +
           2 * tiles.block_m * ElementBytes::kStat;
  }
  // As launched: the same tiles with each row padded by 16 bytes against bank
  // conflicts (Fa1FwdTraits static_asserts its layout against this).
  IOSIM_HD static constexpr i64 launch_smem_bytes_for(i64 d, i64 bm, i64 bn, i64 elem) {
    return (2 * bn + 2 * bm) * (d + 16 / elem) * elem + 2 * bm * ElementBytes::kStat;
  }
  IOSIM_HD i64 launch_smem_bytes() const {
    return launch_smem_bytes_for(head_dim, tiles.block_m, tiles.block_n, bytes.data);
  }
  // The CTA's loop nest (Algorithm 1): every key block with an active tile
  // (outer; a step loads K_j, V_j), then its active query blocks (inner; a
  // step per tile):
  //   for (j = first_key_block(); j < n_blocks; j = next_key_block(j))
  //     for (i = tiles.first_m_block(j); i < m_blocks; i = tiles.next_m_block(j, i))
  IOSIM_HD i64 first_key_block() const { return skip_empty_columns(0); }
  IOSIM_HD i64 next_key_block(i64 j) const { return skip_empty_columns(j + 1); }
  IOSIM_HD bool masked(i64 i, i64 j) const { return tiles.needs_element_mask(i, j); }

 private:
  IOSIM_HD i64 skip_empty_columns(i64 j) const {
    while (j < tiles.n_blocks() && !tiles.column_has_active(j)) ++j;
    return j;
  }
};

// FlashAttention (v1) backward, Algorithm 4: a CTA per (KV head, batch).
// dQ, dK, dV are initialised in global memory (step 5); dQ lives in an fp32
// accumulator (dQaccum) that the inner loop reads and writes, and the CTA
// converts it to dQ at the end. D_i = rowsum(dO_i * O_i) is recomputed in every
// inner step, as in the algorithm. Query heads of a GQA group are looped inside
// the CTA so that dK_j, dV_j sum over the group on chip.
struct Fa1BackwardSchedule {
  AttentionTiles tiles;
  HeadShape shape;
  i64 head_dim = 64;
  ElementBytes bytes;

  struct Cta {
    i64 kv_head, batch;
  };
  IOSIM_HD Dim3 grid() const { return {shape.kv_heads, shape.batch, 1}; }
  IOSIM_HD Cta cta(i64 x, i64 y, i64 /*z*/) const { return {x, y}; }
  static constexpr i64 kWarps = 8;  // kernels/fa1/fa1_backward.cu
  IOSIM_HD i64 threads() const { return 32 * kWarps; }
  // Shared memory: K_j, V_j, Q_i, O_i, dO_i tiles, the fp32 dQ_i tile,
  // S_ij/P_ij and dS_ij, and l_i, m_i.
  IOSIM_HD i64 sram_bytes() const {
    return (2 * tiles.block_n * head_dim + 3 * tiles.block_m * head_dim +
            2 * tiles.block_m * tiles.block_n) *
               bytes.data +
           tiles.block_m * head_dim * ElementBytes::kAccum + 2 * tiles.block_m * ElementBytes::kStat;
  }
  // As launched: rows padded by 16 bytes (P, dS and the data tiles) or 4
  // floats (dQ_i), plus D_i recomputed on chip (Fa1BwdTraits checks it).
  IOSIM_HD static constexpr i64 launch_smem_bytes_for(i64 d, i64 bm, i64 bn, i64 elem) {
    return (2 * bn + 3 * bm) * (d + 16 / elem) * elem + 2 * bm * (bn + 16 / elem) * elem +
           bm * (d + 4) * ElementBytes::kAccum + 3 * bm * ElementBytes::kStat;
  }
  IOSIM_HD i64 launch_smem_bytes() const {
    return launch_smem_bytes_for(head_dim, tiles.block_m, tiles.block_n, bytes.data);
  }
  // The CTA's loop nest (Algorithm 4): every key block with an active tile
  // (outer; a step loads K_j, V_j and a step writes dK_j, dV_j), every query
  // head of the GQA group (middle), every active query block (inner):
  //   for (j = first_key_block(); j < n_blocks; j = next_key_block(j))
  //     for (g = 0; g < group; ++g)
  //       for (i = tiles.first_m_block(j); i < m_blocks; i = tiles.next_m_block(j, i))
  IOSIM_HD i64 first_key_block() const { return skip_empty_columns(0); }
  IOSIM_HD i64 next_key_block(i64 j) const { return skip_empty_columns(j + 1); }
  IOSIM_HD bool masked(i64 i, i64 j) const { return tiles.needs_element_mask(i, j); }

 private:
  IOSIM_HD i64 skip_empty_columns(i64 j) const {
    while (j < tiles.n_blocks() && !tiles.column_has_active(j)) ++j;
    return j;
  }
};

// FlashAttention (v1) forward with the loop order swapped (a teaching variant
// from the seeds' slides): a CTA per (head, batch), outer loop over query
// blocks, inner over key blocks; O_i accumulates on chip. Like Algorithm 1 it
// loads O_i once per query block, so its count is 8N^2d^2/M + 3dN + 2N.
struct Fa1SwappedForwardSchedule {
  AttentionTiles tiles;
  HeadShape shape;
  i64 head_dim = 64;
  ElementBytes bytes;

  struct Cta {
    i64 head, batch;
  };
  IOSIM_HD Dim3 grid() const { return {shape.heads, shape.batch, 1}; }
  IOSIM_HD Cta cta(i64 x, i64 y, i64 /*z*/) const { return {x, y}; }
  IOSIM_HD i64 sram_bytes() const {
    return (2 * tiles.block_n * head_dim + 2 * tiles.block_m * head_dim) * bytes.data +
           2 * tiles.block_m * ElementBytes::kStat;
  }
  // No kernel: modelled with FA1 forward's CTA shape.
  IOSIM_HD i64 threads() const { return 32 * Fa1ForwardSchedule::warps_for(tiles.block_m); }
  // The loop nest: every query block (outer; a step loads Q_i, O_i and a step
  // writes O_i, l_i, m_i), its active key blocks (inner; a step per tile).
  template <class Index = i64>
  IOSIM_HD AttentionTiles::KeyBlockRange<Index> key_blocks(i64 i) const {
    return tiles.key_blocks<Index>(i);
  }
};

// ---------------------------------------------------------------------------
// Standard attention: batched GEMM C[m x n] = sum_g A_g[m x k] B_g[k x n].
// A CTA per (n tile, m tile, batch*head), n fastest; each CTA walks k in
// tile_k chunks and, for grouped-query reductions (dK, dV summed over the query
// heads of a KV group), over the k_groups operands in turn.
struct GemmSchedule {
  i64 m = 0, n = 0, k = 0;
  i64 tile_m = 128, tile_n = 128, tile_k = 32;
  i64 batches = 1;  // batch * (heads or kv_heads)
  i64 k_groups = 1;
  ElementBytes bytes;
  // Output tiles per CTA: a CTA computes tiles_per_cta consecutive tiles along
  // n in turn (fewer at the right edge), so that the next tile's first chunk
  // loads while this one's C is written (plan.cpp: gemm_tiles_per_cta).
  i64 tiles_per_cta = 1;

  struct Cta {
    i64 m_tile, n_tile, batch;  // n_tile: the CTA's first output tile
    i64 tiles;                  // output tiles n_tile, n_tile + 1, ... computed in turn
  };
  IOSIM_HD i64 m_tiles() const { return ceil_div(m, tile_m); }
  IOSIM_HD i64 n_tiles() const { return ceil_div(n, tile_n); }
  IOSIM_HD i64 k_chunks() const { return ceil_div(k, tile_k); }
  IOSIM_HD i64 output_tiles() const { return m_tiles() * n_tiles() * batches; }
  IOSIM_HD i64 cta_columns() const { return ceil_div(n_tiles(), tiles_per_cta); }
  IOSIM_HD Dim3 grid() const { return {cta_columns(), m_tiles(), batches}; }
  IOSIM_HD Cta cta(i64 x, i64 y, i64 z) const {
    const i64 first = x * tiles_per_cta;
    return {y, first, z, min_i64(tiles_per_cta, n_tiles() - first)};
  }
  IOSIM_HD i64 rows_in(i64 mt) const { return min_i64(tile_m, m - mt * tile_m); }
  IOSIM_HD i64 cols_in(i64 nt) const { return min_i64(tile_n, n - nt * tile_n); }
  IOSIM_HD i64 depth_in(i64 kc) const { return min_i64(tile_k, k - kc * tile_k); }
  static constexpr i64 kThreads = 256;  // 8 warps (kernels/standard/standard_gemm.cu)
  // Double-buffered A and B chunks.
  IOSIM_HD i64 sram_bytes() const { return 2 * (tile_m + tile_n) * tile_k * bytes.data; }
  // As launched: the double-buffered chunks in swizzled (unpadded) layout;
  // the epilogue stages C (swizzled too) in the stage its tile's last chunk
  // used when it fits there, else in both (GemmTraits static_asserts this).
  IOSIM_HD static constexpr i64 launch_smem_bytes_for(i64 tm, i64 tn, i64 tk, i64 elem) {
    return max_i64(2 * (tm + tn) * tk * elem, tm * tn * elem);
  }
  // Whether C fits in one stage buffer (then the next tile's first chunk
  // loads during this tile's epilogue).
  IOSIM_HD static constexpr bool c_in_stage(i64 tm, i64 tn, i64 tk) { return tm * tn <= (tm + tn) * tk; }
  // Each output tile's loop nest: the k_groups operands in turn (outer),
  // tile_k deep chunks of the reduction (inner); one step per chunk, then C
  // is written.
  IOSIM_HD i64 steps_per_tile() const { return k_groups * k_chunks(); }
};

// Standard attention's GEMM on Hopper's asynchronous units (GemmImpl::wgmma,
// kernels/standard/sm90a/standard_gemm_wgmma.cu): GemmSchedule's grid and
// tiles, its one tile, three stages of A and B chunks (TMA into 128-byte
// swizzled shared memory) on full/empty mbarriers, one producer warp and two
// consumer warpgroups (64 rows of the tile each), two CTAs per SM.
struct WgmmaGemmShape {
  static constexpr i64 kTileM = 128, kTileN = 128, kTileK = 64;
  static constexpr i64 kStages = 3;
  static constexpr i64 kConsumerWarps = 8;
  static constexpr i64 kThreads = 32 * (kConsumerWarps + 1);
  static constexpr i64 kMinCtasPerSm = 2;  // __launch_bounds__
  static constexpr i64 kStageBytes = (kTileM + kTileN) * kTileK * 2;  // fp16/bf16 chunks of A and B
  // The stages, a full and an empty mbarrier per stage, and 1 KiB of slack
  // to align the stages to the swizzle's 1024-byte period.
  static constexpr i64 kSmemBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
};

// Standard attention's row softmax (forward: P = softmax(scale * S) with the
// causal/block mask; backward: dS = scale * P * (dP - rowsum(dP * P))). As in
// PyTorch, short rows (seq_k <= 1024) take a warp each, four rows per
// 128-thread CTA; longer rows take a whole CTA each. (A CTA per short row made
// 1M CTAs of 2 KiB for GPT-2 medium, and the simulator's cost is per CTA and
// per request.) A CTA's rows are adjacent in memory, so each operand is one
// tile. Rows that fit in shared memory are read once; longer rows are read
// twice (statistics pass, then the output pass).
struct RowSoftmaxSchedule {
  static constexpr i64 kThreads = 128;
  static constexpr i64 kWarpRowMaxCols = 1024;  // a warp per row up to here (32 per lane)
  i64 seq_q = 0, seq_k = 0;
  HeadShape shape;
  ElementBytes bytes;
  i64 sram_limit_bytes = 48 * 1024;
  // fp32 staging of each row per input operand (1 forward, 2 backward).
  i64 operands = 1;

  IOSIM_HD i64 rows_per_cta() const { return seq_k <= kWarpRowMaxCols ? kThreads / 32 : 1; }
  IOSIM_HD i64 threads_per_row() const { return kThreads / rows_per_cta(); }
  IOSIM_HD i64 row_groups() const { return ceil_div(seq_q, rows_per_cta()); }
  IOSIM_HD Dim3 grid() const { return {row_groups(), shape.heads, shape.batch}; }
  IOSIM_HD i64 first_row(i64 group) const { return group * rows_per_cta(); }
  IOSIM_HD i64 rows_in(i64 group) const { return min_i64(rows_per_cta(), seq_q - first_row(group)); }
  IOSIM_HD i64 staging_bytes() const { return rows_per_cta() * operands * seq_k * 4; }
  IOSIM_HD bool row_fits_on_chip() const { return staging_bytes() <= sram_limit_bytes; }
  IOSIM_HD i64 sram_bytes() const { return row_fits_on_chip() ? staging_bytes() : 0; }
};

// standard-eager's elementwise kernels (scaling, masking, dropout and their
// gradients), each reading and writing whole N_q x N_k matrices in one step per
// CTA. A CTA takes the row softmax's rows (4 up to 1024 columns, else 1):
// PyTorch's elementwise CTAs take 512 elements, but the bytes are the same and
// the simulator's cost is per CTA. kernels/standard/elementwise.cu launches
// exactly this grid.
struct RowElementwiseSchedule {
  static constexpr i64 kThreads = 128;
  i64 seq_q = 0, seq_k = 0;
  HeadShape shape;

  IOSIM_HD i64 rows_per_cta() const { return seq_k <= RowSoftmaxSchedule::kWarpRowMaxCols ? 4 : 1; }
  IOSIM_HD i64 row_groups() const { return ceil_div(seq_q, rows_per_cta()); }
  IOSIM_HD Dim3 grid() const { return {row_groups(), shape.heads, shape.batch}; }
  IOSIM_HD i64 first_row(i64 group) const { return group * rows_per_cta(); }
  IOSIM_HD i64 rows_in(i64 group) const { return min_i64(rows_per_cta(), seq_q - first_row(group)); }
};

}  // namespace iosim::schedule
