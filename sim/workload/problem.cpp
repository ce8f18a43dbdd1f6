#include "sim/workload/problem.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "sim/common/error.h"

namespace iosim::workload {

i64 dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }

std::string_view to_string(DType t) {
  switch (t) {
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp32: return "fp32";
  }
  return "?";
}
std::string_view to_string(Layout l) { return l == Layout::bshd ? "bshd" : "bhsd"; }
std::string_view to_string(Pass p) {
  switch (p) {
    case Pass::fwd: return "fwd";
    case Pass::bwd: return "bwd";
    case Pass::fwdbwd: return "fwdbwd";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  if (s == "fp16") return DType::fp16;
  if (s == "bf16") return DType::bf16;
  if (s == "fp32") return DType::fp32;
  throw InputError("unknown dtype '" + std::string(s) + "' (valid: fp16, bf16, fp32)");
}
Layout parse_layout(std::string_view s) {
  if (s == "bshd") return Layout::bshd;
  if (s == "bhsd") return Layout::bhsd;
  throw InputError("unknown layout '" + std::string(s) + "' (valid: bshd, bhsd)");
}
Pass parse_pass(std::string_view s) {
  if (s == "fwd") return Pass::fwd;
  if (s == "bwd") return Pass::bwd;
  if (s == "fwdbwd") return Pass::fwdbwd;
  throw InputError("unknown pass '" + std::string(s) + "' (valid: fwd, bwd, fwdbwd)");
}

i64 BlockMask::nonzero() const {
  i64 n = 0;
  for (auto a : active) n += a != 0;
  return n;
}
double BlockMask::density() const {
  return active.empty() ? 1.0 : static_cast<double>(nonzero()) / static_cast<double>(active.size());
}

namespace {

BlockMask random_mask(i64 m_blocks, i64 n_blocks, double density, std::uint64_t seed) {
  BlockMask mask{m_blocks, n_blocks, {}};
  mask.active.resize(static_cast<size_t>(m_blocks * n_blocks));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& a : mask.active) a = u(rng) < density ? 1 : 0;
  return mask;
}

// Mask file: whitespace-separated rows of 0/1, one line per block row, '#'
// starts a comment; every row as long as the first.
struct MaskFile {
  i64 rows = 0, cols = 0;
  std::vector<std::uint8_t> active;  // row-major
};

MaskFile read_mask_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("block mask '" + path + "' is a directory, not a file");
  std::ifstream in(path);
  if (!in) throw InputError("cannot open block mask file '" + path + "'");
  MaskFile mask;
  std::string line;
  i64 line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream cells(line);
    std::string cell;
    i64 cols = 0;
    while (cells >> cell) {
      if (cell != "0" && cell != "1")
        throw InputError(path + ":" + std::to_string(line_no) + ": mask entry '" + cell + "' is not 0 or 1");
      mask.active.push_back(cell == "1" ? 1 : 0);
      ++cols;
    }
    if (cols == 0) continue;
    if (mask.rows > 0 && cols != mask.cols)
      throw InputError(path + ":" + std::to_string(line_no) + ": mask row has " + std::to_string(cols) +
                       " entries; the rows above have " + std::to_string(mask.cols));
    mask.cols = cols;
    ++mask.rows;
  }
  if (mask.rows == 0) throw InputError(path + ": the block mask has no rows of 0/1");
  return mask;
}

std::string grid_text(i64 rows, i64 cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

// The mask's blocks along one dimension of n positions: `count` of size n /
// count, which must be whole and a multiple or a divisor of the tile size.
bool aligned(i64 n, i64 count, i64 tile) {
  if (n % count != 0) return false;
  const i64 size = n / count;
  return size % tile == 0 || tile % size == 0;
}

// A mask file on the (block_m x block_n) tile grid: as it is when it has the
// grid's shape; else at its own granularity, a tile being active when any
// mask block it overlaps is.
BlockMask on_tile_grid(const MaskFile& f, const std::string& path, i64 seq_q, i64 seq_k, i64 bm, i64 bn) {
  const i64 m_blocks = ceil_div(seq_q, bm), n_blocks = ceil_div(seq_k, bn);
  if (f.rows == m_blocks && f.cols == n_blocks) return {m_blocks, n_blocks, f.active};
  if (!aligned(seq_q, f.rows, bm) || !aligned(seq_k, f.cols, bn))
    throw InputError(path + ": the mask has " + grid_text(f.rows, f.cols) + " blocks; the tiling's block grid is " +
                     grid_text(m_blocks, n_blocks) + " (Br=" + std::to_string(bm) + " x Bc=" + std::to_string(bn) +
                     " over Nq=" + std::to_string(seq_q) + " x Nk=" + std::to_string(seq_k) + "; a mask at another granularity must cut Nq and Nk into whole blocks whose sizes are "
                     "multiples or divisors of Br and Bc)");
  const i64 bq = seq_q / f.rows, bk = seq_k / f.cols;
  BlockMask mask{m_blocks, n_blocks, std::vector<std::uint8_t>(static_cast<size_t>(m_blocks * n_blocks), 0)};
  for (i64 i = 0; i < m_blocks; ++i)
    for (i64 j = 0; j < n_blocks; ++j) {
      const i64 r_last = (std::min((i + 1) * bm, seq_q) - 1) / bq, c_last = (std::min((j + 1) * bn, seq_k) - 1) / bk;
      std::uint8_t any = 0;
      for (i64 r = i * bm / bq; r <= r_last; ++r)
        for (i64 c = j * bn / bk; c <= c_last; ++c) any |= f.active[static_cast<size_t>(r * f.cols + c)];
      mask.active[static_cast<size_t>(i * n_blocks + j)] = any;
    }
  return mask;
}

}  // namespace

