// The tile grid of one attention head: which (query block i, key block j)
// tiles exist, which of them causal masking and block sparsity leave active,
// and in which order a CTA visits them.
//
// Part of the plan (plan.h): the trace, the CPU numerics and the CUDA kernels
// all iterate key/query blocks through these functions (directly or through
// the schedules of kernel_schedules.h), so a kernel cannot visit a tile the
// trace does not count, or the reverse.
#pragma once
#include <cstdint>

#include "sim/common/hd.h"

namespace iosim::schedule {

// Block-sparsity mask over this tiling's own (block_m x block_n) grid,
// row-major [m_block][n_block]; active == nullptr means dense.
struct BlockMaskView {
  const std::uint8_t* active = nullptr;
  i64 m_blocks = 0;
  i64 n_blocks = 0;
};

// Causal masking is bottom-right aligned, as in FlashAttention >= 2.1:
// query row r may see key column c iff c <= r + (seq_k - seq_q). With
// seq_q > seq_k the first seq_q - seq_k rows see no key at all; their output
// is defined as 0 (and their log-sum-exp as -inf).
struct AttentionTiles {
  i64 seq_q = 0;
  i64 seq_k = 0;
  i64 block_m = 0;  // B_r: query rows per tile
  i64 block_n = 0;  // B_c: key columns per tile
  bool causal = false;
  BlockMaskView mask{};

  IOSIM_HD i64 m_blocks() const { return ceil_div(seq_q, block_m); }
  IOSIM_HD i64 n_blocks() const { return ceil_div(seq_k, block_n); }
  IOSIM_HD i64 row_begin(i64 i) const { return i * block_m; }
  IOSIM_HD i64 col_begin(i64 j) const { return j * block_n; }
  // Ragged sequences: the last block holds only the remaining rows/columns.
  IOSIM_HD i64 rows_in(i64 i) const { return min_i64(block_m, seq_q - i * block_m); }
  IOSIM_HD i64 cols_in(i64 j) const { return min_i64(block_n, seq_k - j * block_n); }

  // One past the last key column query row r may see (0: row fully masked).
  IOSIM_HD i64 key_end_for_row(i64 r) const {
    if (!causal) return seq_k;
    return max_i64(0, min_i64(seq_k, r + (seq_k - seq_q) + 1));
  }
  // One past the last key block any row of query block i may see.
  IOSIM_HD i64 n_block_end(i64 i) const {
    return ceil_div(key_end_for_row(row_begin(i) + rows_in(i) - 1), block_n);
  }
  // First query block with a row that may see a key of key block j.
  IOSIM_HD i64 m_block_begin(i64 j) const {
    if (!causal) return 0;
    const i64 first_row = max_i64(0, col_begin(j) - (seq_k - seq_q));
    return first_row >= seq_q ? m_blocks() : first_row / block_m;
  }

  IOSIM_HD bool mask_allows(i64 i, i64 j) const {
    return mask.active == nullptr || mask.active[i * mask.n_blocks + j] != 0;
  }
  IOSIM_HD bool is_active(i64 i, i64 j) const {
    return j < n_block_end(i) && i >= m_block_begin(j) && mask_allows(i, j);
  }
  // True when some element of an active tile lies above the causal diagonal,
  // so the tile must be masked element by element.
  IOSIM_HD bool crosses_diagonal(i64 i, i64 j) const {
    return causal && col_begin(j) + cols_in(j) > key_end_for_row(row_begin(i));
  }

  // True when an active tile needs an element mask in the kernels: it crosses
  // the causal diagonal or holds fewer than block_n key columns (the ragged
  // last block). Monotonic in j for a fixed i, so a CTA's key blocks split
  // into an unmasked run followed by a masked run (KeyBlockRange).
  IOSIM_HD bool needs_element_mask(i64 i, i64 j) const {
    return crosses_diagonal(i, j) || cols_in(j) < block_n;
  }
  // The first key block of query block i that needs an element mask
  // (n_blocks() when none does).
  IOSIM_HD i64 first_masked_n_block(i64 i) const {
    i64 first = seq_k % block_n != 0 ? n_blocks() - 1 : n_blocks();
    if (causal) {
      const i64 visible = key_end_for_row(row_begin(i));  // keys the block's first row sees
      if (visible < seq_k) first = min_i64(first, visible / block_n);
    }
    return first;
  }

