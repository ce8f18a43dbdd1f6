#include "sim/count/formulas.h"

#include <algorithm>
#include <cmath>

#include "sim/schedule/kernel_schedules.h"
#include "sim/schedule/plan.h"

namespace iosim::count {

using workload::Algorithm;
using workload::Pass;

namespace {

i64 cdiv(i64 a, i64 b) { return (a + b - 1) / b; }

// Key blocks a query block may touch under bottom-right causal masking,
// derived from the last row of the block: row r sees keys [0, r + N_k - N_q].
i64 causal_key_blocks(const workload::Problem& p, i64 block_m, i64 block_n, i64 i) {
  const i64 last_row = std::min(p.seq_q, (i + 1) * block_m) - 1;
  const i64 key_end = std::clamp<i64>(last_row + p.seq_k - p.seq_q + 1, 0, p.seq_k);
  return cdiv(key_end, block_n);
}

}  // namespace

TileStats tile_stats(const workload::Problem& p, i64 bm, i64 bn, const workload::BlockMask* mask) {
  TileStats s;
  s.t_r = cdiv(p.seq_q, bm);
  s.t_c = cdiv(p.seq_k, bn);
  auto rows = [&](i64 i) { return std::min(bm, p.seq_q - i * bm); };
  auto cols = [&](i64 j) { return std::min(bn, p.seq_k - j * bn); };
  auto key_blocks = [&](i64 i) { return p.causal ? causal_key_blocks(p, bm, bn, i) : s.t_c; };
  const bool masked = mask != nullptr && !mask->active.empty();

  if (!masked) {
    i64 widest = 0;
    for (i64 i = 0; i < s.t_r; ++i) {
      const i64 r = key_blocks(i);
      const i64 cols_seen = std::min(r * bn, p.seq_k);  // the first r key blocks
      s.active += r;
      s.rows_over_active += rows(i) * r;
      s.cols_over_active += cols_seen;
      s.area_over_active += rows(i) * cols_seen;
      if (r > 0) s.rows_with_active += rows(i);
      widest = std::max(widest, r);
    }
    s.cols_with_active = std::min(widest * bn, p.seq_k);
    s.key_blocks_with_active = widest;
    return s;
  }
  std::vector<char> column_used(static_cast<size_t>(s.t_c), 0);
  for (i64 i = 0; i < s.t_r; ++i) {
    const i64 r_end = key_blocks(i);
    i64 r = 0;
    for (i64 j = 0; j < r_end; ++j) {
      if (!mask->active[static_cast<size_t>(i * mask->n_blocks + j)]) continue;
      ++r;
      s.cols_over_active += cols(j);
      s.area_over_active += rows(i) * cols(j);
      column_used[static_cast<size_t>(j)] = 1;
    }
    s.active += r;
    s.rows_over_active += rows(i) * r;
    if (r > 0) s.rows_with_active += rows(i);
  }
  for (i64 j = 0; j < s.t_c; ++j)
    if (column_used[static_cast<size_t>(j)]) {
      s.cols_with_active += cols(j);
      ++s.key_blocks_with_active;
    }
  return s;
}

namespace {

constexpr i64 kStat = schedule::ElementBytes::kStat;
constexpr i64 kAcc = schedule::ElementBytes::kAccum;

struct Builder {
  Formula f;
  void read(std::string what, i64 bytes) {
    f.read_bytes += bytes;
    f.terms.push_back({"read  " + std::move(what), bytes});
  }
  void write(std::string what, i64 bytes) {
    f.write_bytes += bytes;
    f.terms.push_back({"write " + std::move(what), bytes});
  }
};

struct Dims {
  i64 B, H, Hkv, G, Nq, Nk, d, e;
  i64 BH() const { return B * H; }
  i64 BHkv() const { return B * Hkv; }
};

void standard_forward(Builder& b, const Dims& x, const trace::GemmTiles& g, bool two_pass) {
  const i64 nn = x.Nq * x.Nk * x.e;
  b.read("Q in S=QK^T: e*Nq*d*ceil(Nk/gemm_n) per head", x.BH() * x.e * x.Nq * x.d * cdiv(x.Nk, g.n));
  b.read("K in S=QK^T: e*Nk*d*ceil(Nq/gemm_m) per head", x.BH() * x.e * x.Nk * x.d * cdiv(x.Nq, g.m));
  b.write("S: e*Nq*Nk per head", x.BH() * nn);
  b.read(two_pass ? "S in softmax (2 passes): 2*e*Nq*Nk per head" : "S in softmax: e*Nq*Nk per head",
         x.BH() * nn * (two_pass ? 2 : 1));
  b.write("P: e*Nq*Nk per head", x.BH() * nn);
  b.read("P in O=PV: e*Nq*Nk*ceil(d/gemm_n) per head", x.BH() * nn * cdiv(x.d, g.n));
  b.read("V in O=PV: e*Nk*d*ceil(Nq/gemm_m) per head", x.BH() * x.e * x.Nk * x.d * cdiv(x.Nq, g.m));
  b.write("O: e*Nq*d per head", x.BH() * x.e * x.Nq * x.d);
}

void standard_backward(Builder& b, const Dims& x, const trace::GemmTiles& g, bool two_pass) {
  const i64 nn = x.Nq * x.Nk * x.e;
  b.read("P in dV=P^T dO: e*Nq*Nk*ceil(d/gemm_n) per head", x.BH() * nn * cdiv(x.d, g.n));
  b.read("dO in dV=P^T dO: e*Nq*d*ceil(Nk/gemm_m) per head", x.BH() * x.e * x.Nq * x.d * cdiv(x.Nk, g.m));
  b.write("dV: e*Nk*d per KV head", x.BHkv() * x.e * x.Nk * x.d);
  b.read("dO in dP=dO V^T: e*Nq*d*ceil(Nk/gemm_n) per head", x.BH() * x.e * x.Nq * x.d * cdiv(x.Nk, g.n));
  b.read("V in dP=dO V^T: e*Nk*d*ceil(Nq/gemm_m) per head", x.BH() * x.e * x.Nk * x.d * cdiv(x.Nq, g.m));
  b.write("dP: e*Nq*Nk per head", x.BH() * nn);
  b.read(two_pass ? "P, dP in softmax backward (2 passes): 4*e*Nq*Nk per head"
                  : "P, dP in softmax backward: 2*e*Nq*Nk per head",
         x.BH() * nn * 2 * (two_pass ? 2 : 1));
  b.write("dS: e*Nq*Nk per head", x.BH() * nn);
  b.read("dS in dQ=dS K: e*Nq*Nk*ceil(d/gemm_n) per head", x.BH() * nn * cdiv(x.d, g.n));
  b.read("K in dQ=dS K: e*Nk*d*ceil(Nq/gemm_m) per head", x.BH() * x.e * x.Nk * x.d * cdiv(x.Nq, g.m));
  b.write("dQ: e*Nq*d per head", x.BH() * x.e * x.Nq * x.d);
  b.read("dS in dK=dS^T Q: e*Nq*Nk*ceil(d/gemm_n) per head", x.BH() * nn * cdiv(x.d, g.n));
  b.read("Q in dK=dS^T Q: e*Nq*d*ceil(Nk/gemm_m) per head", x.BH() * x.e * x.Nq * x.d * cdiv(x.Nk, g.m));
  b.write("dK: e*Nk*d per KV head", x.BHkv() * x.e * x.Nk * x.d);
}

// standard-eager's elementwise kernels beside standard attention's: each reads
// and writes whole N_q x N_k matrices; `masked` (causal or block-sparse) adds
// the mask kernel, which reads the 1-byte mask buffer beside S.
void eager_forward(Builder& b, const Dims& x, bool masked) {
  const i64 nn = x.BH() * x.Nq * x.Nk;
  b.read("S in scaling: e*Nq*Nk per head", x.e * nn);
  b.write("S scaled: e*Nq*Nk per head", x.e * nn);
  if (masked) {
    b.read("S and the 1-byte mask in masking: (e+1)*Nq*Nk per head", (x.e + 1) * nn);
    b.write("S masked: e*Nq*Nk per head", x.e * nn);
  }
  b.read("P in dropout: e*Nq*Nk per head", x.e * nn);
  b.write("Pd and its 1-byte keep mask Z: (e+1)*Nq*Nk per head", (x.e + 1) * nn);
}

void eager_backward(Builder& b, const Dims& x, bool masked) {
  const i64 nn = x.BH() * x.Nq * x.Nk;
  b.read("dP and Z in dropout backward: (e+1)*Nq*Nk per head", (x.e + 1) * nn);
  b.write("dP: e*Nq*Nk per head", x.e * nn);
  if (masked) {
    b.read("dS and the 1-byte mask in masking backward: (e+1)*Nq*Nk per head", (x.e + 1) * nn);
    b.write("dS masked: e*Nq*Nk per head", x.e * nn);
  }
  b.read("dS in scaling backward: e*Nq*Nk per head", x.e * nn);
  b.write("dS scaled: e*Nq*Nk per head", x.e * nn);
}

void fa1_forward(Builder& b, const Dims& x, const TileStats& s) {
  b.write("init O=0, l=0, m=-inf: e*Nq*d + 8*Nq per head", x.BH() * (x.e * x.Nq * x.d + 2 * kStat * x.Nq));
  b.read("K_j, V_j once per active key block: 2*e*d*Nk per head (dense)", x.BH() * 2 * x.e * x.d * s.cols_with_active);
  b.read("Q_i, O_i per active tile: 2*e*d*Nq*T_c per head (dense)", x.BH() * 2 * x.e * x.d * s.rows_over_active);
  b.read("l_i, m_i per active tile: 8*Nq*T_c per head (dense)", x.BH() * 2 * kStat * s.rows_over_active);
  b.write("O_i per active tile: e*d*Nq*T_c per head (dense)", x.BH() * x.e * x.d * s.rows_over_active);
  b.write("l_i, m_i per active tile: 8*Nq*T_c per head (dense)", x.BH() * 2 * kStat * s.rows_over_active);
}

void fa1_swapped_forward(Builder& b, const Dims& x, const TileStats& s) {
  b.read("Q_i, O_i once: 2*e*Nq*d per head", x.BH() * 2 * x.e * x.Nq * x.d);
  b.read("K_j, V_j per active tile: 2*e*d*Nk*T_r per head (dense)", x.BH() * 2 * x.e * x.d * s.cols_over_active);
  b.write("O once: e*Nq*d per head", x.BH() * x.e * x.Nq * x.d);
  b.write("l, m once: 8*Nq per head", x.BH() * 2 * kStat * x.Nq);
}

void fa1_backward(Builder& b, const Dims& x, const TileStats& s) {
  b.write("init dK, dV = 0: 2*e*Nk*d per KV head", x.BHkv() * 2 * x.e * x.Nk * x.d);
  b.write("init dQaccum = 0: 4*Nq*d per head", x.BH() * kAcc * x.Nq * x.d);
  b.read("K_j, V_j once per active key block: 2*e*d*Nk per KV head (dense)",
         x.BHkv() * 2 * x.e * x.d * s.cols_with_active);
  b.read("Q_i, O_i, dO_i per active tile: 3*e*d*Nq*T_c per head (dense)", x.BH() * 3 * x.e * x.d * s.rows_over_active);
  b.read("dQaccum_i per active tile: 4*d*Nq*T_c per head (dense)", x.BH() * kAcc * x.d * s.rows_over_active);
  b.read("l_i, m_i per active tile: 8*Nq*T_c per head (dense)", x.BH() * 2 * kStat * s.rows_over_active);
  b.write("dQaccum_i per active tile: 4*d*Nq*T_c per head (dense)", x.BH() * kAcc * x.d * s.rows_over_active);
  b.write("dK_j, dV_j once per active key block: 2*e*d*Nk per KV head (dense)",
          x.BHkv() * 2 * x.e * x.d * s.cols_with_active);
  b.read("dQaccum in the final convert, every sector twice (two 16-byte halves, L1 bypassed): 8*Nq*d per head",
         x.BH() * 2 * kAcc * x.Nq * x.d);
  b.write("dQ: e*Nq*d per head", x.BH() * x.e * x.Nq * x.d);
}

void fa2_forward(Builder& b, const Dims& x, const TileStats& s) {
  b.read("Q_i once per query block with an active tile: e*Nq*d per head (dense)", x.BH() * x.e * x.d * s.rows_with_active);
  b.read("K_j, V_j per active tile: 2*e*d*Nk*T_r per head (dense)", x.BH() * 2 * x.e * x.d * s.cols_over_active);
  b.write("O: e*Nq*d per head", x.BH() * x.e * x.Nq * x.d);
  b.write("L = m + log l: 4*Nq per head", x.BH() * kStat * x.Nq);
}

void fa2_backward(Builder& b, const Dims& x, const TileStats& s) {
  b.read("O, dO in preprocess: 2*e*Nq*d per head", x.BH() * 2 * x.e * x.Nq * x.d);
  b.write("D = rowsum(dO*O): 4*Nq per head", x.BH() * kStat * x.Nq);
  b.write("dQaccum = 0: 4*Nq*d per head", x.BH() * kAcc * x.Nq * x.d);
  b.read("K_j, V_j once per CTA: 2*e*Nk*d per KV head", x.BHkv() * 2 * x.e * x.Nk * x.d);
  b.read("Q_i, dO_i per active tile: 2*e*d*Nq*T_c per head (dense)", x.BH() * 2 * x.e * x.d * s.rows_over_active);
  b.read("L_i, D_i per active tile: 8*Nq*T_c per head (dense)", x.BH() * 2 * kStat * s.rows_over_active);
  b.write("dQaccum_i atomic adds per active tile: 4*d*Nq*T_c per head (dense)", x.BH() * kAcc * x.d * s.rows_over_active);
  b.write("dK_j, dV_j once: 2*e*Nk*d per KV head", x.BHkv() * 2 * x.e * x.Nk * x.d);
  b.read("dQaccum in convert: 4*Nq*d per head", x.BH() * kAcc * x.Nq * x.d);
  b.write("dQ: e*Nq*d per head", x.BH() * x.e * x.Nq * x.d);
}

// Split-KV: per query block i with E_i active key blocks, min(S, E_i) splits
// are non-empty and load Q_i once each; K/V as FA2's forward (each active
// tile once, over all splits); every split CTA writes its fp32 partial O and
// LSE, and the combine reads them all and writes O and L.
void splitkv_forward(Builder& b, const Dims& x, const TileStats& s, const workload::Problem& p, i64 bm, i64 bn,
                     i64 splits) {
  i64 q_rows = 0;  // sum over query blocks of rows(i) * min(S, E_i)
  for (i64 i = 0; i < s.t_r; ++i) {
    const i64 e_i = p.causal ? causal_key_blocks(p, bm, bn, i) : s.t_c;
    q_rows += std::min(bm, p.seq_q - i * bm) * std::min(splits, e_i);
  }
  const i64 part_rows = x.BH() * splits * x.Nq;
  b.read("Q_i once per non-empty split: e*d*Nq*min(S, T_c) per head (dense)", x.BH() * x.e * x.d * q_rows);
  b.read("K_j, V_j per active tile: 2*e*d*Nk*T_r per head (dense)", x.BH() * 2 * x.e * x.d * s.cols_over_active);
  b.write("Oaccum, every split's partial O: 4*d*S*Nq per head", kAcc * x.d * part_rows);
  b.write("LSEaccum, every split's log-sum-exp: 4*S*Nq per head", kStat * part_rows);
  b.read("Oaccum, LSEaccum in the combine: 4*(d+1)*S*Nq per head", (kAcc * x.d + kStat) * part_rows);
  b.write("O: e*Nq*d per head", x.BH() * x.e * x.Nq * x.d);
  b.write("L = log sum_s exp(LSE_s): 4*Nq per head", x.BH() * kStat * x.Nq);
}

// The papers' asymptotic expressions in elements (N = N_q, M = SRAM elements
// of the block rule), times the element size, for all heads.
void paper_expression(Formula& f, const trace::AlgorithmTrace& run, const Dims& x) {
  const double N = static_cast<double>(x.Nq), d = static_cast<double>(x.d);
  const double M = static_cast<double>(run.tiling.sram_elements_m);
  const double scale = static_cast<double>(x.e) * static_cast<double>(x.BH());
  const bool fwd_only = run.pass == Pass::fwd;
  double density = 1.0;
  if (run.mask) density = run.mask->density();
  switch (run.algorithm) {
    case Algorithm::standard:
      f.expression = fwd_only ? "Theta(Nd + N^2): 4Nd + 4N^2 (Q,K,V,O once; S, P written and read once)"
                              : "Theta(Nd + N^2)";
      if (fwd_only) f.paper_bytes = (4 * N * d + 4 * N * N) * scale;
      return;
    case Algorithm::fa1:
      if (M <= 0) return;
      f.expression = density < 1.0 ? "s(12N^2d^2/M) + s(16N^2d/M) + 3Nd (forward)"
                                   : "12N^2d^2/M + 16N^2d/M + 3Nd (forward)";
      f.paper_bytes = (density * (12 * N * N * d * d / M + 16 * N * N * d / M) + 3 * N * d) * scale;
      if (!fwd_only) f.expression += "; backward Theta(N^2d^2/M)";
      if (!fwd_only) f.paper_bytes = 0;
      return;
    case Algorithm::fa1_swapped:
      if (M <= 0) return;
      f.expression = "8N^2d^2/M + 3dN + 2N (loop-swapped forward, Br = Bc = M/4d)";
      f.paper_bytes = (8 * N * N * d * d / M + 3 * d * N + 2 * N) * scale;
      return;
    case Algorithm::fa2:
      f.expression = "Theta(N^2d^2/M)";
      return;
    case Algorithm::standard_eager:
      f.expression = "Theta(Nd + N^2) (standard, and the elementwise kernels' N^2 each)";
      return;
    case Algorithm::splitkv:
      f.expression = "FA2 forward's + Theta(S N_q d) (the splits' partials written and read back)";
      return;
    case Algorithm::fa3:
      f.expression = "FA2 forward's at Br = Bc = 128: Theta(N^2d^2/M)";
      return;
  }
}

// Matrix-multiply FLOPs: per active tile 2 * rows * cols * d for each product
// (FA forward: S and P V; backward: S, dV, dP, dQ, dK), and standard
// attention's GEMMs in full (2 M N K each).
i64 tensor_flops(const trace::AlgorithmTrace& run, const Dims& x, const TileStats& s) {
  const bool fwd = run.pass != Pass::bwd, bwd = run.pass != Pass::fwd;
  const i64 tile_flops = 2 * x.BH() * s.area_over_active * x.d;  // one product over the active tiles
  const i64 gemm = 2 * x.BH() * x.Nq * x.Nk * x.d;                 // one full N_q x N_k x d product
  switch (run.algorithm) {
    case Algorithm::standard:
    case Algorithm::standard_eager: return (fwd ? 2 * gemm : 0) + (bwd ? 4 * gemm : 0);
    case Algorithm::fa1:
    case Algorithm::fa2:
    case Algorithm::splitkv:
    case Algorithm::fa3: return (fwd ? 2 * tile_flops : 0) + (bwd ? 5 * tile_flops : 0);
    case Algorithm::fa1_swapped: return 2 * tile_flops;
  }
  return 0;
}

}  // namespace

Formula formula_for(const trace::AlgorithmTrace& run) {
  const auto& p = run.problem;
  const Dims x{p.batch, p.heads, p.kv_heads, p.heads / p.kv_heads, p.seq_q, p.seq_k, p.head_dim, p.elem_bytes()};
  const TileStats s = tile_stats(p, run.tiling.block_m, run.tiling.block_n, run.mask.get());
  const bool fwd = run.pass != Pass::bwd, bwd = run.pass != Pass::fwd;
  Builder b;
  switch (run.algorithm) {
    case Algorithm::standard:
    case Algorithm::standard_eager: {
      // A row is read once when the fp32 staging of a CTA's rows (one row
      // per operand; 4 rows up to 1024 columns, else 1) fits in its shared
      // memory, twice otherwise.
      const i64 limit = run.sram_limit_bytes;
      using Softmax = schedule::RowSoftmaxSchedule;  // its rule for rows per CTA, not its counts
      const i64 rows_per_cta = p.seq_k <= Softmax::kWarpRowMaxCols ? Softmax::kThreads / 32 : 1;
      if (fwd) standard_forward(b, x, run.gemm, rows_per_cta * 1 * p.seq_k * 4 > limit);
      if (bwd) standard_backward(b, x, run.gemm, rows_per_cta * 2 * p.seq_k * 4 > limit);
      const bool masked = p.causal || (run.mask && !run.mask->active.empty());
      if (run.algorithm == Algorithm::standard_eager && fwd) eager_forward(b, x, masked);
      if (run.algorithm == Algorithm::standard_eager && bwd) eager_backward(b, x, masked);
      break;
    }
    case Algorithm::fa1:
      if (fwd) fa1_forward(b, x, s);
      if (bwd) fa1_backward(b, x, s);
      break;
    case Algorithm::fa1_swapped: fa1_swapped_forward(b, x, s); break;
    case Algorithm::fa2:
      if (fwd) fa2_forward(b, x, s);
      if (bwd) fa2_backward(b, x, s);
      break;
    case Algorithm::splitkv:
      splitkv_forward(b, x, s, p, run.tiling.block_m, run.tiling.block_n, run.tiling.splits);
      break;
    // FA3's CTA walks FA2 forward's tiles (only their order across CTAs
    // differs), so its bytes are FA2 forward's at the kernel's 128 x 128 tile.
    case Algorithm::fa3: fa2_forward(b, x, s); break;
  }
  paper_expression(b.f, run, x);
  b.f.tensor_flops = tensor_flops(run, x, s);
  return b.f;
}

std::vector<i64> kernel_steps(const trace::AlgorithmTrace& run) {
  const auto& p = run.problem;
  const TileStats s = tile_stats(p, run.tiling.block_m, run.tiling.block_n, run.mask.get());
  const i64 bh = p.batch * p.heads, bhkv = p.batch * p.kv_heads, group = p.heads / p.kv_heads;
  const schedule::Plan plan =
      schedule::make_plan(p, run.algorithm, run.pass,
                          {run.tiling.block_m, run.tiling.block_n, run.gemm, run.sram_limit_bytes, run.tiling.splits},
                          schedule::mask_view(run.mask.get()));
  std::vector<i64> steps;
  for (const auto& k : plan.kernels) {
    using schedule::KernelKind;
    switch (k.kind) {
      // A step per active key block, then O and L written.
      case KernelKind::fa2_fwd:
      case KernelKind::fa3_fwd: steps.push_back(bh * (s.active + s.t_r)); break;
      // K_j, V_j; a step per (head of the group, active query block); dK_j, dV_j.
      case KernelKind::fa2_bwd_main: steps.push_back(bhkv * 2 * s.t_c + bh * s.active); break;
      case KernelKind::fa2_bwd_preprocess:
      case KernelKind::fa2_bwd_convert_dq: steps.push_back(k.grid.count()); break;
      // Init; per key block with an active tile, K_j, V_j and a step per active tile.
      case KernelKind::fa1_fwd: steps.push_back(bh * (1 + s.key_blocks_with_active + s.active)); break;
      // Per query block: Q_i, O_i; a step per active tile; O_i, l_i, m_i written.
      case KernelKind::fa1_swapped_fwd: steps.push_back(bh * (2 * s.t_r + s.active)); break;
      // Init dK, dV; init each head's dQaccum; per active key block: K_j, V_j, a
      // step per (head, active tile), dK_j, dV_j; convert each head's dQ.
      case KernelKind::fa1_bwd:
        steps.push_back(bhkv * (1 + 2 * group + 2 * s.key_blocks_with_active) + bh * s.active);
        break;
      case KernelKind::gemm:
      case KernelKind::gemm_wgmma: {  // per output tile (tiles_per_cta per CTA): a step per chunk, then its C
        const auto& g = k.as<schedule::GemmPlan>().s;
        steps.push_back(g.output_tiles() * (g.steps_per_tile() + 1));
        break;
      }
      case KernelKind::softmax_fwd:
      case KernelKind::softmax_bwd:
        steps.push_back(k.grid.count() * (k.as<schedule::SoftmaxPlan>().s.row_fits_on_chip() ? 1 : 2));
        break;
      case KernelKind::elementwise: steps.push_back(k.grid.count()); break;  // one step per CTA
      // A step per active key block (each in one split), and one per CTA for its partials.
      case KernelKind::splitkv_fwd: steps.push_back(bh * (s.active + s.t_r * run.tiling.splits)); break;
      // A step per split, then O and L written.
      case KernelKind::splitkv_combine: steps.push_back(k.grid.count() * (run.tiling.splits + 1)); break;
    }
  }
  return steps;
}

}  // namespace iosim::count
