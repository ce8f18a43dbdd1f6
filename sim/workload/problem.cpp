#include "sim/workload/problem.h"

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

// Mask file: whitespace-separated rows of 0/1, one line per query block,
// '#' starts a comment.
BlockMask read_mask_file(const std::string& path, i64 m_blocks, i64 n_blocks) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot open block mask file '" + path + "'");
  BlockMask mask{m_blocks, n_blocks, {}};
  std::string line;
  i64 line_no = 0;
  i64 rows = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream cells(line);
    std::string cell;
    i64 cols = 0;
    while (cells >> cell) {
      if (cell != "0" && cell != "1")
        throw InputError(path + ":" + std::to_string(line_no) + ": mask entry '" + cell +
                         "' is not 0 or 1");
      mask.active.push_back(cell == "1" ? 1 : 0);
      ++cols;
    }
    if (cols == 0) continue;
    if (cols != n_blocks)
      throw InputError(path + ":" + std::to_string(line_no) + ": mask row has " +
                       std::to_string(cols) + " entries; the tiling has " +
                       std::to_string(n_blocks) + " key blocks");
    ++rows;
  }
  if (rows != m_blocks)
    throw InputError(path + ": mask has " + std::to_string(rows) + " rows; the tiling has " +
                     std::to_string(m_blocks) + " query blocks (mask is " +
                     std::to_string(m_blocks) + " x " + std::to_string(n_blocks) +
                     " over the block_m x block_n tile grid)");
  return mask;
}

}  // namespace

BlockMask SparsitySpec::materialise(i64 m_blocks, i64 n_blocks) const {
  switch (kind) {
    case Kind::dense: return {};
    case Kind::random_density: return random_mask(m_blocks, n_blocks, density, seed);
    case Kind::file: return read_mask_file(file, m_blocks, n_blocks);
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
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::standard: return "standard";
    case Algorithm::fa1: return "fa1";
    case Algorithm::fa2: return "fa2";
    case Algorithm::fa1_swapped: return "fa1-swapped";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view s) {
  if (s == "standard") return Algorithm::standard;
  if (s == "fa1") return Algorithm::fa1;
  if (s == "fa2") return Algorithm::fa2;
  if (s == "fa1-swapped") return Algorithm::fa1_swapped;
  throw InputError("unknown algorithm '" + std::string(s) +
                   "' (valid: standard, fa1, fa2, fa1-swapped)");
}

}  // namespace iosim::workload
