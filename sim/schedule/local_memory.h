// Local memory (LDL / STL: a kernel's register spills and register-indexed
// tables), as one warp issues it in FA2's kernels: the table of accesses read
// off the SASS (fa2_local_memory.inc), and which loads the L1 serves.
//
// Local memory is interleaved by 4-byte word: word w of a warp's 32 lanes is
// one 128-byte line of that warp's own, so an access of B bytes per lane at
// stack offset o touches lines o/4 .. o/4 + B/4 - 1. Stores write through the
// L1 to the L2 (Nsight Compute on an H200: every STL sector reaches the L2);
// loads hit when their line is still in the L1's data part, which shares the
// SM's 256 KiB with shared memory: what the kernel's shared-memory carve-out
// leaves (experiments/results/2026-11-28-h200-local-memory).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::schedule {

struct LocalAccess {
  enum class Kind : std::uint8_t {
    load,       // LDL
    last_load,  // LDL.LU: the stack word's last use, after which the L1 may drop its line
    store,      // STL
  };
  Kind kind = Kind::load;
  std::int32_t lane_bytes = 4;     // 4, 8 or 16
  std::int32_t word = 0;           // first 4-byte stack word (indexed tables: a word past any frame)
  std::int32_t use_distance = -1;  // loads: instructions to the first reader of what it loaded (-1: none)
  bool is_load() const { return kind != Kind::store; }
  std::int32_t lines() const { return lane_bytes > 4 ? lane_bytes / 4 : 1; }
  i64 warp_bytes() const { return 32 * i64{lane_bytes}; }
};

// The forward's one-time accesses beyond its prologue: masked_prologue, in a
// block its set-up runs only in a causal kernel, in every CTA; masked_entry, between its two loops, in CTAs with a masked run;
// first and masked_first, the step and the masked step with the lazy rescale
// taken (a CTA's first key block), where they differ from step and masked.
enum class LocalRegion { prologue, masked_prologue, masked_entry, step, masked, epilogue, first, masked_first };

// One warp's local accesses of fa2_forward_kernel (backward = false) or
// fa2_backward_kernel at (d, B_r, B_c) in `region`, in issue order; empty
// where the kernel has none there (or no such kernel is in the table); first
// and masked_first without a row of their own: step's and masked's.
const std::vector<LocalAccess>& fa2_local_accesses(bool backward, int d, int bm, int bn, LocalRegion region);

// One access as fa2_local_memory.inc and trace files spell it: KIND BYTES
// (+OFFSET | tTABLE) [@DISTANCE], e.g. "L4+52@20" (an LDL of 4 bytes a lane
// at stack offset 52, read 20 instructions later); nullopt if malformed.
std::optional<LocalAccess> parse_local_token(std::string_view token);
std::string local_token(const LocalAccess& a);

// Which accesses of a warp's repeating sequence (a step, run again and again)
// find their lines in the L1, for `resident_warps` warps that run it in
// lockstep and `l1_bytes` of L1 left beside shared memory, LRU: a load's line
// hits when it was touched earlier (cyclically) by an access other than a
// last-use load, and the lines all resident warps touched since then, each
// warp the same number as this one, fit; a line the sequence never touched
// before (spilled earlier, in the prologue) hits when every resident warp's
// lines of the sequence fit. Stores are `true` (they allocate; their bytes
// go to the L2 regardless). One entry per access.
// `repeating` false: the sequence runs once (an epilogue), so a load looks
// back only to the sequence's start.
std::vector<bool> local_hits(const std::vector<LocalAccess>& seq, i64 resident_warps, i64 l1_bytes,
                             bool repeating = true);

// The L1's data capacity beside shared memory: `l1_smem_bytes` (unified L1 +
// shared memory per SM) less the shared-memory carve-out the driver picks for
// `smem_bytes` per SM (the resident CTAs' shared memory with its per-CTA
// reserve): the smallest the architecture offers that holds it.
i64 l1_bytes_beside_smem(i64 l1_smem_bytes, i64 smem_bytes, int cc_major, int cc_minor);

}  // namespace iosim::schedule