  // Key blocks visited by the CTA that owns query block i, in order:
  //   for (j = first_n_block(i); j < n_block_end(i); j = next_n_block(i, j))
  IOSIM_HD i64 first_n_block(i64 i) const { return skip_masked_n(i, 0); }
  IOSIM_HD i64 next_n_block(i64 i, i64 j) const { return skip_masked_n(i, j + 1); }
  // Query blocks visited by the CTA that owns key block j, in order:
  //   for (i = first_m_block(j); i < m_blocks(); i = next_m_block(j, i))
  IOSIM_HD i64 first_m_block(i64 j) const { return skip_masked_m(j, m_block_begin(j)); }
  IOSIM_HD i64 next_m_block(i64 j, i64 i) const { return skip_masked_m(j, i + 1); }

  // The key blocks of query block i as one walk with its ends computed once
  // (no division per step), for loops that run on the GPU:
  //   const auto r = tiles.key_blocks<int>(i);
  //   for (j = r.first; j < r.end; j = r.next(j)) ... r.masked(j)
  // visits exactly first_n_block/next_n_block's blocks; Index may be int
  // where the caller has checked that block indices fit. It holds its mask
  // row by value: a kernel that kept a pointer to its parameters here had
  // them copied to local memory.
  template <class Index>
  struct KeyBlockRange {
    const std::uint8_t* mask_row;  // row i of the block mask; null when dense
    Index first, end, first_masked;
    IOSIM_HD Index next(Index j) const {
      ++j;
      if (mask_row != nullptr)
        while (j < end && mask_row[j] == 0) ++j;
      return j;
    }
    IOSIM_HD bool masked(Index j) const { return j >= first_masked; }
  };
  template <class Index = i64>
  IOSIM_HD KeyBlockRange<Index> key_blocks(i64 i) const {
    return {mask.active != nullptr ? mask.active + i * mask.n_blocks : nullptr, static_cast<Index>(first_n_block(i)),
            static_cast<Index>(n_block_end(i)), static_cast<Index>(first_masked_n_block(i))};
  }

  // The query blocks of key block j, the same way (FlashAttention-2's backward
  // loop): first_m_block/next_m_block's blocks, and which need an element mask.
  // From m_block_begin(j) on every query block sees key block j, so only the
  // block mask can skip one; a block crosses the causal diagonal exactly while
  // row_begin(i) + (seq_k - seq_q) + 1 < col_end, i.e. for i < masked_end.
  template <class Index>
  struct QueryBlockRange {
    Index j;
    Index first, end;
    Index masked_end;  // blocks before it need an element mask (all of them for the ragged last key block)
    // The block mask is read through `tiles` (the kernel's parameters) rather
    // than held here: in a 255-register kernel every value held across the
    // loop costs spills.
    IOSIM_HD Index next(const AttentionTiles& tiles, Index i) const {
      ++i;
      if (tiles.mask.active != nullptr)
        while (i < end && !tiles.mask_allows(i, j)) ++i;
      return i;
    }
    IOSIM_HD bool masked(Index i) const { return i < masked_end; }
  };
  template <class Index = i64>
  IOSIM_HD QueryBlockRange<Index> query_blocks(i64 j) const {
    i64 masked_end = 0;
    if (cols_in(j) < block_n) {
      masked_end = m_blocks();
    } else if (causal) {
      const i64 t = col_begin(j) + cols_in(j) - (seq_k - seq_q) - 1;  // rows below t cross
      masked_end = t > 0 ? min_i64(m_blocks(), ceil_div(t, block_m)) : 0;
    }
    return {static_cast<Index>(j), static_cast<Index>(first_m_block(j)), static_cast<Index>(m_blocks()),
            static_cast<Index>(masked_end)};
  }

  // Number of active tiles in query block i / key block j.
  IOSIM_HD i64 active_in_row(i64 i) const {
    i64 n = 0;
    for (i64 j = first_n_block(i); j < n_block_end(i); j = next_n_block(i, j)) ++n;
    return n;
  }
  IOSIM_HD bool column_has_active(i64 j) const { return first_m_block(j) < m_blocks(); }

 private:
  IOSIM_HD i64 skip_masked_n(i64 i, i64 j) const {
    const i64 end = n_block_end(i);
    while (j < end && !mask_allows(i, j)) ++j;
    return j < end ? j : end;
  }
  IOSIM_HD i64 skip_masked_m(i64 j, i64 i) const {
    const i64 end = m_blocks();
    while (i < end && !(mask_allows(i, j) && j < n_block_end(i))) ++i;
    return i;
  }
};

}  // namespace iosim::schedule