BlockMask SparsitySpec::materialise(i64 seq_q, i64 seq_k, i64 block_m, i64 block_n) const {
  const i64 m_blocks = ceil_div(seq_q, block_m), n_blocks = ceil_div(seq_k, block_n);
  switch (kind) {
    case Kind::dense: return {};
    case Kind::random_density: return random_mask(m_blocks, n_blocks, density, seed);
    case Kind::file: return on_tile_grid(read_mask_file(file), file, seq_q, seq_k, block_m, block_n);
  }
  return {};
}

BlockMask SparsitySpec::materialise(i64 m_blocks, i64 n_blocks) const {
  switch (kind) {
    case Kind::dense: return {};
    case Kind::random_density: return random_mask(m_blocks, n_blocks, density, seed);
    case Kind::file: {  // the grid's shape only: its block sizes are not known here
      MaskFile f = read_mask_file(file);
      if (f.rows != m_blocks || f.cols != n_blocks)
        throw InputError(file + ": the mask has " + grid_text(f.rows, f.cols) + " blocks; the tile grid is " +
                         grid_text(m_blocks, n_blocks));
      return {m_blocks, n_blocks, std::move(f.active)};
    }
  }
  return {};
}

void Problem::validate() const {
  auto positive = [](const char* what, i64 v) {
    if (v <= 0) throw InputError(std::string(what) + " must be positive (got " + std::to_string(v) + ")");
  };
  positive("batch", batch);
  positive("heads", heads);
  positive("kv-heads", kv_heads);
  positive("seq-q", seq_q);
  positive("seq-k", seq_k);
  positive("head-dim", head_dim);
  if (heads % kv_heads != 0)
    throw InputError("heads (" + std::to_string(heads) + ") must be divisible by kv-heads (" +
                     std::to_string(kv_heads) + ")");
  if (sparsity.kind == SparsitySpec::Kind::random_density &&
      !(sparsity.density > 0.0 && sparsity.density <= 1.0))
    throw InputError("block density must be in (0, 1] (got " + std::to_string(sparsity.density) + ")");
  // CUDA grids: y and z dimensions are limited to 65535.
  if (batch > 65535 || heads > 65535)
    throw InputError("batch and heads must each be at most 65535 (CUDA grid y/z limit)");
  // Bytes and FLOPs are counted in 64 bits and grow as B H Nq Nk d times a
  // small factor (standard attention's backward: 12 for its FLOPs).
  using u128 = unsigned __int128;
  const u128 size = u128(static_cast<std::uint64_t>(batch * heads)) * static_cast<std::uint64_t>(seq_q) *
                    static_cast<std::uint64_t>(seq_k) * static_cast<std::uint64_t>(head_dim);
  if (size > (u128{1} << kMaxProblemLog2)) {
    char text[96];
    std::snprintf(text, sizeof text, "%.3g exceeds 2^%d = %.3g", static_cast<double>(size), kMaxProblemLog2,
                  static_cast<double>(u128{1} << kMaxProblemLog2));
    throw InputError(std::string("problem too large for 64-bit counts: batch x heads x seq-q x seq-k x head-dim = ") +
                     text);
  }
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::standard: return "standard";
    case Algorithm::fa1: return "fa1";
    case Algorithm::fa2: return "fa2";
    case Algorithm::fa1_swapped: return "fa1-swapped";
    case Algorithm::standard_eager: return "standard-eager";
    case Algorithm::splitkv: return "splitkv";
    case Algorithm::fa3: return "fa3";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view s) {
  if (s == "standard") return Algorithm::standard;
  if (s == "fa1") return Algorithm::fa1;
  if (s == "fa2") return Algorithm::fa2;
  if (s == "fa1-swapped") return Algorithm::fa1_swapped;
  if (s == "standard-eager") return Algorithm::standard_eager;
  if (s == "splitkv") return Algorithm::splitkv;
  if (s == "fa3") return Algorithm::fa3;
  throw InputError("unknown algorithm '" + std::string(s) +
                   "' (valid: standard, standard-eager, fa1, fa2, fa1-swapped, splitkv, fa3)");
}

}  // namespace iosim::workload
