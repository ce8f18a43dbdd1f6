// Closed-form SRAM<->global byte counts for every algorithm and pass, derived
// by hand from each algorithm's loop nest (see README "IO formulas"), and
// evaluated independently of the trace: tests assert trace == formula.
//
// Causal masking and block sparsity enter only through a few tile statistics
// (how many tiles are active, and the rows/columns they cover); for dense,
// non-causal problems these reduce to T_r, T_c, N_q and N_k.
#pragma once
#include <string>
#include <vector>

#include "sim/trace/algorithms.h"

namespace iosim::count {

// Statistics of the active tiles of one head's (T_r x T_c) grid.
struct TileStats {
  i64 t_r = 0, t_c = 0;       // query / key blocks
  i64 active = 0;             // active (i, j) tiles
  i64 rows_over_active = 0;   // sum over active tiles of rows(i)
  i64 cols_over_active = 0;   // sum over active tiles of cols(j)
  i64 rows_with_active = 0;   // sum of rows(i) over query blocks with >= 1 active tile
  i64 cols_with_active = 0;   // sum of cols(j) over key blocks with >= 1 active tile
  i64 key_blocks_with_active = 0;  // key blocks with >= 1 active tile
  i64 area_over_active = 0;        // sum over active tiles of rows(i) * cols(j)
};

// Causal: evaluated per query block in O(T_r) from the diagonal's position;
// with a block mask: summed over the mask's entries.
TileStats tile_stats(const workload::Problem& p, i64 block_m, i64 block_n, const workload::BlockMask* mask);

struct FormulaTerm {
  std::string what;  // e.g. "K, V: 2·e·d·N_k·T_r per head"
  i64 bytes = 0;
};

struct Formula {
  i64 read_bytes = 0;
  i64 write_bytes = 0;
  i64 bytes() const { return read_bytes + write_bytes; }
  std::vector<FormulaTerm> terms;  // the closed form, term by term (all heads)
  std::string expression;          // the paper's asymptotic form, e.g. "12N²d²/M + 16N²d/M + 3Nd"
  double paper_bytes = 0;          // that expression evaluated (elements × dtype bytes), 0 if none
  i64 tensor_flops = 0;            // matrix-multiply FLOPs (2 per multiply-add), as the trace counts them
};

// The closed form for the run's algorithm, pass and tiling.
Formula formula_for(const trace::AlgorithmTrace& run);

// Trace steps of each kernel of the run, in launch order, over all its CTAs
// (what the timing engine replays), from the plan and the tile statistics:
// cheap for any problem size, so long runs can be sized before they start.
std::vector<i64> kernel_steps(const trace::AlgorithmTrace& run);

}  // namespace iosim::count
