// Warp programs written from the kernels' code. Each builder below follows one
// kernel's source loop by loop (the file and function it mirrors is named
// above it); instruction classes follow what the compiler emits for them on
// sm_90 (checked in the SASS: experiments/results/2026-11-25-*-sass-*):
//   mma.sync m16n8k16 -> HMMA.16816 (tensor); ldmatrix.x4 -> LDSM (512 B);
//   fmaf/+/* on floats -> FFMA/FADD/FMUL (fma); fmaxf -> FMNMX (alu);
//   ex2.approx -> MUFU.EX2; expf (no fast math) -> 7 fma/alu + MUFU.EX2;
//   float -> fp16/bf16 packing -> F2FP (alu); register moves of accumulators
//   and P fragments -> IMAD.MOV (fma); comparisons, selects, address
//   arithmetic -> ISETP/FSEL/LOP3/IADD3/LEA (alu); cp.async -> LDGSTS.
// Loads of the next k-slice are hoisted ahead of the current slice's products
// (software pipelining, as the compiler does for unrolled loops); loops the
// source marks `#pragma unroll 1` are not. FA1's programs are counted off its
// executed SASS paths instead (the FA1 section): there Nsight Compute's fma
// pipe counter also takes F2FP and HADD2, and its xu pipe FCHK.
#include "sim/schedule/warp_programs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/common/error.h"
#include "sim/schedule/gemm_slices.h"
#include "sim/schedule/score_layout.h"
#include "sim/schedule/softmax_path.h"
#include "sim/schedule/warp_split.h"

namespace iosim::schedule {
namespace {

using V = ProgramBuilder::Value;
constexpr V kNone = ProgramBuilder::kNone;

// Fragment counts come in 16-wide units: a tiling no kernel has (the paper's
// block rule can give 64 x 163) is timed as the kernel of the next 16-multiple.
int round16(i64 v) { return static_cast<int>(ceil_div(std::max<i64>(v, 1), 16) * 16); }
// A warp split's count along M, at least 1 (a split that is not 16-aligned
// has no kernel; it is timed as the nearest that is).
int warps_m_or_1(int wm) { return wm > 0 ? wm : 1; }

// expf without fast math: range reduction (FFMA.SAT, FFMA.RM, FADD, FFMA,
// FFMA), the exponent shift (SHF), MUFU.EX2 and the final FMUL.
V emit_expf(ProgramBuilder& b, V x) {
  V r = b.fma(x);
  r = b.fma(r);
  const V f = b.fma(r);
  V t = b.fma(x, f);
  t = b.fma(t);
  const V sh = b.alu(r);
  const V e = b.mufu(t);
  return b.fma(e, sh);
}

// x / y in full precision: MUFU.RCP and its Newton refinement (4 FFMA), the
// range check (FSETP and a rarely taken branch).
V emit_fdiv(ProgramBuilder& b, V x, V y) {
  const V r = b.mufu(y);
  V q = b.fma(r, y);
  q = b.fma(q, r);
  q = b.fma(x, q);
  q = b.fma(q, y);
  b.alu(q);
  return q;
}

// A warp's accumulator tile: the last product into each m16n8 fragment (a
// chain of dependent HMMAs per fragment; kNone: starts from zero).
struct Fragments {
  std::vector<V> last;
  Fragments(int m_frags, int n_tiles) : last(static_cast<size_t>(m_frags * n_tiles), kNone) {}
  V& at(int mf, int nt, int n_tiles) { return last[static_cast<size_t>(mf * n_tiles + nt)]; }
};

// Shared-memory operands by ldmatrix (kernels/common/device_primitives.cuh
// warp_gemm, kernels/fa2/fa2_forward.cuh gemm_qk/gemm_pv): per 16-deep k slice,
// an LDSM per 16-row A fragment (unless A is in registers) and per 16-column B
// pair, each with one address operation (none where the addresses are a lane
// address plus immediates: address_ops false), then 2 x MF HMMAs per B pair.
void emit_ldsm_gemm(ProgramBuilder& b, Fragments& acc, int m_frags, int n_tiles, int k, bool a_in_smem,
                    const std::vector<V>& a_regs = {}, bool address_ops = true) {
  const int slices = k / 16, pairs = n_tiles / 2;
  auto load_slice = [&](std::vector<V>& a, std::vector<V>& bb) {
    a.assign(static_cast<size_t>(m_frags), kNone);
    bb.assign(static_cast<size_t>(pairs), kNone);
    if (a_in_smem)
      for (int mf = 0; mf < m_frags; ++mf) a[static_cast<size_t>(mf)] = b.ldsm(address_ops ? b.alu() : kNone);
    for (int np = 0; np < pairs; ++np) bb[static_cast<size_t>(np)] = b.ldsm(address_ops ? b.alu() : kNone);
  };
  std::vector<V> a_cur, b_cur, a_next, b_next;
  load_slice(a_cur, b_cur);
  for (int kk = 0; kk < slices; ++kk) {
    if (kk + 1 < slices) load_slice(a_next, b_next);
    for (int np = 0; np < pairs; ++np)
      for (int mf = 0; mf < m_frags; ++mf) {
        const V a = a_in_smem ? a_cur[static_cast<size_t>(mf)]
                              : (a_regs.empty() ? kNone : a_regs[static_cast<size_t>((kk * m_frags + mf) % a_regs.size())]);
        for (int h = 0; h < 2; ++h) {
          V& last = acc.at(mf, 2 * np + h, n_tiles);
          last = b.mma(last, a, b_cur[static_cast<size_t>(np)]);
        }
      }
    a_cur.swap(a_next);
    b_cur.swap(b_next);
  }
}

// A tile copy of rows x cols elements of `elem` bytes by `threads` threads in
// 16-byte chunks: LDGSTS (cp.async, asynchronous) with its address operations.
void emit_cp_async_tile(ProgramBuilder& b, i64 rows, i64 cols, i64 elem, i64 threads, int address_ops) {
  const i64 per_thread = ceil_div(rows * cols * elem / 16, threads);
  for (i64 k = 0; k < per_thread; ++k) b.cp_async(address_ops > 0 ? b.alu() : kNone);
  for (int k = 1; k < address_ops; ++k) b.repeat(Pipe::alu, per_thread);
  b.alu();  // commit group (LDGDEPBAR)
}

// Row reduction over the 4 lanes of a quad (dev::quad_max / quad_sum): two
// shuffles, each followed by the combining operation.
V emit_quad_reduce(ProgramBuilder& b, V v, Pipe op) {
  for (int s = 0; s < 2; ++s) v = b.emit(op, v, b.shfl(v));
  return v;
}

// ---------------------------------------------------------------------------
// FlashAttention-2 forward (kernels/fa2/fa2_forward.cuh, fa2_forward_kernel):
// one key block per step; kMFrags fragments of 16 query rows per warp.
// Counted off the executed path of one unmasked step in the sm_90 SASS
// (experiments/probes/fa2_fwd_walk.py; Nsight Compute's pipes: IMAD and F2FP
// on fma): the GEMMs' ldmatrix addresses are the lane's address plus
// immediates (no per-LDSM operation), the first HMMA of each accumulator
// starts from RZ and P's registers are the A operands as they are (no clearing
// or moves), and the rest of the loop is a per-step overhead that does not
// scale with B_c (below).

// What one step executes besides the GEMMs, the softmax and the copies'
// per-chunk addresses: the lane addresses and the K/V copies' base
// addresses recomputed each step (the 255-register kernel keeps no copy of
// them), keys.next(j) and its block-mask test, the loop's branches and the
// uniform-datapath constants. Read off the walk of the B_c = 16 kernel at
// d 64 (IMAD on fma, the rest on alu); the walks of the other tiles at d 64
// and 128 leave 14-19 fma and 62-71 alu besides their math and copies
// (experiments/results/2026-11-25-h100-sass-fa2-fwd-walk), except the
// kernels below (fa2_fwd_register_limit).
constexpr int kFa2StepOverheadFma = 17, kFa2StepOverheadAlu = 68;

// Kernels whose walk (the sm_90 full-menu build's SASS, every d 64 and d 128
// tile of the menu: experiments/results/2026-11-27-sass-fa2-fwd-walk-d128 and
// -d64) executes far more per step than the rest of the program (the other
// tiles: -4 to +29 per step at d 128, -5 to +21 at d 64): the walk's count
// minus the program's, per pipe (fma, alu; a negative pipe is 0), in the
// step (the masked step takes the same). Read off the walks, not
// modelled, not fitted to measured times. What they are: the K/V copies'
// per-chunk row guards and 64-bit addresses recomputed in the kernels with
// few warps or at the 255-register limit (about 9 instructions per 16-byte
// chunk; d 128: 16x16, 32x16, 64x16, 64x32; d 64: 16x16, 16x32, 32x16,
// 32x32, and at 64x128 about 3 IMAD per chunk with 12 moves), and, in d 128
// 16x32 to 16x128, 32x32 to 32x128 and 64x64 and d 64 16x64, 16x128, 32x64
// and 32x128, the copies through dev::load_tile_async's rolled loop (a
// 102-instruction body per 4 chunks at both d: about 21-22 per chunk, not
// only the register-limited kernels: d 128 16x32 has 128 registers, d 64
// 16x64 104); register moves around the spills (332 fma and 74 alu at d 64
// 256x256). The spills themselves (LDL/STL: 192 per step at d 128 256x128,
// 737 at d 64 256x256) are each region's own, in issue order, from
// fa2_local_memory.inc. The masked step's own unmodelled mask arithmetic
// (every tile) is left out. The lazy rescale block's spills (60 LDL/STL at
// d 128 256x128) are not counted (the rescale is not in the program).
struct Fa2FwdRegisterLimit {
  int step_fma, step_alu;
};
Fa2FwdRegisterLimit fa2_fwd_register_limit(int d, int bm, int bn) {
  if (d == 64) {
    if (bm == 16 && bn == 16) return {34, 27};
    if (bm == 16 && bn == 32) return {82, 58};
    if (bm == 16 && bn == 64) return {286, 390};
    if (bm == 16 && bn == 128) return {582, 791};
    if (bm == 32 && bn == 16) return {33, 29};
    if (bm == 32 && bn == 32) return {79, 61};
    if (bm == 32 && bn == 64) return {278, 398};
    if (bm == 32 && bn == 128) return {596, 791};
    if (bm == 64 && bn == 128) return {115, 0};
    if (bm == 256 && bn == 256) return {332, 74};
    return {0, 0};
  }
  if (d != 128) return {0, 0};
  if (bm == 16 && bn == 16) return {79, 64};
  if (bm == 16 && bn == 32) return {270, 406};
  if (bm == 16 && bn == 64) return {557, 815};
  if (bm == 16 && bn == 128) return {1174, 1590};
  if (bm == 32 && bn == 16) return {75, 65};
  if (bm == 32 && bn == 32) return {259, 415};
  if (bm == 32 && bn == 64) return {573, 882};
  if (bm == 32 && bn == 128) return {582, 790};
  if (bm == 64 && bn == 16) return {31, 29};
  if (bm == 64 && bn == 32) return {87, 65};
  if (bm == 64 && bn == 64) return {309, 442};
  if (bm == 128 && bn == 256) return {103, 0};
  if (bm == 256 && bn == 128) return {74, 10};
  return {0, 0};
}

// A K or V tile by cp.async (TileCopy::load): a thread's chunks are one
// 16-byte LDGSTS each, the global address of each after the first one a
// 64-bit add (IADD3, IADD3.X) to the previous; then the commit (LDGDEPBAR).
void emit_fa2_kv_copy(ProgramBuilder& b, int rows, int d, i64 elem, i64 threads) {
  const i64 chunks = ceil_div(i64{rows} * d * elem / 16, threads);
  V addr = kNone;
  for (i64 k = 0; k < chunks; ++k) {
    if (k > 0) addr = b.alu(b.alu(addr));
    b.cp_async(addr);
  }
  b.alu();
}

// The kernel's LDL/STL in the order its SASS issues them (fa2_local_memory.inc).
void emit_fa2_locals(ProgramBuilder& b, bool backward, int d, int bm, int bn, LocalRegion region) {
  // Every region but the repeating steps runs once per CTA (the first block's too).
  if (region != LocalRegion::step && region != LocalRegion::masked) b.runs_once();
  for (const LocalAccess& a : fa2_local_accesses(backward, d, bm, bn, region)) b.local_access(a);
}

// `first`: a CTA's first key block, where every row's maximum grows from
// -inf and the lazy rescale runs (kernels/fa2/fa2_forward.cuh); later blocks
// skip it (a row's maximum seldom grows by 2^8 once it has seen keys). Its
// block, per row: m scaled and the exponent (2 FFMA), the exp2 (MUFU), l's
// and O's D/4 FMULs and 2 register moves: D/2 + 10 FMA-pipe instructions and
// 2 MUFU per 16-row fragment, as the walk counts them (fa2_fwd_walk.py's
// `rescale +` lines; 144 at d 128 256 x 128, where this gives 148); and, at
// the tiles that spill there, its LDL/STL (the `first` rows of
// fa2_local_memory.inc, in place of the step's).
WarpProgram fa2_forward_step(int d, int bm, int bn, i64 elem, bool masked, bool first) {
  const int mfr = static_cast<int>(Fa2ForwardSchedule::rows_per_warp(d, bm, bn) / 16);
  const int st = bn / 8, ot = d / 8;
  const i64 threads = 32 * Fa2ForwardSchedule::warps_for(d, bm, bn);
  ProgramBuilder b("fa2_fwd d" + std::to_string(d) + " " + std::to_string(bm) + "x" + std::to_string(bn) +
                   (masked ? " masked" : "") + (first ? " first" : ""));
  const Fa2FwdRegisterLimit limit = fa2_fwd_register_limit(d, bm, bn);
  b.region("step overhead, K_j wait");
  b.repeat(Pipe::fma, kFa2StepOverheadFma + limit.step_fma);
  b.repeat(Pipe::alu, kFa2StepOverheadAlu + limit.step_alu);
  const LocalRegion locals = first ? (masked ? LocalRegion::masked_first : LocalRegion::first)
                                   : (masked ? LocalRegion::masked : LocalRegion::step);
  emit_fa2_locals(b, false, d, bm, bn, locals);
  b.alu();  // cp.async.wait (DEPBAR): K_j landed
  b.barrier();
  b.region("V_j copy issue");
  emit_fa2_kv_copy(b, bn, d, elem, threads);  // issue V_j
  if (masked) {
    b.repeat(Pipe::alu, 4);                   // the idle-warp test
    b.repeat(Pipe::fma, i64{mfr} * st * 2);  // S cleared: an idle warp skips the GEMM that would start from RZ
  }
  // S = Q K_j^T (gemm_qk): A and B by ldmatrix.
  b.region("S = Q K^T");
  Fragments s(mfr, st);
  emit_ldsm_gemm(b, s, mfr, st, d, true, {}, false);
  if (masked) {  // mask_scores: the row's key end, then a compare (ISETP) and select (FSEL) per score
    for (int r = 0; r < mfr * 2; ++r) b.repeat(Pipe::alu, 4);
    for (auto& f : s.last)
      for (int e = 0; e < 4; ++e) f = b.alu(b.alu(f), f);
  }
  b.region("V_j wait, K_next copy issue");
  b.alu();  // cp.async.wait: V_j landed
  b.barrier();
  emit_fa2_kv_copy(b, bn, d, elem, threads);  // issue K_next
  // online_softmax: row maxima (two FMNMX per n8 tile), quad shuffles, the
  // lazy-rescale test (FADD, FMUL, FSETP per row) and vote (VOTE, alu); the
  // rescale itself is skipped after the first block (a rare branch). Then
  // P = exp2(scale S - scale m) packed to the data type (F2FP, fma) and the
  // row sums.
  b.region("softmax");
  std::vector<V> row_max(static_cast<size_t>(mfr * 2));
  for (int r = 0; r < mfr * 2; ++r) {
    V m = kNone;
    for (int nt = 0; nt < st; ++nt) {
      const V pair = b.alu(s.at(r / 2, nt, st));
      m = b.alu(m, pair);
    }
    m = emit_quad_reduce(b, m, Pipe::alu);
    const V grow = b.fma(b.fma(m));  // (m_new - m) * scale_log2
    row_max[static_cast<size_t>(r)] = b.alu(grow);
  }
  b.alu(row_max.back());  // __any_sync (VOTE.ANY)
  if (first) {
    b.region("lazy rescale");
    for (int r = 0; r < mfr * 2; ++r) {
      const V alpha = b.mufu(b.fma(b.fma(row_max[static_cast<size_t>(r)])));
      b.fma(alpha);                       // l *= alpha
      b.repeat(Pipe::fma, d / 4 + 2);     // O's row (D/4 FMULs) and the moves
    }
  }
  std::vector<V> p_regs;
  for (int r = 0; r < mfr * 2; ++r) {
    V ms = b.fma(row_max[static_cast<size_t>(r)]);
    if (masked) ms = b.alu(b.alu(ms));  // a row that still sees nothing: offset 0
    V sum = kNone;
    for (int nt = 0; nt < st; ++nt) {
      const V src = s.at(r / 2, nt, st);
      const V p0 = b.mufu(b.fma(src, ms)), p1 = b.mufu(b.fma(src, ms));
      p_regs.push_back(b.fma(p0, p1));  // pack2 (F2FP)
      sum = b.fma(sum, b.fma(p0, p1));
    }
    b.fma(sum);  // row_sum += sum
  }
  // O += P V_j (gemm_pv): A = P from registers, B = V_j by ldmatrix.trans.
  b.region("O += P V");
  Fragments o(mfr, ot);
  emit_ldsm_gemm(b, o, mfr, ot, bn, false, p_regs, false);
  return b.take();
}

// The forward's epilogue: O / l through shared memory, L = m scale + log l;
// then the tile store. Counted off the walk of the epilogue in the sm_90 SASS
// (experiments/probes/fa2_fwd_walk.py, the row part split from the store at
// the barrier): per row and thread the quad sum (2 SHFL, 2 FADD), 1 / l's
// fast path (MUFU.RCP, 2 FFMA, 1 FADD and the range test), O's 2 D/8 FMULs,
// D/8 F2FP and STS (each with its swizzle XOR and an IMAD), and L: logf's
// polynomial (13 FFMA, 2 FMUL, 1 FADD, I2FP), the l > 0 and lane tests
// (3 FSETP, 2 FSEL) and one STG; the guards' branches and convergence
// barriers (BSSY/BSYNC) and the row's addresses come to 34 alu (the range
// test and the STG's address among them) and 5-12 IMAD (7 at d 64) per row. The store (dev::store_tile, a row guard per
// chunk) costs per 16-byte chunk an LDS, an STG, 9 IMAD and 17 alu.
WarpProgram fa2_forward_epilogue(int d, int bm, int bn, i64 elem, bool causal, bool masked_run) {
  const int mfr = static_cast<int>(Fa2ForwardSchedule::rows_per_warp(d, bm, bn) / 16);
  const int ot = d / 8;
  const i64 threads = 32 * Fa2ForwardSchedule::warps_for(d, bm, bn);
  ProgramBuilder b(masked_run ? "fa2_fwd epilogue (after a masked run)" : "fa2_fwd epilogue");
  // The set-up's spills (the STLs before the main loop, once per CTA; those of
  // the block it runs in a causal kernel, behind the test of the causal flag;
  // those before the masked loop in a CTA with a masked run) ride with the
  // epilogue, the forward's one program that runs once: its trace has no
  // prologue step. Their bytes reach the L2 all the same.
  emit_fa2_locals(b, false, d, bm, bn, LocalRegion::prologue);
  if (causal) emit_fa2_locals(b, false, d, bm, bn, LocalRegion::masked_prologue);
  if (masked_run) emit_fa2_locals(b, false, d, bm, bn, LocalRegion::masked_entry);
  emit_fa2_locals(b, false, d, bm, bn, LocalRegion::epilogue);
  b.alu();  // cp.async.wait_group 0
  for (int r = 0; r < mfr * 2; ++r) {
    const V l = emit_quad_reduce(b, b.fma(), Pipe::fma);  // quad sum
    b.repeat(Pipe::alu, 32);                              // guards, branches, the row's addresses
    b.repeat(Pipe::fma, 7);
    V inv = b.mufu(b.alu(l));  // range test, MUFU.RCP
    inv = b.fma(b.fma(b.fma(inv, l)));
    for (int nd = 0; nd < ot; ++nd) {
      const V packed = b.fma(b.fma(inv), b.fma(inv));  // O * inv_l, F2FP
      b.sts(128, packed, b.fma(b.alu()));
    }
    // L = m * scale + logf(l) for the row's first lane.
    V lg = b.alu(b.alu(l));  // I2FP of the exponent, the l > 0 test
    for (int k = 0; k < 13; ++k) lg = b.fma(lg);
    lg = b.fma(b.fma(b.fma(lg)));
    b.repeat(Pipe::alu, 4);  // FSETP, FSEL
    b.stg_fragment(lg, b.alu());  // the row's first lane: 8 rows of 4 bytes
  }
  b.barrier();
  const i64 chunks = ceil_div(i64{bm} * d * elem / 16, threads);
  for (i64 k = 0; k < chunks; ++k) {
    b.repeat(Pipe::fma, 9);
    b.repeat(Pipe::alu, 16);
    b.stg(b.lds(512, b.alu()));
  }
  return b.take();
}

// FlashAttention-3 forward (kernels/fa3/fa3_forward.cuh, fa3_forward_kernel):
// the programs are a consumer warp's (8 of the CTA's 12 warps; the producer
// warpgroup's one thread issues the TMA loads, about 79 instructions per key
// block at d 128 and 54 at d 64, 1.7% of the kernel's: left out). Per key
// block n, as fwd_detail::consumer: wait K_n; issue S_n = Q K_n^T (issue_qk:
// d/16 wgmma m64n128k16, A and B from shared memory) and O += P_{n-1} V_{n-1}
// (issue_pv: B_c/16 wgmma m64n{d}k16, A = P from registers); wgmma.wait_group
// 1 (S_n done), release K_n; then, as the SASS has it, wgmma.wait_group 0
// (P V done) and V_{n-1} released BEFORE the softmax: nvcc hoists the second
// WARPGROUP.DEPBAR above the softmax's arithmetic, so a warpgroup's softmax
// does not overlap its own P V (only the other warpgroup's GEMMs, by the
// ping-pong); mask, online softmax of S_n, rescale O, P_n packed.
// Each wgmma is one asynchronous instruction per warp of the warpgroup (its
// 16 rows, schedule::Op::wgmma): it queues in its sub-partition's tensor pipe
// for its FLOP at the measured wgmma rate (sm_pipes.wgmma_f16) and the warp
// goes on issuing until the wait_group that consumes it.
// Instruction counts: every region of the step is filled to what the kernel
// executes there (fa3_step_sass), so that the program issues what the kernel
// issues; the dataflow the program states is the softmax's and the waits'.
// Approximations: the RS form of P V is timed at the SS rate of the key (the
// calibrate log has both; no separate key); the wgmma's operands are read from
// shared memory inside the tensor core and charged nothing on the SM's
// shared-memory port (the throughput benchmark reads them the same way, so
// its rate includes them; the consumers issue no other shared-memory
// instruction that they could delay); the mbarrier waits are single ALU
// instructions (the K/V stage ring is the engine's pipeline depth,
// pipeline_stages = the schedule's stages). The ping-pong is modelled:
// my_turn / hand_over (named bar.sync / bar.arrive) are Op::turn_wait /
// Op::turn_pass, so a warpgroup issues its GEMMs only after the other has
// issued its own, and one's softmax runs beside the other's GEMMs (warpgroup
// 0 first, as consumer 1's initial bar.arrive lets it). The SM model issues
// these programs in the written order (the turn taking stands in for the
// compiler's order).

// What the kernel executes in one region of a consumer warp's step: its
// fma-pipe instructions (FFMA, FADD, FMUL, IMAD, F2FP), MUFU, and all.
struct SassRegion {
  int fma = 0, mufu = 0, total = 0;
  int uniform = 0;  // of total: uniform-datapath, branch and control instructions (Pipe::uniform)
};

// Per consumer warp and key block, by region, from Nsight Compute's
// per-instruction executed counts (SourceCounters) of the sm_90a kernels on
// the H200 (experiments/results/2026-11-27-h200-source-counters, printed by
// experiments/probes/source_table.py): the loop body's regions at d 128
// (non-causal N 4096) and d 64 (causal N 4096); the mask's code, executed in
// the masked step only, from d 64 (it handles the 128 x 128 score tile: the
// same code at d 128); `once` = the instructions each consumer warp executes
// once per CTA (setup, first block, last P V, epilogue: the group executed
// 8 times per CTA) minus one loop step, since the trace gives a CTA one step
// per key block; counted again for the epilogue that stages O in shared
// memory (experiments/results/2026-12-02-h200-staged-stores: at d 128 its row
// stores are a loop of two trips, the group executed 16 times per CTA).
// Uniform-datapath instructions (the wgmma descriptors: about 7 per wgmma)
// count as alu, as in the FA2 walks.
struct Fa3StepSass {
  SassRegion head, qk, pv, hand_over, wait_s, softmax, mask, once;
};
Fa3StepSass fa3_step_sass(int d) {
  if (d == 64) return {{3, 0, 35}, {2, 0, 30}, {0, 0, 66}, {0, 0, 3}, {0, 0, 7}, {208, 66, 365}, {8, 0, 202}, {290, 23, 803}};
  if (d == 128) return {{3, 0, 37}, {6, 0, 70}, {0, 0, 59}, {0, 0, 3}, {0, 0, 8}, {239, 66, 398}, {8, 0, 202}, {291, 14, 939}};
  throw std::logic_error("fa3 forward: no SASS counts for head dim " + std::to_string(d));
}

// Independent instructions that bring the region begun at `from` up to r:
// fma and MUFU to r's counts, alu to its total. A program that already has
// more than the kernel executes there is a bug.
void fill_region(ProgramBuilder& b, i64 from, const SassRegion& r, const std::string& what) {
  const i64 fma = r.fma - b.count_since(Pipe::fma, from), mufu = r.mufu - b.count_since(Pipe::mufu, from);
  const i64 uniform = r.uniform - b.count_since(Pipe::uniform, from);
  const i64 alu = r.total - (b.size() - from) - std::max<i64>(fma, 0) - std::max<i64>(mufu, 0) -
                  std::max<i64>(uniform, 0);
  if (fma < 0 || mufu < 0 || uniform < 0 || alu < 0)
    throw std::logic_error("warp program: region " + what + " states more instructions than the kernel executes");
  b.repeat(Pipe::fma, fma);
  b.repeat(Pipe::mufu, mufu);
  b.repeat(Pipe::uniform, uniform);
  b.repeat(Pipe::alu, alu);
}

// The first k of n parts of a region (the wgmma loops fill after each wgmma).
SassRegion part_of(const SassRegion& r, int k, int n) {
  return {r.fma * k / n, r.mufu * k / n, r.total * k / n, r.uniform * k / n};
}

WarpProgram fa3_forward_step(int d, i64 elem, bool masked) {
  using S = Fa3ForwardSchedule;
  const Fa3StepSass sass = fa3_step_sass(d);
  const int bn = static_cast<int>(S::kBlockN), st = bn / 8, ot = d / 8;  // n8 chunks of S and O per warp
  ProgramBuilder b("fa3_fwd d" + std::to_string(d) + " e" + std::to_string(elem) + (masked ? " masked" : ""));
  // The loop's test and ring position, mbar_wait (K_n landed: TRYWAIT, its
  // retry branch falling through), the turn (named_bar_sync).
  i64 at = b.size();
  b.branch(true);
  b.alu();
  b.branch(false);
  b.turn_wait();
  fill_region(b, at, sass.head, "head");
  // issue_qk: per k16 step the descriptors of Q and K, one wgmma m64n128k16 (SS).
  at = b.size();
  const int qk = d / 16;
  V s_last = kNone;
  for (int kk = 0; kk < qk; ++kk) {
    s_last = b.wgmma(bn, kNone, b.alu());
    fill_region(b, at, part_of(sass.qk, kk + 1, qk), "issue_qk");
  }
  // mbar_wait (V_{n-1} landed), issue_pv: O += P_{n-1} V_{n-1}, per k16 step
  // V's descriptor and one wgmma m64n{d}k16 with A = P (registers, the
  // previous step's: ready). The first block has none and the epilogue the
  // last: as many P V products as steps.
  at = b.size();
  b.alu();
  b.branch(false);
  const int pv = bn / 16;
  V o_last = kNone;
  for (int kk = 0; kk < pv; ++kk) {
    o_last = b.wgmma(d, kNone, b.alu());
    fill_region(b, at, part_of(sass.pv, kk + 1, pv), "issue_pv");
  }
  at = b.size();
  b.turn_pass();  // named_bar_arrive: the other warpgroup's turn
  fill_region(b, at, sass.hand_over, "hand_over");
  at = b.size();
  const V s_done = b.wgmma_wait(s_last);  // wgmma.wait_group 1: S_n done
  b.alu(s_done);                          // mbar_arrive: K_n released
  b.branch(!masked);                      // keys.masked(j)
  fill_region(b, at, sass.wait_s, "wait_s");
  std::vector<V> sv(static_cast<size_t>(st), s_done);  // S_n by n8 chunk
  if (masked) {  // mask_scores: the row's key end, then a compare and select per score
    at = b.size();
    for (auto& f : sv) f = b.alu(b.alu(f), f);
    fill_region(b, at, sass.mask, "mask");
  }
  at = b.size();
  const V o_done = b.wgmma_wait(o_last);  // wgmma.wait_group 0, hoisted by the compiler
  b.alu(o_done);                          // mbar_arrive: V_{n-1} released
  // online_softmax: per thread 2 rows, their maxima (an FMNMX per pair of
  // scores, 4 partial chains), the quad reduction, corr = exp2(m_old - m_new),
  // p = exp2(s scale - m) and the row sum (FADD).
  std::vector<V> corr(2);
  for (int hh = 0; hh < 2; ++hh) {
    V m = kNone;
    for (int nt = 0; nt < st; ++nt) m = b.alu(m, b.alu(sv[static_cast<size_t>(nt)]));
    m = emit_quad_reduce(b, m, Pipe::alu);
    const V ms = b.fma(b.alu(m));  // m * scale_log2, -inf guarded
    corr[static_cast<size_t>(hh)] = b.mufu(b.fma(ms));
    V sum = kNone;
    for (int nt = 0; nt < st; ++nt) {
      const V src = sv[static_cast<size_t>(nt)];
      for (int e = 0; e < 2; ++e) sum = b.fma(sum, b.mufu(b.fma(src, ms)));
    }
    b.fma(sum, corr[static_cast<size_t>(hh)]);  // row_sum = row_sum corr + sum
  }
  // Rescale O (an FMUL per accumulator register); P_n = S_n packed (an F2FP
  // per pair of scores); the loop's back edge.
  for (int nt = 0; nt < ot; ++nt)
    for (int e = 0; e < 4; ++e) b.fma(o_done, corr[static_cast<size_t>(e / 2)]);
  b.repeat(Pipe::fma, i64{st} * 2);
  fill_region(b, at, {sass.softmax.fma, sass.softmax.mufu, sass.softmax.total - 1}, "softmax");
  b.branch(true);
  return b.take();
}

// The consumer's epilogue: l by a quad sum, 1 / l, O / l packed into the
// consumer's rows of the Q tile (4 bytes per lane and pair of columns, an
// STS per n8 chunk), L = m scale + log l by the row's first lane; then, after
// the warpgroup's named barrier, 16-byte chunks of whole rows: an LDS.128 and
// an STG.128 per 128 threads x 16 bytes. The named barrier joins the
// warpgroup's 4 warps only (the engine's barrier would join the CTA's 8
// consumer warps, which the ping-pong keeps apart): the 4 warps leave the
// same wgmma wait together, so the program counts it as one instruction that
// waits for nothing. Filled to the instructions a consumer warp executes
// once per CTA beyond its key blocks' steps (fa3_step_sass: the kernel's
// setup is in it too).
WarpProgram fa3_forward_epilogue(int d) {
  using S = Fa3ForwardSchedule;
  const int ot = d / 8;
  ProgramBuilder b("fa3_fwd epilogue");
  V staged = kNone;
  for (int hh = 0; hh < 2; ++hh) {
    const V l = emit_quad_reduce(b, b.fma(), Pipe::fma);
    const V inv = emit_fdiv(b, b.fma(), l);
    for (int t = 0; t < ot; ++t) staged = b.sts(128, b.alu(b.fma(inv), b.fma(inv)), b.alu());
    const V lg = b.mufu(l);
    b.stg_fragment(b.fma(lg), b.alu());  // the row's first lane: 8 rows of 4 bytes
  }
  const V joined = b.alu(staged);  // bar.sync of the warpgroup
  const i64 chunks = S::kRowsPerConsumer * d / 8 / 128;  // 16-byte chunks per thread
  for (i64 k = 0; k < chunks; ++k) b.stg(b.lds(512, b.alu(joined)), b.alu());
  fill_region(b, 0, fa3_step_sass(d).once, "once per CTA");
  return b.take();
}

// Split-KV forward (kernels/splitkv/splitkv_forward.cuh, splitkv_forward_kernel):
// 4 warps, each on all B_r rows and a quarter of the key block's columns,
// K/V double-buffered: issue the next block's K and V, wait for this one,
// S = Q K^T, (mask), online softmax, O += P V, barrier.
WarpProgram splitkv_forward_step(int d, int bm, int bn, i64 elem, bool masked) {
  const int mfr = std::max(1, bm / 16);
  const int cols = std::max(16, bn / static_cast<int>(SplitKvSchedule::kWarps));  // the warp's key columns
  const int st = cols / 8, ot = d / 8;
  const i64 threads = 32 * SplitKvSchedule::kWarps;
  ProgramBuilder b("splitkv_fwd d" + std::to_string(d) + " " + std::to_string(bm) + "x" + std::to_string(bn) +
                   (masked ? " masked" : ""));
  b.repeat(Pipe::alu, 6);                          // keys.next(j), stage addresses
  emit_cp_async_tile(b, bn, d, elem, threads, 2);  // K_next (row guard)
  emit_cp_async_tile(b, bn, d, elem, threads, 2);  // V_next
  b.alu();                                         // cp.async.wait_group 1: K_j, V_j landed
  b.barrier();
  Fragments sacc(mfr, st);
  emit_ldsm_gemm(b, sacc, mfr, st, d, true);  // S = Q K_j^T, the warp's columns
  if (masked) {
    for (int r = 0; r < mfr * 2; ++r) b.repeat(Pipe::alu, 4);
    for (auto& f : sacc.last) f = b.alu(b.alu(f), f);
  }
  // online_softmax (kernels/fa2/fa2_forward.cuh, shared): row maxima, the
  // lazy-rescale vote, P = exp2 packed, row sums.
  std::vector<V> row_max(static_cast<size_t>(mfr * 2));
  for (int r = 0; r < mfr * 2; ++r) {
    V m = kNone;
    for (int nt = 0; nt < st; ++nt) m = b.alu(m, b.alu(sacc.at(r / 2, nt, st)));
    m = emit_quad_reduce(b, m, Pipe::alu);
    row_max[static_cast<size_t>(r)] = b.alu(b.fma(b.fma(m)));
  }
  b.shfl(row_max.back());  // __any_sync
  b.alu();
  std::vector<V> p_regs;
  for (int r = 0; r < mfr * 2; ++r) {
    V ms = b.fma(row_max[static_cast<size_t>(r)]);
    if (masked) ms = b.alu(b.alu(ms));
    V sum = kNone;
    for (int nt = 0; nt < st; ++nt) {
      const V src = sacc.at(r / 2, nt, st);
      const V p0 = b.mufu(b.fma(src, ms)), p1 = b.mufu(b.fma(src, ms));
      p_regs.push_back(b.alu(p0, p1));
      sum = b.fma(sum, b.fma(p0, p1));
    }
    b.fma(sum);
  }
  b.repeat(Pipe::fma, i64{mfr} * st * 2 + i64{mfr} * (cols / 16) * 4);  // clear S; P into A fragments
  Fragments o(mfr, ot);
  emit_ldsm_gemm(b, o, mfr, ot, cols, false, p_regs);  // O += P V_j, the warp's rows of V_j
  b.barrier();                                        // the stage is free for the block after next
  b.repeat(Pipe::alu, 4);
  return b.take();
}

// The split's epilogue: each warp's O accumulator, row maxima and sums to
// shared memory; then a thread per 4 columns of a row merges the 4 warps
// (weights exp2 of the maxima's differences), divides by l and stores 16
// bytes of Oaccum; a thread per row writes LSE.
WarpProgram splitkv_forward_epilogue(int d, int bm) {
  const int mfr = std::max(1, bm / 16), ot = d / 8;
  const i64 threads = 32 * SplitKvSchedule::kWarps, warps = SplitKvSchedule::kWarps;
  ProgramBuilder b("splitkv_fwd epilogue");
  b.alu();  // cp.async.wait_group 0
  b.barrier();
  for (int r = 0; r < mfr * 2; ++r) {
    const V l = emit_quad_reduce(b, b.fma(), Pipe::fma);
    b.sts(128, l, b.alu());
    b.sts(128, b.fma(), b.alu());
    for (int nd = 0; nd < ot; ++nd) b.sts(256, b.fma(), b.alu());  // a float2 per n8 tile and row half
  }
  b.barrier();
  const i64 chunks = ceil_div(i64{bm} * d / 4, threads);
  for (i64 k = 0; k < chunks; ++k) {
    b.repeat(Pipe::alu, 4);  // row, column, addresses
    V m = kNone, lsum = kNone, acc = kNone;
    std::vector<V> ms;
    for (i64 w = 0; w < warps; ++w) {
      ms.push_back(b.lds(128, b.alu()));
      m = b.alu(m, ms.back());
    }
    for (i64 w = 0; w < warps; ++w) {
      const V wt = b.mufu(b.fma(ms[static_cast<size_t>(w)], m));
      lsum = b.fma(wt, b.lds(128, b.alu()), lsum);
      const V part = b.lds(512, b.alu());
      for (int e = 0; e < 4; ++e) acc = b.fma(wt, part, acc);
    }
    const V inv = emit_fdiv(b, b.fma(), lsum);
    for (int e = 0; e < 4; ++e) acc = b.fma(acc, inv);
    b.stg(acc, b.alu(b.alu()));  // 16 bytes of Oaccum
  }
  const V lg = b.mufu(b.fma());  // LSE = m scale + log l (threads < B_r)
  b.stg(b.fma(lg), b.alu());
  return b.take();
}

// Split-KV combine (kernels/splitkv/splitkv_combine.cu, splitkv_combine_kernel):
// a thread per 4 columns of a row; per split a 4-byte LSE and a 16-byte O
// load, the running maximum, two exponentials, 4 rescaled accumulations.
WarpProgram splitkv_combine_step() {
  ProgramBuilder b("splitkv_combine split");
  b.repeat(Pipe::alu, 4);  // the split's row offset, loop control
  const V lse = b.ldg(128, b.alu());
  const V o = b.ldg(512, b.alu());
  const V m = b.alu(lse, b.alu());
  const V alpha = b.mufu(b.fma(m)), w = b.mufu(b.fma(lse, m));
  b.fma(w, b.fma(alpha));  // sum = sum alpha + w
  for (int e = 0; e < 4; ++e) b.fma(w, o, b.fma(alpha));
  return b.take();
}

WarpProgram splitkv_combine_epilogue() {
  ProgramBuilder b("splitkv_combine epilogue");
  const V inv = emit_fdiv(b, b.fma(), b.fma());
  V last = kNone;
  for (int e = 0; e < 2; ++e) last = b.alu(b.fma(inv), b.fma(inv));  // O / sum, packed to the data type
  b.stg(last, b.alu(b.alu()));
  const V lg = b.mufu(b.fma());  // L = m + log(sum): the row's first thread
  b.stg(b.fma(lg), b.alu());
  return b.take();
}

// FlashAttention-2 backward main kernel (kernels/fa2/fa2_backward.cuh,
// fa2_backward_kernel): one (head of the group, query block) per step.
// Counted off the executed path of one step in the sm_90 SASS
// (experiments/probes/fa2_bwd_walk.py, experiments/results/2026-11-27-sass-fa2-bwd-walk;
// Nsight Compute's pipes: IMAD and F2FP on fma): the ldmatrix addresses are
// per-step bases plus immediates (no per-LDSM operation), every accumulator
// (S, dP, dQ) starts from RZ (no clearing), and the step's integer work is
// a fixed part (below) plus the copies' and the dQ reduction's per-chunk and
// per-row address arithmetic.

// What one step executes besides the GEMMs, softmax_grad, store_acc, the
// copy and the dQ reduction: work.next(), the step-log and mask tests, the
// stage's shared addresses and the ldmatrix bases (LEA/IADD3/LOP3, IMAD.IADD),
// the row statistics' addresses, the branches and uniform constants (the LDL
// of the FragOffsets tables, indexed by the warp's column and so in local
// memory, are the step's local accesses: fa2_local_memory.inc). The walks of
// the kernels below the register limit leave 54-75 alu
// and 23-29 fma (d 64: 64x64, 64x128, 128x64; d 128: 64x64, 128x64).
constexpr int kFa2BwdStepOverheadAlu = 62, kFa2BwdStepOverheadFma = 25;

// Kernels at the 255-register limit (d 64 128x128 and 64x256, d 128 64x128
// and 128x128): the walk's count minus the rest of the program, per pipe
// (fma, alu) in the step and the epilogue. Read off the walks, not modelled:
// register moves (IMAD.MOV: 49 in d 64 64x256's step) and recomputed
// addresses. Their LDL/STL (the FragOffsets tables reloaded, 19-31 per step at
// d 64 128x128 and d 128 64x128; spills of accumulators and addresses, 105 per
// step at d 64 64x256, 154 at d 128 128x128) are fa2_local_memory.inc's, in
// issue order. The d 64 limit kernels' epilogues execute 44-47 fewer integer
// instructions than the program (left as they are: once per CTA).
struct Fa2BwdRegisterLimit {
  int step_fma, step_alu, epi_fma, epi_alu;
};
Fa2BwdRegisterLimit fa2_bwd_register_limit(int d, int bm, int bn) {
  if (d == 64 && bm == 128 && bn == 128) return {25, 46, 0, 0};
  if (d == 64 && bm == 64 && bn == 256) return {48, 38, 0, 0};
  if (d == 128 && bm == 64 && bn == 128) return {8, 68, 2, 23};
  if (d == 128 && bm == 128 && bn == 128) return {7, 167, 0, 18};
  return {0, 0, 0, 0};
}

// n independent instructions on one pipe; the last one's value (an address
// that the next instruction waits for).
V repeat_last(ProgramBuilder& b, Pipe p, int n) {
  b.repeat(p, n - 1);
  return b.emit(p);
}

// dev::load_tile_async of one tile: per 16-byte chunk the row's valid test,
// its 64-bit global address (IMAD.WIDE.U32, IMAD, IMAD.X) and the swizzled
// shared offset (LEA, LOP3), then LDGSTS: 4 fma + 6 alu per chunk.
void emit_fa2_bwd_tile_copy(ProgramBuilder& b, i64 chunks) {
  for (i64 k = 0; k < chunks; ++k) {
    b.repeat(Pipe::fma, 4);
    b.cp_async(b.alu(repeat_last(b, Pipe::alu, 5)));
  }
}

// The next (Q, dO) pair by cp.async (load_q_do): the work item's row and
// head offsets (2 IMAD, 6 alu), both tiles, the commit (LDGDEPBAR).
void emit_fa2_bwd_q_do_copy(ProgramBuilder& b, i64 chunks) {
  b.repeat(Pipe::fma, 2);
  b.repeat(Pipe::alu, 6);
  emit_fa2_bwd_tile_copy(b, chunks);
  emit_fa2_bwd_tile_copy(b, chunks);
  b.alu();
}

WarpProgram fa2_backward_step(int d, int bm, int bn, i64 elem, bool masked) {
  const int warps = static_cast<int>(Fa2BackwardSchedule::warps_for(d, bm, bn));
  const i64 threads = 32 * warps;
  auto split = [&](int m, int n, int& mf, int& nt) {
    const int wm = warps_m_or_1(fa2_warps_m(m, n, warps));
    mf = std::max(1, m / wm / 16);
    nt = std::max(2, n / std::max(1, warps / wm) / 8 / 2 * 2);
  };
  int s_mf = 0, s_nt = 0, kv_mf = 0, kv_nt = 0, q_mf = 0, q_nt = 0;
  split(bm, bn, s_mf, s_nt);
  split(bn, d, kv_mf, kv_nt);
  split(bm, d, q_mf, q_nt);
  const bool two_stages = Fa2BackwardSchedule::q_stages_for(d, bm, bn, elem) == 2;
  const i64 chunks = ceil_div(i64{bm} * d * elem / 16, threads);  // per thread, per Q or dO tile
  const Fa2BwdRegisterLimit limit = fa2_bwd_register_limit(d, bm, bn);
  ProgramBuilder b("fa2_bwd d" + std::to_string(d) + " " + std::to_string(bm) + "x" + std::to_string(bn) +
                   (masked ? " masked" : ""));
  b.repeat(Pipe::fma, kFa2BwdStepOverheadFma + limit.step_fma);
  b.repeat(Pipe::alu, kFa2BwdStepOverheadAlu + limit.step_alu);
  emit_fa2_locals(b, true, d, bm, bn, masked ? LocalRegion::masked : LocalRegion::step);
  b.alu();  // cp.async.wait (DEPBAR): Q_i, dO_i landed
  b.barrier();
  if (two_stages) emit_fa2_bwd_q_do_copy(b, chunks);  // the next Q, dO into the other stage
  // Row statistics (per S row): L_i and D_i by LDG; lse * log2e (FMUL) and
  // the -inf test (FSETP, FSEL).
  std::vector<V> lse, dval;
  for (int r = 0; r < s_mf * 2; ++r) {
    const V l = b.ldg(4 * 32);
    dval.push_back(b.ldg(4 * 32));
    lse.push_back(b.alu(b.alu(b.fma(l))));
  }
  // S = Q_i K_j^T, dP = dO_i V_j^T (warp_gemm, A and B by ldmatrix).
  Fragments sacc(s_mf, s_nt), dp(s_mf, s_nt);
  emit_ldsm_gemm(b, sacc, s_mf, s_nt, d, true, {}, false);
  emit_ldsm_gemm(b, dp, s_mf, s_nt, d, true, {}, false);
  if (masked) {  // mask_scores: column offsets (LOP3), per row the causal key end (64-bit
                 // min/max: IADD3, ISETP, SEL), per score a compare (ISETP) and select (FSEL)
    b.repeat(Pipe::alu, 3 + 2 * s_nt - 1);
    for (int r = 0; r < s_mf * 2; ++r) b.repeat(Pipe::alu, 18);
    for (auto& f : sacc.last)
      for (int e = 0; e < 4; ++e) f = b.alu(b.alu(f), f);
  }
  // softmax_grad: P = ex2(S scale - L) (FFMA, MUFU.EX2), dS = P (dP - D) (FADD, FMUL).
  std::vector<V> p_vals, ds_vals;
  for (size_t f = 0; f < sacc.last.size(); ++f)
    for (int e = 0; e < 4; ++e) {
      const size_t row = (f / static_cast<size_t>(s_nt)) * 2 + static_cast<size_t>(e / 2);
      const V p = b.mufu(b.fma(sacc.last[f], lse[row]));
      p_vals.push_back(p);
      ds_vals.push_back(b.fma(p, b.fma(dp.last[f], dval[row])));
    }
  // store_acc of P and dS: per element pair F2FP (fma) and a 4-byte STS (the
  // addresses are the lane's swizzled offsets, in the fixed part).
  for (size_t k = 0; k + 1 < p_vals.size(); k += 2) b.sts(128, b.fma(p_vals[k], p_vals[k + 1]));
  for (size_t k = 0; k + 1 < ds_vals.size(); k += 2) b.sts(128, b.fma(ds_vals[k], ds_vals[k + 1]));
  b.barrier();
  // dV += P^T dO, dK += dS^T Q (ldmatrix.trans of P, dS).
  Fragments dv(kv_mf, kv_nt), dk(kv_mf, kv_nt);
  emit_ldsm_gemm(b, dv, kv_mf, kv_nt, bm, true, {}, false);
  emit_ldsm_gemm(b, dk, kv_mf, kv_nt, bm, true, {}, false);
  if (!two_stages) {  // every warp done with Q_i, dO_i: the next pair loads during dQ
    b.barrier();
    emit_fa2_bwd_q_do_copy(b, chunks);
  }
  // dQ_i = dS K_j (from RZ), then red.global.add.v2.f32 (REDG) per row and n8
  // tile; per row its guard and 64-bit address (11 alu: SHF, LEA, LEA.HI.X,
  // BSSY/BSYNC, branch; 2 IMAD), a fragment after the first 12 IMAD and 9
  // alu more (its row base recomputed). The loop's end (stage flip, moves) is in
  // the first row's count.
  Fragments dq(q_mf, q_nt);
  emit_ldsm_gemm(b, dq, q_mf, q_nt, bn, true, {}, false);
  for (int r = 0; r < q_mf * 2; ++r) {
    b.repeat(Pipe::fma, 2 + (r >= 2 && r % 2 == 0 ? 12 : 0));
    b.repeat(Pipe::alu, 10 + (r >= 2 && r % 2 == 0 ? 9 : 0));
    const V row = b.alu();
    for (int nt = 0; nt < q_nt; ++nt) b.red(dq.at(r / 2, nt, q_nt), row);
  }
  return b.take();
}

// The prologue's register spills: the STLs (and the odd LDL) the SASS places
// before the main loop, once per CTA, beside the K_j, V_j copy. Only these
// are modelled: the set-up's arithmetic is not (an empty program where the
// kernel spills nothing there).
WarpProgram fa2_backward_prologue(int d, int bm, int bn) {
  ProgramBuilder b("fa2_bwd prologue");
  emit_fa2_locals(b, true, d, bm, bn, LocalRegion::prologue);
  return b.take();
}

// The epilogue: dK_j (scaled: FMUL per element) and dV_j packed (F2FP) into
// the K/V tiles by store_acc, then both tiles by dev::store_tile. Walk: per
// element pair's shared address (swizzle LOP3s, LEA, IMAD.IADD; shared by dK
// and dV) 5 alu + 1 fma, per 16-byte chunk of the store (row guard, 64-bit
// address, LDS.128, STG.128) 6 IMAD + 8 alu, and 3 fma + 4 alu once.
WarpProgram fa2_backward_epilogue(int d, int bm, int bn, i64 elem) {
  const int warps = static_cast<int>(Fa2BackwardSchedule::warps_for(d, bm, bn));
  const int wm = warps_m_or_1(fa2_warps_m(bn, d, warps));
  const int mf = std::max(1, bn / wm / 16), nt = std::max(1, d / std::max(1, warps / wm) / 8);
  const Fa2BwdRegisterLimit limit = fa2_bwd_register_limit(d, bm, bn);
  ProgramBuilder b("fa2_bwd epilogue");
  b.repeat(Pipe::fma, 3 + limit.epi_fma);
  b.repeat(Pipe::alu, 4 + limit.epi_alu);
  emit_fa2_locals(b, true, d, bm, bn, LocalRegion::epilogue);
  b.alu();  // cp.async.wait_group 0
  b.barrier();
  const int pairs = mf * 2 * nt;  // element pairs per tile
  for (int k = 0; k < pairs; ++k) {
    const V addr = b.fma(repeat_last(b, Pipe::alu, 5));
    b.sts(128, b.fma(b.fma(), b.fma()), addr);  // dK: 2 FMUL (scale), F2FP
    b.sts(128, b.fma(), addr);                  // dV: F2FP
  }
  b.barrier();
  const i64 chunks = ceil_div(i64{bn} * d * elem / 16, 32 * warps);
  for (int t = 0; t < 2; ++t)
    for (i64 k = 0; k < chunks; ++k) {
      b.repeat(Pipe::fma, 6);
      const V addr = repeat_last(b, Pipe::alu, 8);
      b.stg(b.lds(512), addr);
    }
  return b.take();
}

// FA2's row kernels (kernels/fa2/fa2_rows.cuh: fa2_bwd_preprocess_kernel,
// fa2_bwd_convert_dq_kernel), 128 threads per CTA. The preprocess takes a row
// as d/8 16-byte chunks on adjacent lanes, a thread chunk tid, tid + 128, ...
// of the CTA's rows (`iters` of them); convert_dq takes float4s the same way.
//
// What a warp executes is counted off the sm_90 SASS of the fp16 builds
// (preprocess: experiments/results/2026-11-28-fa2-row-kernels-sass:
// fa2_rows.sass, the regions by experiments/probes/row_sass.py, pipes as
// Nsight Compute counts them; its dynamic totals reproduce Nsight Compute's
// inst_executed per warp of every grid row, 536 / 975 / 1015 / 1934; the
// hand count before was 0.33-0.39 of it: each iteration divides its chunk
// index by d/8, a runtime value, in about 25 integer instructions, and the
// 64-bit addresses take 10 more). bf16 builds are taken to execute what
// fp16's do.
struct RowSass {
  int fma, alu, mufu, uniform;
};
void emit_row_sass(ProgramBuilder& b, const RowSass& r) {
  b.repeat(Pipe::fma, r.fma);
  b.repeat(Pipe::alu, r.alu);
  b.repeat(Pipe::mufu, r.mufu);
  b.repeat(Pipe::uniform, r.uniform);
}

// dQ = scale dQaccum: a thread takes float4 tid, tid + 128, ... of the CTA's
// contiguous dQaccum rows (`iters` = block_rows d / 4 / 128 of them, a
// multiple of 4 at every compiled tile) and stores each as 8 bytes of dQ. The
// compiler unrolls the loop by 4 and issues a trip's four LDG.128 first, then
// its multiplies, packs and four STG.64. Counted off the SASS and Nsight
// Compute's per-instruction executed counts at four grid shapes (d 64 and
// 128, B_r 64 and 128; experiments/results/2026-12-02-h200-staged-stores):
// per trip 4 LDG, 4 STG, 48 fma, 36 alu, 1 uniform; once 5 fma, 7 alu, 63
// uniform (the prologue, the loop's set-up and exit). The iters % 4 float4s
// left over (a tile outside the menus) run first, one at a time, in a loop of
// 28 per trip (1 LDG, 1 STG, 15 fma, 10 alu, 1 uniform; the SASS's, never
// executed at the four shapes). A ragged last row block runs fewer; the
// program is a full block's.
WarpProgram fa2_convert_dq_program(i64 iters) {
  ProgramBuilder b("fa2_bwd_convert_dq");
  emit_row_sass(b, {5, 7, 0, 63});
  auto trip = [&](int float4s, const RowSass& whole) {
    std::vector<V> loaded;
    for (int k = 0; k < float4s; ++k) loaded.push_back(b.ldg(512, b.alu()));  // 32 lanes x 16 bytes, its address
    // The trip's count less what its float4s below emit (1 alu, 6 fma each).
    emit_row_sass(b, {whole.fma - 6 * float4s, whole.alu - float4s, whole.mufu, whole.uniform});
    for (const V v : loaded) {  // 4 multiplies, 2 packs, one 8-byte store per lane
      const V lo = b.fma(b.fma(v), b.fma(v)), hi = b.fma(b.fma(v), b.fma(v));
      b.stg(lo, hi);  // waits for both packed halves
    }
  };
  for (i64 k = 0; k < iters % 4; ++k) trip(1, {15, 10, 0, 1});
  for (i64 k = 0; k < iters / 4; ++k) trip(4, {48, 36, 0, 1});
  return b.take();
}

// D = rowsum(dO o O), then dQaccum = 0. Per chunk iteration (not unrolled):
// 2 LDG.128, 43 fma, 25 alu, 3 mufu, 10 uniform, then log2(d/8) shuffle
// steps of 5 (SHFL, FADD, 2 alu, a branch) and the D store (6 alu, 2
// uniform); once: 45 (prologue). The zeroing loop's cheapest path for n
// float4 stores per thread (path.py on the same listing; 16-way unrolled
// with 4-way and single tails): n = 2..64 below.
RowSass preprocess_zero_sass(i64 n) {
  struct Row {
    i64 n;
    RowSass r;
  };
  static constexpr Row kZero[] = {{2, {13, 20, 0, 17}},  {4, {8, 19, 0, 23}},   {8, {11, 22, 0, 22}},
                                  {16, {12, 23, 0, 23}}, {32, {15, 26, 0, 24}}, {64, {21, 32, 0, 26}}};
  for (const Row& z : kZero)
    if (z.n == n) return z.r;
  // Outside the compiled menu: the 16-way loop's trips beyond 64 stores.
  return {21 + static_cast<int>(3 * (n - 64) / 16), 32 + static_cast<int>(6 * (n - 64) / 16), 0,
          26 + static_cast<int>((n - 64) / 16)};
}

WarpProgram fa2_preprocess_program(i64 iters, i64 d, i64 zero_stores) {
  ProgramBuilder b("fa2_bwd_preprocess");
  emit_row_sass(b, {2, 6, 0, 37});  // prologue
  const i64 cpr = d / 8;
  for (i64 k = 0; k < iters; ++k) {  // two 16-byte loads, 8 products, a shuffle tree, D
    emit_row_sass(b, {43 - 8, 25 - 19, 3, 10});
    const V o = b.ldg(512, b.alu(b.alu())), g = b.ldg(512, b.alu());
    V s = kNone;
    for (int e = 0; e < 8; ++e) s = b.fma(b.alu(o), b.alu(g), s);
    for (i64 off = cpr / 2; off > 0; off /= 2) {
      s = b.fma(s, b.shfl(s));
      emit_row_sass(b, {0, 2, 0, 1});
    }
    emit_row_sass(b, {0, 5, 0, 2});
    b.stg(s, b.alu());
  }
  const RowSass z = preprocess_zero_sass(zero_stores);
  emit_row_sass(b, z);
  for (i64 k = 0; k < zero_stores; ++k) b.stg(kNone, kNone);
  return b.take();
}

WarpProgram fa2_row_kernel(KernelKind kind, const RowBlockSchedule& rs) {
  const i64 d = rs.head_dim, threads = RowBlockSchedule::kThreads;
  if (kind == KernelKind::fa2_bwd_preprocess)
    return fa2_preprocess_program(ceil_div(rs.block_rows * (d / 8), threads), d,
                                  ceil_div(rs.block_rows * d / 4, threads));
  return fa2_convert_dq_program(ceil_div(rs.block_rows * d / 4, threads));
}

// Load rounds of a row kernel's step. The preprocess loop waits for each
// iteration's two loads (its shuffles need them): a round per chunk
// iteration. The unrolled dQ loop issues a trip's four loads together, then
// their stores: a round per trip of 4 float4s (and per float4 of the
// one-at-a-time loop before it). (A round per float4 brought
// the model's convert_dq times nearer the GPU's on the H200's grid but its
// DRAM writes further, held-out DRAM error 1.88% -> 1.99% on 2026-12-02; and
// it is not what the kernel does.)
int fa2_row_load_rounds(KernelKind kind, const RowBlockSchedule& rs) {
  const i64 threads = RowBlockSchedule::kThreads;
  const i64 float4s = ceil_div(rs.block_rows * rs.head_dim / 4, threads);
  const i64 rounds = kind == KernelKind::fa2_bwd_convert_dq ? float4s / 4 + float4s % 4
                                                            : ceil_div(rs.block_rows * (rs.head_dim / 8), threads);
  return static_cast<int>(std::max<i64>(1, rounds));
}

// ---------------------------------------------------------------------------
// Standard attention's GEMM (kernels/standard/standard_gemm.cu, gemm_kernel):
// 8 warps; a step is one tile_k chunk; a CTA computes tiles_per_cta output
// tiles in turn, each ending with its C's epilogue.
//
// What a warp executes per piece is counted off the sm_90 SASS of every fp16
// gemm_kernel instantiation the plan launches (tile x operand layout x
// single/multi-tile build): the cheapest issued path through each piece, with
// exact counts of its LDGSTS, HMMA, LDSM, STSM, LDS, STG and BAR
// (experiments/probes/gemm_sass/path.py, experiments/results/2026-11-28-sass-gemm-paths).
// These counts reproduce Nsight Compute's inst_executed of the grid's
// unragged GEMM rows exactly (that folder's step4.out), the never-executed
// `@!PT LDS` before each operand's copies included (issued, so counted). The
// pieces: a chunk's copy issue (the next chunk's cp.async), its products, a
// tile's epilogue (not the CTA's last; multi-tile builds only), the last
// tile's epilogue, and the CTA's one-time prologue (its indices, 4 or 5
// 64-bit divisions, the first chunk's issue). fp32 and integer multiply-adds
// (IMAD, VIADD) count as the fma pipe; F2FP as alu; I2F, MUFU, F2I as mufu.
// bf16 builds are taken to execute what fp16's do.
enum class GemmLayout { kk, kn, nn };  // A, B k-contiguous: S, dP | O, dQ | dV, dK

struct GemmStepSass {
  int tm, tn, tk;
  GemmLayout layout;
  bool multi;  // the build for tiles_per_cta > 1
  SassRegion issue, products, tile_mid, tile_last, prologue;
  // The issue when every output tile is cut in n (B n-contiguous, n < tile_n:
  // head dim 64 in a 128-wide tile). B's guarded copy then puts lanes of
  // every warp on both sides of each chunk's branch (copy or zero-fill), and
  // the warp issues both: the union of the two paths through the SASS
  // (experiments/probes/gemm_sass/guarded.py,
  // experiments/results/2026-11-28-sass-gemm-guarded). {0}: not counted.
  SassRegion issue_cut_n{};
};

const GemmStepSass* gemm_step_sass(const GemmPlan& g) {
  // One row per instantiation: tile, layout, multi, then {fma, mufu, total,
  // uniform} per warp of the issue, products, tile (not last; multi only),
  // last tile and prologue (experiments/results/2026-11-28-sass-gemm-paths/counts.json),
  // and for B n-contiguous 128-wide tiles the issue cut in n (guarded.json).
  static constexpr GemmStepSass kCounts[] = {
      {128, 128, 32, GemmLayout::kk, false, {37, 0, 119, 36}, {13, 0, 85, 6}, {0, 0, 0, 0}, {103, 0, 428, 73}, {86, 12, 343, 138}},
      {128, 128, 32, GemmLayout::kn, false, {43, 0, 134, 39}, {22, 0, 100, 15}, {0, 0, 0, 0}, {118, 0, 431, 84}, {72, 12, 356, 168}, {46, 0, 180, 57}},
      {128, 128, 32, GemmLayout::nn, false, {39, 0, 121, 36}, {15, 0, 100, 13}, {0, 0, 0, 0}, {101, 0, 431, 84}, {64, 12, 333, 163}, {40, 0, 165, 54}},
      {64, 64, 32, GemmLayout::kk, false, {43, 0, 108, 13}, {12, 0, 52, 5}, {0, 0, 0, 0}, {57, 0, 165, 25}, {120, 12, 311, 81}},
      {64, 64, 32, GemmLayout::kk, true, {44, 0, 111, 15}, {8, 0, 42, 8}, {44, 0, 190, 62}, {42, 0, 162, 45}, {140, 15, 371, 96}},
      {64, 64, 32, GemmLayout::kn, false, {49, 0, 120, 16}, {16, 0, 55, 11}, {0, 0, 0, 0}, {55, 0, 165, 29}, {125, 12, 317, 77}},
      {64, 64, 32, GemmLayout::kn, true, {48, 0, 116, 13}, {13, 0, 49, 9}, {55, 0, 196, 52}, {53, 0, 165, 33}, {143, 15, 365, 90}},
      {64, 64, 32, GemmLayout::nn, false, {43, 0, 108, 13}, {10, 0, 50, 9}, {0, 0, 0, 0}, {50, 0, 166, 30}, {116, 12, 299, 77}},
      {64, 64, 32, GemmLayout::nn, true, {43, 0, 108, 13}, {6, 0, 41, 10}, {50, 0, 197, 53}, {48, 0, 166, 34}, {138, 15, 352, 83}},
      {128, 64, 32, GemmLayout::kk, false, {43, 0, 108, 13}, {10, 0, 45, 5}, {0, 0, 0, 0}, {65, 0, 246, 39}, {125, 12, 341, 82}},
      {128, 64, 32, GemmLayout::kn, false, {49, 0, 119, 14}, {9, 0, 44, 5}, {0, 0, 0, 0}, {70, 0, 252, 39}, {130, 12, 341, 75}},
      {128, 64, 32, GemmLayout::nn, false, {47, 0, 127, 21}, {9, 0, 47, 8}, {0, 0, 0, 0}, {78, 0, 249, 36}, {141, 12, 349, 62}},
      {64, 128, 32, GemmLayout::kk, false, {44, 0, 111, 14}, {11, 0, 52, 5}, {0, 0, 0, 0}, {66, 0, 245, 39}, {122, 12, 333, 81}},
      {64, 128, 32, GemmLayout::kn, false, {50, 0, 123, 17}, {14, 0, 56, 8}, {0, 0, 0, 0}, {79, 0, 248, 36}, {135, 12, 346, 75}, {59, 0, 171, 35}},
      {64, 128, 32, GemmLayout::nn, false, {51, 0, 121, 13}, {10, 0, 47, 5}, {0, 0, 0, 0}, {70, 0, 251, 39}, {136, 12, 343, 70}, {60, 0, 169, 31}},
      {128, 128, 64, GemmLayout::kk, false, {44, 0, 136, 38}, {21, 0, 150, 10}, {0, 0, 0, 0}, {112, 0, 432, 89}, {94, 12, 350, 137}},
      {128, 128, 64, GemmLayout::kk, true, {43, 0, 139, 44}, {17, 0, 142, 14}, {113, 0, 496, 111}, {112, 0, 459, 108}, {68, 15, 424, 237}},
      {128, 128, 64, GemmLayout::kn, false, {51, 0, 157, 44}, {51, 0, 178, 15}, {0, 0, 0, 0}, {137, 0, 446, 68}, {131, 12, 348, 75}, {65, 0, 259, 84}},
      {128, 128, 64, GemmLayout::kn, true, {34, 0, 156, 78}, {35, 0, 156, 20}, {130, 0, 508, 120}, {129, 0, 469, 116}, {78, 15, 453, 255}, {64, 0, 266, 118}},
      {128, 128, 64, GemmLayout::nn, false, {47, 0, 142, 35}, {46, 0, 179, 16}, {0, 0, 0, 0}, {117, 0, 439, 66}, {120, 12, 334, 85}, {50, 0, 232, 75}},
      {128, 128, 64, GemmLayout::nn, true, {28, 0, 146, 78}, {29, 0, 150, 21}, {113, 0, 507, 121}, {112, 0, 468, 117}, {70, 15, 442, 255}, {48, 0, 254, 118}},
  };
  if (g.a.k_contiguous != g.b.k_contiguous && !g.a.k_contiguous) return nullptr;  // no product has this layout
  const GemmLayout layout = g.a.k_contiguous ? (g.b.k_contiguous ? GemmLayout::kk : GemmLayout::kn) : GemmLayout::nn;
  for (const GemmStepSass& c : kCounts)
    if (c.tm == g.s.tile_m && c.tn == g.s.tile_n && c.tk == g.s.tile_k && c.layout == layout &&
        c.multi == (g.s.tiles_per_cta > 1))
      return &c;
  return nullptr;  // a tile without a kernel (simulated all the same): the estimate below
}

SassRegion operator+(const SassRegion& x, const SassRegion& y) {
  return {x.fma + y.fma, x.mufu + y.mufu, x.total + y.total, x.uniform + y.uniform};
}
SassRegion operator-(const SassRegion& x, const SassRegion& y) {
  return {x.fma - y.fma, x.mufu - y.mufu, x.total - y.total, x.uniform - y.uniform};
}

// One operand's chunk copy (load_chunk_tile) as an estimate, where no SASS
// counts exist: the interior path's address set up and per further 16-byte
// chunk a 64-bit step; an edge tile (rows or columns cut by the problem)
// takes the guarded loop, with its bound tests per chunk.
void emit_gemm_operand_copy(ProgramBuilder& b, i64 chunks_per_thread, bool guarded) {
  if (guarded) {
    b.repeat(Pipe::alu, 20);
    b.repeat(Pipe::fma, 10);
    for (i64 k = 0; k < chunks_per_thread; ++k) {
      b.repeat(Pipe::alu, 10);
      b.repeat(Pipe::fma, 3);
      b.cp_async(b.alu());
    }
    return;
  }
  b.repeat(Pipe::alu, 13);
  b.repeat(Pipe::fma, 8);
  for (i64 k = 0; k < chunks_per_thread; ++k) b.cp_async(k == 0 ? b.alu() : b.alu(b.alu()));
}

// What the guarded copy adds to the interior one (the SASS counts are of the
// interior path): the estimate above's difference, 8 + 9 n alu and 2 + 3 n fma.
void emit_gemm_guard_extra(ProgramBuilder& b, i64 chunks_per_thread, bool guarded) {
  if (!guarded) return;
  b.repeat(Pipe::alu, 8 + 9 * chunks_per_thread);
  b.repeat(Pipe::fma, 2 + 3 * chunks_per_thread);
}

// The kernel's kOneBarrier: several tiles per CTA, C staged in one stage
// buffer, A and B both k-contiguous.
bool gemm_one_barrier(const GemmPlan& g) {
  const auto& s = g.s;
  return s.tiles_per_cta > 1 && GemmSchedule::c_in_stage(s.tile_m, s.tile_n, s.tile_k) && g.a.k_contiguous &&
         g.b.k_contiguous;
}

struct GemmWarpShape {
  int tm, tn, tk, fm, fn;
  i64 a_chunks, b_chunks;  // 16-byte copies per thread and chunk
};
GemmWarpShape gemm_warp_shape(const GemmPlan& g, i64 elem) {
  const auto& s = g.s;
  const int tm = round16(s.tile_m), tn = round16(s.tile_n), tk = round16(s.tile_k);
  const int wm = std::max(1, gemm_warps_m(tm)), wn = 8 / wm;
  const auto per_thread = [&](i64 rows) { return ceil_div(rows * s.tile_k * elem / 16, GemmSchedule::kThreads); };
  return {tm, tn, tk, std::max(1, tm / wm / 16), std::max(1, tn / wn / 8), per_thread(s.tile_m), per_thread(s.tile_n)};
}

// Products (warp_chunk_mma): per 16-deep slice, an ldmatrix per A fragment
// and per pair of n8 tiles, then 2 x FM HMMAs per B pair; with the estimate
// (no SASS counts), each ldmatrix's lane address (XOR, shift, add) and the
// slice loop's test are charged here.
void emit_gemm_products(ProgramBuilder& b, const GemmPlan& g, const GemmWarpShape& w, bool estimate) {
  Fragments acc(w.fm, w.fn);
  const int unroll = gemm_slice_unroll(g.s.tile_m, g.s.tile_n, g.s.tile_k, g.b.k_contiguous);
  // With SASS counts the address arithmetic is in the piece's fill (the
  // compiler shares it between ldmatrix and keeps some in uniform registers).
  const auto address = [&] { return estimate ? b.alu(b.alu(b.fma())) : kNone; };
  for (int kk = 0; kk < w.tk / 16; ++kk) {
    if (estimate && kk > 0 && kk % unroll == 0) b.repeat(Pipe::alu, 2);  // the slice loop's test and branch
    std::vector<V> a(static_cast<size_t>(w.fm));
    for (auto& r : a) r = b.ldsm(address());
    for (int np = 0; np < w.fn / 2; ++np) {
      const V bb = b.ldsm(address());
      for (int f = 0; f < w.fm; ++f)
        for (int h = 0; h < 2; ++h) {
          V& last = acc.at(f, 2 * np + h, w.fn);
          last = b.mma(last, a[static_cast<size_t>(f)], bb);
        }
    }
  }
}

// One step: the next chunk's copies (each operand's 16-byte cp.async), the
// wait and barrier, the products, and (two barriers per step: all but the
// multi-tile k-contiguous builds) the barrier before the next issue
// overwrites the stage. With SASS counts, each piece is brought up to what
// the kernel executes there.
WarpProgram gemm_chunk(const GemmPlan& g, i64 elem) {
  const auto& s = g.s;
  const GemmWarpShape w = gemm_warp_shape(g, elem);
  const GemmStepSass* sass = gemm_step_sass(g);
  ProgramBuilder b("gemm " + std::to_string(w.tm) + "x" + std::to_string(w.tn) + "x" + std::to_string(w.tk) +
                   (sass ? "" : " (estimate: no SASS counts)"));
  const bool one_barrier = gemm_one_barrier(g);
  if (!sass) {
    b.repeat(Pipe::alu, 30);
    b.repeat(Pipe::fma, 12);
    emit_gemm_operand_copy(b, w.a_chunks, s.m < s.tile_m);
    emit_gemm_operand_copy(b, w.b_chunks, s.n < s.tile_n);
    b.alu();  // commit
    b.alu();  // cp.async.wait
    b.barrier();
    emit_gemm_products(b, g, w, true);
    if (!one_barrier) b.barrier();
    b.repeat(Pipe::alu, 2);  // loop test and branch
    return b.take();
  }
  i64 at = b.size();
  for (i64 k = 0; k < w.a_chunks + w.b_chunks; ++k) b.cp_async(b.alu());
  const bool b_cut_counted = s.n < s.tile_n && !g.b.k_contiguous && sass->issue_cut_n.total > 0;
  fill_region(b, at, b_cut_counted ? sass->issue_cut_n : sass->issue, "gemm issue");
  emit_gemm_guard_extra(b, w.a_chunks, s.m < s.tile_m);
  emit_gemm_guard_extra(b, w.b_chunks, s.n < s.tile_n && !b_cut_counted);
  at = b.size();
  b.barrier();
  emit_gemm_products(b, g, w, false);
  if (!one_barrier) b.barrier();
  fill_region(b, at, sass->products, "gemm products");
  return b.take();
}

// After each output tile's last chunk, C staged through shared memory
// (store_c_staged, swizzled, in the free stage buffer or in both): per pair
// of n8 fragments four conversions-and-packs (F2FP) and one STSM.x4 (512
// bytes per warp) after its shared address; a barrier; per 16-byte chunk of
// the tile an LDS.128 and an STG.128 (.cs) after their addresses; with one
// barrier per step a barrier before the STSMs, with two (a tile before the
// CTA's last) one before the next tile's issue. `first_work`: the CTA's
// last tile, charged with its one-time prologue too (the GEMM's trace has no
// prologue step) less one chunk's issue (its last step issued none, the
// chunk program charged one).
WarpProgram gemm_epilogue(const GemmPlan& g, i64 elem, bool first_work) {
  const auto& s = g.s;
  const GemmWarpShape w = gemm_warp_shape(g, elem);
  const GemmStepSass* sass = gemm_step_sass(g);
  const bool one_barrier = gemm_one_barrier(g);
  ProgramBuilder b(std::string(first_work ? "gemm prologue + epilogue" : "gemm epilogue") +
                   (sass ? "" : " (estimate: no SASS counts)"));
  const i64 at = b.size();
  if (!sass) {
    if (first_work) {
      b.repeat(Pipe::alu, 60);
      b.repeat(Pipe::fma, 20);
      for (int k = 0; k < 4; ++k) {
        b.repeat(Pipe::mufu, 3);
        b.repeat(Pipe::alu, 8);
        b.repeat(Pipe::fma, 7);
      }
      b.repeat(Pipe::alu, 30);
      b.repeat(Pipe::fma, 12);
      emit_gemm_operand_copy(b, w.a_chunks, s.m < s.tile_m);
      emit_gemm_operand_copy(b, w.b_chunks, s.n < s.tile_n);
    }
    b.repeat(Pipe::fma, 6);  // the tile's C address
    b.repeat(Pipe::alu, 8);
  }
  if (one_barrier) b.barrier();
  for (int k = 0; k < std::max(1, w.fm * w.fn / 2); ++k) {
    const V addr = b.alu(b.alu());
    V data = kNone;
    for (int r = 0; r < 4; ++r) data = sass ? b.alu(data) : b.fma(data);  // F2FP per register of the four matrices
    b.sts(512, data, addr);
  }
  b.barrier();
  const i64 chunks = ceil_div(i64{w.tm} * w.tn / 8, GemmSchedule::kThreads);
  for (i64 k = 0; k < chunks; ++k) {
    if (!sass) {
      b.repeat(Pipe::fma, 4);
      b.repeat(Pipe::alu, 6);
    }
    b.stg(b.lds(512, b.alu()), b.alu());
  }
  if (!one_barrier && !first_work) b.barrier();  // a tile before the CTA's last
  if (!sass) {
    b.repeat(Pipe::alu, 4);  // the tile loop's test and branch
    return b.take();
  }
  if (!first_work) {  // single-tile builds never run it: their one tile is the last
    fill_region(b, at, sass->multi ? sass->tile_mid : sass->tile_last, "gemm tile epilogue");
    return b.take();
  }
  fill_region(b, at, sass->tile_last + sass->prologue - sass->issue, "gemm last tile + prologue");
  return b.take();
}

// Standard attention's GEMM on Hopper's TMA + wgmma (kernels/standard/sm90a,
// wgmma_gemm_kernel): the programs are a consumer warp's (8 of the CTA's 9
// warps; the producer warp's one thread issues the TMA loads: 67-128
// instructions per chunk, as FA3's producer left out). Per 64-deep chunk, as
// consume(): wait for the stage (mbar_wait), fence, four wgmma m64n128k16 (A
// and B from shared memory, descriptors per k16 step), commit; then
// wgmma.wait_group 1 and the previous stage released. The program's step ends
// once its wgmmas are done, so a warp's next chunk waits for this one's
// group where the kernel waits one group later: the SMSP's other warps (two
// warpgroups per CTA, two CTAs per SM: four per SMSP) keep its tensor pipe
// fed. Per output tile: wgmma.wait_group 0, C packed (F2FP), exchanged among
// the four lanes of a row (four SHFL per 16-byte run) and stored in 16-byte
// runs, a row's 64 bytes per instruction (store_c: 8 stores for 128 columns,
// 4 for 64). Instruction counts: each region is filled to what Nsight
// Compute's per-instruction executed counts give per consumer warp on the
// H200 (experiments/results/2026-12-02-h200-wgmma-gemm-model: S = Q K^T at
// d 128 for the k-contiguous B, O = P V at d 64 and 128 for the n-contiguous
// B, dV at d 64 and 128 and dK at d 64 for the m-contiguous A). The mbarrier
// spin-waits (3-instruction try_wait loops) are waits, not work.
struct WgmmaGemmSass {
  SassRegion chunk;      // per chunk
  SassRegion tile;       // per output tile beyond its chunks (wait, C stored), all but the CTA's last
  SassRegion last_tile;  // the CTA's last tile and every once-per-CTA instruction of a consumer warp
};
WgmmaGemmSass wgmma_gemm_sass(const GemmPlan& g) {
  // The instructions every warp of the CTA executes once (the producer's too:
  // barrier set-up, the CTA's tile) are in last_tile.
  if (g.b.k_contiguous) {  // S = Q K^T, dP = dO V^T (qk-d128: 82 per chunk, 366 per tile, 114 + 73 once)
    const SassRegion tile{80, 0, 366};
    return {{15, 0, 82}, tile, tile + SassRegion{14, 3, 114} + SassRegion{19, 6, 73}};
  }
  // O = P V, dQ = dS K (A k-contiguous) and dV, dK (A m-contiguous: 4 more
  // descriptor instructions per chunk): n = d, one output tile per CTA, so
  // its tile and once-per-CTA counts come as one group (pv-d64 / pv-d128,
  // dv-d64 / dv-d128: 383 / 427, + 72 by every warp); each chunk after the
  // first also releases the previous stage (4 instructions). With n > 128
  // (d 256: two output tiles) a tile's own share was not measured apart; the
  // whole group stands for it.
  const SassRegion last = g.s.n > 64 ? SassRegion{91, 3, 427} : SassRegion{79, 3, 383};
  const SassRegion chunk = g.a.k_contiguous ? SassRegion{15, 0, 85} : SassRegion{15, 0, 89};
  return {chunk + SassRegion{1, 0, 4}, last, last + SassRegion{19, 6, 72}};
}

WarpProgram wgmma_gemm_chunk(const GemmPlan& g) {
  const WgmmaGemmSass sass = wgmma_gemm_sass(g);
  ProgramBuilder b("gemm wgmma 128x128x64 chunk");
  b.alu();  // mbar_wait (the stage landed: TRYWAIT, its retry branch falling through)
  b.branch(false);
  for (i64 kk = 0; kk < WgmmaGemmShape::kTileK / 16; ++kk) b.wgmma(static_cast<int>(WgmmaGemmShape::kTileN), kNone, b.alu());
  fill_region(b, 0, sass.chunk, "gemm wgmma chunk");
  return b.take();
}

// A tile's C (last: the CTA's last tile, with its once-per-CTA work). The
// accumulators are ready: the chunk steps ended with their wgmmas done.
WarpProgram wgmma_gemm_epilogue(const GemmPlan& g, bool last) {
  const WgmmaGemmSass sass = wgmma_gemm_sass(g);
  ProgramBuilder b(std::string("gemm wgmma 128x128x64 ") + (last ? "last tile + once" : "tile"));
  const i64 cols = std::min(g.s.tile_n, g.s.n);
  const V acc = b.wgmma_wait(kNone);
  for (i64 run = 0; run < 8; ++run) {  // (j, h): 16-byte runs of two rows' 32 columns
    const V x = b.shfl(b.fma(acc, acc)), y = b.shfl(b.fma(acc, acc));
    const V v = b.alu(b.shfl(b.alu(x, y)), b.shfl(b.alu(x, y)));
    if (run / 2 < ceil_div(cols, 32)) b.stg(v, b.alu());  // columns past n are not stored
  }
  fill_region(b, 0, last ? sass.last_tile : sass.tile, last ? "gemm wgmma last tile + once" : "gemm wgmma tile");
  return b.take();
}

// Standard attention's row softmax (kernels/standard/standard_attention.cu):
// per thread, columns c = first, first + per_row, ...; 2-byte element loads.
WarpProgram softmax_program(const SoftmaxPlan& sp, bool backward, bool first_pass) {
  const auto& s = sp.s;
  const i64 per_row = s.threads_per_row(), cols = ceil_div(s.seq_k, per_row);
  const bool on_chip = s.row_fits_on_chip(), warp_rows = per_row == 32;
  const bool masked = sp.tiles.causal || sp.tiles.mask.active != nullptr;
  ProgramBuilder b(std::string(backward ? "softmax_bwd" : "softmax_fwd") + (first_pass ? " stats" : ""));
  b.repeat(Pipe::alu, 12);  // row, offsets (64-bit)
  auto reduce = [&](V v, Pipe op) {
    for (int k = 0; k < 5; ++k) v = b.emit(op, v, b.shfl(v));
    if (!warp_rows) {  // across the CTA's warps through shared memory
      b.sts(4 * 32, v);
      b.barrier();
      for (int w = 0; w < 4; ++w) v = b.emit(op, v, b.lds(4 * 32));
      b.barrier();
    }
    return v;
  };
  // A column loop the compiler unrolls by 4: loads batched, then used.
  auto column_loop = [&](auto&& body_of_load) {
    for (i64 c = 0; c < cols; c += 4) {
      std::vector<V> loads;
      for (i64 u = c; u < std::min(cols, c + 4); ++u) loads.push_back(body_of_load.load());
      for (const V l : loads) body_of_load.use(l);
      b.repeat(Pipe::alu, 3);
    }
  };
  // visible(): the 64-bit column against the row's key end, the block mask's
  // null test and its branch (SASS: 2 ISETP, a SEL, a BRA per column; with a
  // mask its byte load and two 64-bit divisions); the 64-bit column index and
  // element address (IADD3, IMAD.WIDE, LEA).
  auto visible = [&](V x) {
    b.repeat(Pipe::alu, masked ? 8 : 4);
    b.repeat(Pipe::fma, 2);
    return b.alu(x);
  };
  auto column_step = [&] {  // the 64-bit column loop's increment, test and address
    b.repeat(Pipe::alu, 3);
    b.fma();
  };
  // The 16-byte paths, from their SASS (sm_90, nvcc 13.0; static counts of
  // the loops in experiments/results/2026-11-25-h100-standard-bench-vec16/
  // softmax-sass-loops.txt): HADD2.F32 unpacks (FMA pipe), the chunk's end test and
  // branches (ALU), four chunks' loads and address arithmetic per round.
  const bool block_mask = sp.tiles.mask.active != nullptr;
  // Straight-line code around the loops (experiments/probes/sass_blocks.py on
  // the <half, 128> instantiations): the CTA's row, offsets and limits, the
  // setup of each pass, beyond the reductions and division emitted below and
  // the 12 ALU instructions above.
  auto straight = [&](i64 fma, i64 alu) {
    b.repeat(Pipe::fma, fma);
    b.repeat(Pipe::alu, alu);
  };
  if (!backward && softmax_forward_vectorised(s, sp.tiles)) {
    straight(27, 121 - 13 - 12);
    if (sp.tiles.causal) straight(0, 13);  // the row's key end
    if (block_mask) {                      // the row's mask block: a 32-bit division
      straight(11, 24);
      b.mufu(b.alu());
    }
    // softmax_row_vec16: per chunk the unpack, the chunk's end (and, with a
    // block mask, its block's lookup: a 32-bit division and a byte load) test,
    // t = log2(e) scale S, the max, two 16-byte staging stores; then 2^(t - m)
    // and the sum; then P scaled (4 LDS.64), packed and stored.
    const i64 chunks = ceil_div(s.seq_k / 8, per_row);
    V mx = kNone;
    for (i64 c = 0; c < chunks; c += 4) {
      std::vector<V> loads;
      b.repeat(Pipe::alu, 16);  // the round's bounds tests, zeroed registers, branches
      for (i64 u = c; u < std::min(chunks, c + 4); ++u) loads.push_back(b.ldg(512, b.fma()));
      for (const V l : loads) {
        if (block_mask) {
          b.repeat(Pipe::fma, 8);
          b.repeat(Pipe::alu, 14);
          b.alu(b.mufu(b.alu()));
          b.alu(b.ldg(1, b.fma()));
        }
        b.repeat(Pipe::alu, 9);
        for (int e = 0; e < 8; ++e) mx = b.alu(mx, b.fma(b.fma(l)));
        b.sts(512, mx);
        b.sts(512, mx);
        b.alu();
      }
    }
    mx = reduce(mx, Pipe::alu);
    straight(8, 51 - 9);
    V sum = kNone;
    for (i64 c = 0; c < chunks; ++c) {
      for (int h = 0; h < 2; ++h) {
        const V v = b.lds(512);
        V e = kNone;
        for (int k = 0; k < 4; ++k) sum = b.fma(sum, e = b.mufu(b.fma(v, mx)));
        b.sts(512, e);
      }
      b.alu();
    }
    const V inv = emit_fdiv(b, b.fma(), reduce(sum, Pipe::fma));
    straight(37 - 13, 62 - 1);
    for (i64 c = 0; c < chunks; ++c) {
      V packed = kNone;
      for (int k = 0; k < 4; ++k) {
        const V x = b.lds(256);
        packed = b.alu(b.fma(x, inv), b.fma(x, inv));
      }
      b.stg(packed, b.fma());
      b.repeat(Pipe::alu, 2);
    }
    return b.take();
  }
  if (backward && softmax_backward_vectorised(s)) {
    // softmax_backward_row_vec16: per chunk pair the unpack, the dot's FFMAs
    // and both chunks staged as they came; then per chunk pair the reload,
    // unpack, scale P (dP - dot) (FADD, two FMUL per element), packed and
    // stored.
    straight(19, 96 - 19 - 12);
    const i64 chunks = ceil_div(s.seq_k / 8, per_row);
    V dot = kNone;
    for (i64 c = 0; c < chunks; c += 4) {
      std::vector<std::pair<V, V>> loads;
      for (i64 u = c; u < std::min(chunks, c + 4); ++u) {
        const V addr = b.alu();
        loads.push_back({b.ldg(512, addr), b.ldg(512, addr)});
      }
      for (const auto& [pv, dv] : loads) {
        b.repeat(Pipe::alu, 12);  // the round's bounds tests, zeroed registers, addresses
        for (int e = 0; e < 8; ++e) dot = b.fma(b.fma(pv), b.fma(dv), dot);
        b.sts(512, pv);
        b.sts(512, dv);
      }
    }
    dot = reduce(dot, Pipe::fma);
    straight(14 - 9, 46 - 4);
    for (i64 c = 0; c < chunks; ++c) {
      const V pv = b.lds(512), dv = b.lds(512);
      V packed = kNone;
      for (int k = 0; k < 4; ++k) {
        const V lo = b.fma(b.fma(b.fma(pv)), b.fma(b.fma(dv), dot));
        const V hi = b.fma(b.fma(b.fma(pv)), b.fma(b.fma(dv), dot));
        packed = b.alu(lo, hi);
      }
      b.stg(packed, b.alu());
      b.repeat(Pipe::alu, 5);
    }
    return b.take();
  }
  if (!backward) {
    if (first_pass || on_chip) {
      V acc = kNone;
      struct {
        ProgramBuilder& b;
        V& acc;
        bool on_chip, online;
        decltype(visible)& vis;
        V load() { return b.ldg(64, b.alu()); }
        void use(V l) {
          const V x = vis(b.fma(b.alu(l)));  // scale * to_float(S)
          if (on_chip) b.sts(128, x);
          acc = online ? b.fma(acc, emit_expf(b, b.fma(x, acc))) : b.alu(acc, x);
        }
      } stats{b, acc, on_chip && !first_pass, first_pass, visible};
      column_loop(stats);
      const V mx = reduce(acc, Pipe::alu);
      if (first_pass) {  // the per-lane sums rescaled to the row maximum, summed
        reduce(b.fma(acc, emit_expf(b, mx)), Pipe::fma);
        return b.take();
      }
      V sum = kNone;
      for (i64 c = 0; c < cols; ++c) {
        column_step();
        const V e = emit_expf(b, b.fma(b.lds(128), mx));
        b.sts(128, e);
        sum = b.fma(sum, e);
      }
      const V inv = emit_fdiv(b, b.fma(), reduce(sum, Pipe::fma));
      for (i64 c = 0; c < cols; ++c) {
        column_step();
        b.stg(b.alu(b.fma(b.lds(128), inv)), b.alu());
      }
    } else {  // the output pass of a row that does not fit: reload, exponentiate, store
      for (i64 c = 0; c < cols; c += 4) {
        std::vector<V> loads;
        for (i64 u = c; u < std::min(cols, c + 4); ++u) loads.push_back(b.ldg(64, b.alu()));
        for (const V l : loads) b.stg(b.alu(b.fma(emit_expf(b, visible(b.fma(b.alu(l)))))), b.alu());
        b.repeat(Pipe::alu, 3);
      }
    }
    return b.take();
  }
  // Backward: dot = rowsum(P o dP) (the first pass of a row that does not fit
  // on chip), then dS = scale P (dP - dot) (the output pass).
  if (first_pass || on_chip) {
    V dot = kNone;
    for (i64 c = 0; c < cols; c += 4) {
      std::vector<std::pair<V, V>> loads;
      for (i64 u = c; u < std::min(cols, c + 4); ++u) loads.push_back({b.ldg(64, b.alu()), b.ldg(64, b.alu())});
      for (const auto& [p, q] : loads) {
        const V pv = b.alu(p), dv = b.alu(q);
        if (on_chip) {
          b.sts(128, pv);
          b.sts(128, dv);
        }
        dot = b.fma(pv, dv, dot);
      }
      b.repeat(Pipe::alu, 3);
    }
    dot = reduce(dot, Pipe::fma);
    if (first_pass) return b.take();
  }
  const V dot = b.fma();
  for (i64 c = 0; c < cols; ++c) {
    const V pv = on_chip ? b.lds(128) : b.alu(b.ldg(64, b.alu()));
    const V dv = on_chip ? b.lds(128) : b.alu(b.ldg(64, b.alu()));
    b.stg(b.alu(b.fma(b.fma(pv), b.fma(dv, dot))), b.alu());
  }
  return b.take();
}

// ---------------------------------------------------------------------------
// FlashAttention (v1), kernels/fa1. Costs read off the executed path of one
// step in the sm_90 SASS of fa1_forward_kernel / fa1_backward_kernel <half,
// 64, 64, 64> (nvcc 13.0, full menu): experiments/probes/sass_walk.py follows
// the listing branch by branch (unmasked, non-causal, dense; the decisions and
// the per-region counts are in experiments/results/2026-11-25-h100-sass-fa1-
// paths). The walked steps reproduce Nsight Compute's counters of the grid's
// d64 64x64 rows: inst_executed, shared loads, the xu pipe (MUFU and FCHK) and
// the FFMA/FADD/FMUL thread counts within 1%; the fma pipe within 2% when
// IMAD (all forms), HADD2.F32 (fp16 -> fp32) and F2FP (fp32 -> fp16 pack)
// issue to it. Below, {fma, alu} pairs are the instructions of a piece
// besides the ones emitted one by one (memory, HMMA, MUFU, SHFL, barriers).

struct Cost {
  int fma, alu;
};
void emit_cost(ProgramBuilder& b, Cost c) {
  b.repeat(Pipe::fma, c.fma);
  b.repeat(Pipe::alu, c.alu);
}

// A synchronous tile copy (tile_mma.cuh load_tile16 / load_tile_f32 /
// store_tile16 / store_tile_f32): with n 16-byte chunks per thread, the
// compiler runs n % 4 single iterations, then n / 4 iterations of a
// 4x-unrolled body whose four loads are issued before the four stores.
struct TileLoop {
  Cost setup;      // per call (64-bit bases, the trip count)
  Cost peel;       // added when n % 4 != 0 (the single iterations' tests)
  Cost single;     // one single iteration besides its load/store pair
  Cost unrolled4;  // one unrolled iteration besides its 4 + 4 accesses
};
// fwd Q_i/O_i (n = 4): 112 = 8 + 104 (29 IMAD, 67 other, 4 LDG, 4 STS); bwd O_i (n = 2): 48 = 12 + 2 x 18.
constexpr TileLoop kLoadTile16{{2, 6}, {1, 3}, {5, 11}, {29, 67}};
// bwd dQaccum_i (n = 4): 104 = 20 + 84 (21 IMAD, 55 other, 4 LDG, 4 STS); a single iteration is 16.
constexpr TileLoop kLoadTileF32{{8, 12}, {1, 3}, {3, 11}, {21, 55}};
// fwd O_i (n = 4): 120 = 32 + 88 (28 IMAD, 52 other, 4 LDS, 4 STG); a single iteration is 26.
constexpr TileLoop kStoreTile16{{7, 25}, {0, 0}, {8, 16}, {28, 52}};
// bwd dQaccum_i (n = 4): 89 = 23 + 66 (19 IMAD, 39 other, 4 LDS, 4 STG); a single iteration is 13.
constexpr TileLoop kStoreTileF32{{2, 21}, {0, 0}, {3, 8}, {19, 39}};

i64 tile_chunks(i64 rows, i64 cols, i64 elem, i64 threads) { return ceil_div(rows * cols * elem / 16, threads); }

// Rounds in which a thread's loads of one tile arrive (each single iteration
// and each unrolled batch of four waits for memory).
int sync_tile_rounds(i64 rows, i64 cols, i64 elem, i64 threads) {
  const i64 n = tile_chunks(rows, cols, elem, threads);
  return static_cast<int>(n % 4 + n / 4);
}

// One copy of n chunks per thread: a load batches its LDGs before the STSs
// (each batch waits for memory); a store reads and writes chunk by chunk.
void emit_sync_tile_copy(ProgramBuilder& b, const TileLoop& t, i64 n, bool load) {
  // Of the setup's alu, a copy's 4-5 BRA in the walks (fwd Q_i 4, 3 of them
  // guards; bwd O_i 4, dO_i 5): two guards that fall through and two taken
  // jumps (the loop's).
  emit_cost(b, {t.setup.fma, t.setup.alu - 6});
  b.guarded_branch(false);
  b.guarded_branch(false);
  b.branch(true);
  b.branch(true);
  if (n % 4 != 0) emit_cost(b, t.peel);
  auto iteration = [&](Cost c, int chunks) {
    emit_cost(b, {c.fma, c.alu - chunks});
    V loaded[4];
    for (int u = 0; u < chunks; ++u) {
      if (load) {
        loaded[u] = b.ldg(512, b.alu());
      } else {
        b.stg(b.lds(512, b.alu()));
      }
    }
    for (int u = 0; load && u < chunks; ++u) b.sts(512, loaded[u]);
  };
  for (i64 k = 0; k < n % 4; ++k) iteration(t.single, 1);
  for (i64 k = 0; k < n / 4; ++k) iteration(t.unrolled4, 4);
}
void emit_sync_tile_load(ProgramBuilder& b, i64 rows, i64 cols, i64 elem, i64 threads) {
  emit_sync_tile_copy(b, elem == 4 ? kLoadTileF32 : kLoadTile16, tile_chunks(rows, cols, elem, threads), true);
}
void emit_sync_tile_store(ProgramBuilder& b, i64 rows, i64 cols, i64 elem, i64 threads) {
  emit_sync_tile_copy(b, elem == 4 ? kStoreTileF32 : kStoreTile16, tile_chunks(rows, cols, elem, threads), false);
}

// Per-row loops with one row per thread (`for (r = tid; r < BR; r += threads)`:
// l_i, m_i, D_i): warps past the tile's rows branch around them. One program
// stands for every warp, so it carries the working warps' share of the loop.
double row_warp_share(i64 rows, i64 threads) {
  const i64 warps = threads / 32;
  return static_cast<double>(std::min(warps, ceil_div(rows, 32))) / static_cast<double>(warps);
}
i64 share_of(i64 n, double share) { return std::llround(static_cast<double>(n) * share); }
Cost share_of(Cost c, double share) {
  return {static_cast<int>(share_of(c.fma, share)), static_cast<int>(share_of(c.alu, share))};
}

// warp_mma (tile_mma.cuh): a rolled loop over 16-deep slices; per slice 4
// pairs per A fragment and 2 per B fragment, a pair being one LDS.32 (k
// contiguous) or two LDS.U16 and a PRMT (k strided), then FM x FN HMMAs; the
// slice's addresses and loop control (`slice`: fwd S 3 IMAD + 7 other, bwd 5 + 4).
void emit_pair_gemm(ProgramBuilder& b, Fragments& acc, int m_frags, int n_frags, int k, bool a_kc, bool b_kc,
                    Cost slice) {
  V addr = kNone;
  auto pair = [&](bool kc) {
    if (kc) return b.lds(128, addr);
    const V lo = b.lds(64, addr), hi = b.lds(64, addr);
    return b.alu(lo, hi);  // PRMT
  };
  for (int k0 = 0; k0 < k; k0 += 16) {
    addr = b.fma();
    emit_cost(b, {slice.fma - 1, slice.alu - 1});
    b.branch(true);  // the rolled loop's back edge (the walk: a BRA per slice)
    std::vector<V> a(static_cast<size_t>(m_frags * 4));
    for (auto& r : a) r = pair(a_kc);
    for (int fn = 0; fn < n_frags; ++fn) {
      pair(b_kc);
      const V b1 = pair(b_kc);
      for (int fm = 0; fm < m_frags; ++fm) {
        V& last = acc.at(fm, fn, n_frags);
        last = b.mma(last, a[static_cast<size_t>(fm * 4 + 3)], b1);
      }
    }
  }
}

// expf (no fast math) of an element that may be -inf: the FSETP and the
// branch around it, the range reduction (FADD x - m, FFMA.SAT, FFMA.RM, FADD,
// 2 FFMA), the exponent shift (IMAD.SHL), MUFU.EX2 and the final FMUL; the two
// constants are IMAD.MOVs.
V emit_fa1_expf(ProgramBuilder& b, V x, V m) {
  b.alu(x);
  b.guarded_branch(false);  // BSSY, the branch (x finite: falls through), BSYNC
  b.repeat(Pipe::fma, 2);
  V r = b.fma(x, m);
  V t = b.fma(b.fma(r));
  const V f = b.fma(t);
  const V sh = b.fma(t);
  t = b.fma(b.fma(r, f));
  return b.fma(b.mufu(t), sh);
}

// x / y in full precision: MUFU.RCP, FCHK (XU), the Newton refinement (5
// FFMA; the forward's also copies y by IMAD.MOV) and the branch around the
// slow path.
V emit_fa1_fdiv(ProgramBuilder& b, V x, V y, bool copy_y) {
  const V r = b.mufu(y);
  b.mufu(x);  // FCHK
  V q = b.fma(r, y);
  q = b.fma(q, r);
  q = b.fma(x, q);
  q = b.fma(q, y);
  q = b.fma(q, r);
  if (copy_y) b.fma(y);
  b.guarded_branch(false);  // BSSY, the branch (the fast path: falls through), BSYNC
  return q;
}

// The step's end (next_m_block): the loop tests and BAR of the second
// __syncthreads (44 instructions); with causal masking the key end of the
// next block takes a 64-bit division on its 32-bit fast path (I2F, MUFU.RCP,
// F2I, 11 IMAD, 16 other); with a block mask each candidate block's mask byte
// is read (LDG.U8 and 9 others) and a skipped one costs a loop turn (23 more).
// The mask is read on each candidate; the causal division only for the block taken.
void emit_fa1_next_block(ProgramBuilder& b, bool causal, double skipped_per_step, bool sparse) {
  b.barrier();
  // 31 alu, of which the walk's 5 BRA (2 guards with their BSSY/BSYNC, 3
  // jumps and the loop's back edge: taken).
  emit_cost(b, {12, 31 - 7});
  b.guarded_branch(false);
  b.guarded_branch(false);
  for (int k = 0; k < 3; ++k) b.branch(true);
  const i64 candidates = sparse ? 1 + std::llround(skipped_per_step) : 0;
  for (i64 c = 0; c < candidates; ++c) {
    emit_cost(b, {5, 4});
    b.alu(b.ldg(32, b.alu()));  // LDG.U8 of the block's mask byte
    if (c > 0) emit_cost(b, {7, 16});
  }
  if (causal) {  // n_block_end(i): only for a block the mask lets through
    b.repeat(Pipe::mufu, 3);
    emit_cost(b, {11, 16});
  }
}

// Block-mask skips: query blocks passed over per visited step ((1 - density) / density).
double fa1_skips_per_step(const AttentionTiles& t) {
  if (t.mask.active == nullptr || t.mask.m_blocks <= 0 || t.mask.n_blocks <= 0) return 0;
  i64 active = 0;
  const i64 cells = t.mask.m_blocks * t.mask.n_blocks;
  for (i64 k = 0; k < cells; ++k) active += t.mask.active[k] != 0;
  return active > 0 ? static_cast<double>(cells - active) / static_cast<double>(active) : 0;
}

// Step features shared by the two passes.
struct Fa1Step {
  int d, br, bc;
  i64 elem;
  bool masked;       // the element mask (causal diagonal or ragged block)
  bool causal;       // every step tests the diagonal and divides for the next block's key end
  bool sparse;       // a block mask
  double skips;      // query blocks skipped per step (block mask)
  // Of a masked step's elements: the share that runs the diagonal test and
  // the share that stays visible (the others skip the exponential).
  double tested = 0, visible = 1;
  Fa1Step with_mask(const AttentionTiles& t, int warps_m, int warps_n) const;
};

// The element shares of the masked steps a head visits, from the kernels' own
// test: an element of column c < cols_in(j) is tested against the diagonal in
// a tile that crosses it and is visible where c0 + c < key_end_for_row(row).
// A warp issues a branch's body when any of its lanes takes it: per element
// slot of a warp's m16n8 fragments (rows g, g + 8 and columns 2t, 2t + 1 over
// the lanes), the lowest column and the highest row decide.
Fa1Step Fa1Step::with_mask(const AttentionTiles& t, int warps_m, int warps_n) const {
  Fa1Step m = *this;
  m.masked = true;
  const i64 tm = br / warps_m, tn = bc / warps_n;
  i64 slots = 0, tested_n = 0, visible_n = 0;
  for (i64 i = 0; i < t.m_blocks(); ++i)
    for (i64 j = 0; j < t.n_blocks(); ++j) {
      if (!t.is_active(i, j) || !t.needs_element_mask(i, j)) continue;
      const bool diag = t.crosses_diagonal(i, j);
      const i64 cols = t.cols_in(j), c0 = t.col_begin(j), r0 = t.row_begin(i);
      for (i64 w = 0; w < i64{warps_m} * warps_n; ++w)
        for (i64 r = 0; r < tm; r += 8)      // the row halves of the warp's fragments
          for (i64 c = 0; c < tn; c += 8)    // its n8 tiles
            for (i64 odd = 0; odd < 2; ++odd) {  // the element pair's columns
              const i64 col = (w % warps_n) * tn + c + odd, row = (w / warps_n) * tm + r + 7;
              ++slots;
              if (col >= cols) continue;
              tested_n += diag ? 1 : 0;
              visible_n += !diag || c0 + col < t.key_end_for_row(r0 + row) ? 1 : 0;
            }
    }
  if (slots > 0) {
    m.tested = static_cast<double>(tested_n) / static_cast<double>(slots);
    m.visible = static_cast<double>(visible_n) / static_cast<double>(slots);
  }
  return m;
}

// Whether element k takes a path that a share of the elements takes (spread
// evenly: round(n share) of n elements).
bool fa1_takes(int k, double share) { return std::llround((k + 1) * share) > std::llround(k * share); }

// FlashAttention (v1) forward (kernels/fa1/fa1_forward.cu): BR/16 warps (<= 8),
// each owning 16 whole rows; loads are synchronous (ld.global.cg into
// registers, then shared memory). Walked: 2115 instructions per warp and
// step at d64 64x64 (head 75, Q_i 112, O_i 112, l_i m_i 24.5, S 171,
// scale/mask/max 278, exp/sum 558, rescale factors 125, P V and O_i 465,
// O_i store 120, l_i m_i store 30.5, next block 44).
WarpProgram fa1_forward_step(const Fa1Step& s) {
  const int d = s.d, br = s.br, bc = s.bc;
  const i64 warps = Fa1ForwardSchedule::warps_for(br), threads = 32 * warps;
  const int fn = bc / 8, fo = d / 8, elems = fn * 4;
  ProgramBuilder b("fa1_fwd d" + std::to_string(d) + " " + std::to_string(br) + "x" + std::to_string(bc) +
                   (s.masked ? " masked" : ""));
  b.region("head");
  emit_cost(b, {27, 48});  // the step's indices and 64-bit tile bases
  b.region("Q_i load");
  emit_sync_tile_load(b, br, d, s.elem, threads);  // Q_i
  b.region("O_i load");
  emit_sync_tile_load(b, br, d, s.elem, threads);  // O_i
  b.region("l_i m_i load");
  const double rows_share = row_warp_share(br, threads);
  // l_i, m_i (__ldcg), one row per thread: 47 instructions (9 IMAD, 2 LDG,
  // 2 STS) in the warps that hold rows, 2 in the others.
  emit_cost(b, share_of(Cost{9, 34 - 2}, rows_share));
  emit_cost(b, share_of(Cost{0, 2}, 1 - rows_share));
  for (i64 k = 0; k < share_of(2, rows_share); ++k) b.sts(128, b.ldg(128, b.alu()));
  b.barrier();
  b.region("S = Q K^T");
  b.alu();  // WARPSYNC
  // S = Q K^T (warp_mma, both operands k-contiguous): accumulators cleared
  // by CS2R, two registers each.
  b.fma();
  b.repeat(Pipe::alu, 2 * fn);
  Fragments sacc(1, fn);
  emit_pair_gemm(b, sacc, 1, fn, d, true, true, {3, 7});
  // Scale, mask (a branch around the diagonal test per element), row max.
  b.region("scale, mask, max");
  emit_cost(b, {6, 0});
  if (s.causal) emit_cost(b, {6, 27});  // crosses_diagonal(i, j)
  V m[2] = {kNone, kNone};
  std::vector<V> x;
  for (int k = 0; k < elems; ++k) {
    V v = b.fma(sacc.last[static_cast<size_t>(k / 4)]);  // * scale
    b.guarded_branch(false);                              // the guard (in bounds: falls through)
    b.repeat(Pipe::alu, k % 2 == 0 ? 2 : 3);              // the bound test
    if (s.masked && fa1_takes(k, s.tested)) emit_cost(b, {3, 19});  // key_end_for_row, the compare
    v = b.alu(v);                                         // FSEL -inf
    x.push_back(v);
    m[k % 4 / 2] = b.alu(m[k % 4 / 2], v);  // FMNMX
  }
  for (auto& mm : m) mm = emit_quad_reduce(b, mm, Pipe::alu);
  // P~ = exp(S - m~) where visible (a branch per element), row sums.
  b.region("exp, sum");
  emit_cost(b, {20, 9});
  V l[2] = {kNone, kNone};
  std::vector<V> p;
  for (int k = 0; k < elems; ++k) {
    // A masked element (-inf) branches around the exponential.
    V e;
    if (fa1_takes(k, s.visible)) {
      e = emit_fa1_expf(b, x[static_cast<size_t>(k)], m[k % 4 / 2]);
    } else {
      b.reconverge();
      b.branch(true);
      b.reconverge();
      e = b.alu(x[static_cast<size_t>(k)]);
    }
    p.push_back(e);
    l[k % 4 / 2] = b.fma(l[k % 4 / 2], e);
  }
  for (auto& ll : l) ll = emit_quad_reduce(b, ll, Pipe::fma);
  // m_new, l_new and the two rescale factors per row half.
  b.region("rescale factors");
  V scale_o[2], scale_p[2];
  emit_cost(b, {6, 4});
  for (int r = 0; r < 2; ++r) {
    const V mo = b.lds(128), lo = b.lds(128);
    const V mn = b.alu(mo, m[r]);
    const V ea = emit_fa1_expf(b, mo, mn), eb = emit_fa1_expf(b, m[r], mn);
    const V ln = b.fma(b.fma(ea, lo), eb, l[r]);
    scale_o[r] = emit_fa1_fdiv(b, b.fma(ea, lo), ln, true);
    scale_p[r] = emit_fa1_fdiv(b, eb, ln, true);
  }
  b.sts(128, scale_o[0]);  // l_i, m_i of the quad's first lane
  b.sts(128, scale_p[0]);
  b.sts(128, scale_o[1]);
  b.sts(128, scale_p[1]);
  b.region("P V");
  // P V: P packed to the data type (F2FP) as A fragments; B = V by 16-bit
  // pairs (two LDS.U16 and a PRMT each).
  std::vector<V> a_frag;
  for (size_t k = 0; k + 1 < p.size(); k += 2) a_frag.push_back(b.fma(p[k], p[k + 1]));
  emit_cost(b, {5, 23});
  Fragments o(1, fo);
  for (int kk = 0; kk < bc / 16; ++kk) {
    const V a = a_frag[static_cast<size_t>(kk * 4 + 3) % a_frag.size()];
    for (int f = 0; f < fo; ++f) {
      b.alu(b.lds(64), b.lds(64));
      const V b1 = b.alu(b.lds(64), b.lds(64));
      V& last = o.at(0, f, fo);
      last = b.mma(last, a, b1);
    }
  }
  b.region("O_i update");
  // O_i update in shared memory, element by element: LDS.U16, HADD2.F32,
  // FMUL, FFMA, F2FP, STS.U16.
  for (int k = 0; k < fo * 4; ++k) {
    const V old = b.fma(b.lds(64));
    const V v = b.fma(b.fma(old, scale_o[k % 4 / 2]), scale_p[k % 4 / 2], o.last[static_cast<size_t>(k / 4)]);
    b.sts(64, b.fma(v));
  }
  b.barrier();
  b.region("O_i store");
  emit_sync_tile_store(b, br, d, s.elem, threads);  // O_i
  b.region("l_i m_i store, next block");
  // l_i, m_i back: 55 instructions (2 LDS, 2 STG) where rows are held, 6 elsewhere.
  emit_cost(b, share_of(Cost{6, 45 - 2}, rows_share));
  emit_cost(b, share_of(Cost{0, 6}, 1 - rows_share));
  for (i64 k = 0; k < share_of(2, rows_share); ++k) b.stg(b.lds(128, b.alu()));
  emit_fa1_next_block(b, s.causal, s.skips, s.sparse);
  return b.take();
}

// FA1's outer step: K_j, V_j into shared memory, and the walk to the key
// block's first query block (425 instructions at d64 64x64 besides the two
// copies: 64-bit divisions of skip_empty_columns and first_m_block, an LDL).
WarpProgram fa1_outer_load(int d, int bc, i64 elem, i64 threads, const char* name) {
  ProgramBuilder b(name);
  emit_cost(b, {65, 131});
  b.repeat(Pipe::mufu, 3);
  b.ldg(256, b.alu());  // LDL of a spilled 64-bit value
  emit_sync_tile_load(b, bc, d, elem, threads);
  emit_sync_tile_load(b, bc, d, elem, threads);
  return b.take();
}

// Initialisation in global memory by 16-byte stores: `bytes_2d` in the row
// loops of head_dim tiles (O, dK, dV: 28 IMAD and 51 other per 4 chunks,
// fa1_forward's loop at 0x980) and `bytes_1d` in flat loops (l, m, dQaccum:
// about 2 instructions per store).
WarpProgram global_fill(i64 bytes_2d, i64 bytes_1d, i64 threads, const char* name) {
  ProgramBuilder b(name);
  for (i64 k = 0; k < ceil_div(bytes_2d / 16, threads); ++k) {
    emit_cost(b, {7, 12});
    b.stg(kNone, b.alu());
  }
  for (i64 k = 0; k < ceil_div(bytes_1d / 16, threads); ++k) b.stg(kNone, b.alu(b.fma()));
  return b.take();
}

// FlashAttention (v1) backward (kernels/fa1/fa1_backward.cu): 8 warps.
// Walked: 1934.5 instructions per warp and step at d64 64x64 (head 19, Q_i
// O_i dO_i 144, dQaccum_i 104, l_i m_i 9.75, D_i 70.75, S 101, P 553, P
// staged 26, dP 100, dS 53, dV 197, dK 205, dQ 164, dQaccum update 54, its
// store 89, next block 44).
WarpProgram fa1_backward_step(const Fa1Step& s) {
  const int d = s.d, br = s.br, bc = s.bc;
  constexpr int kWarps = static_cast<int>(Fa1BackwardSchedule::kWarps);
  const i64 threads = 32 * kWarps;
  auto grid = [&](int m, int n, int& fm, int& fn) {
    const int wm = std::max(1, rows_first_warps_m(m, kWarps));
    fm = std::max(1, m / wm / 16);
    fn = std::max(1, n / std::max(1, kWarps / wm) / 8);
  };
  int s_fm, s_fn, kv_fm, kv_fn, q_fm, q_fn;
  grid(br, bc, s_fm, s_fn);
  grid(bc, d, kv_fm, kv_fn);
  grid(br, d, q_fm, q_fn);
  const int s_elems = s_fm * s_fn * 4, s_pairs = s_fm * s_fn * 2;
  constexpr Cost kSlice{5, 4};
  ProgramBuilder b("fa1_bwd d" + std::to_string(d) + " " + std::to_string(br) + "x" + std::to_string(bc) +
                   (s.masked ? " masked" : ""));
  emit_cost(b, {3, 16});
  emit_sync_tile_load(b, br, d, s.elem, threads);  // Q_i
  emit_sync_tile_load(b, br, d, s.elem, threads);  // O_i
  emit_sync_tile_load(b, br, d, s.elem, threads);  // dO_i
  emit_sync_tile_load(b, br, d, 4, threads);       // dQaccum_i (fp32)
  // l_i, m_i: 30 instructions (5 IMAD, 2 LDG, 2 STS) where rows are held, 3 elsewhere.
  const double rows_share = row_warp_share(br, threads);
  emit_cost(b, share_of(Cost{5, 21 - 2}, rows_share));
  emit_cost(b, share_of(Cost{0, 3}, 1 - rows_share));
  for (i64 k = 0; k < share_of(2, rows_share); ++k) b.sts(128, b.ldg(128, b.alu()));
  b.barrier();
  emit_cost(b, {1, 4});
  // D_i = rowsum(dO_i o O_i): a thread per row, d FFMAs over fp16 pairs
  // (LDS.64: four elements of each tile per load, HADD2.F32 per element;
  // 231 instructions at d = 64 in a warp that holds rows).
  {
    V dot = kNone;
    const i64 quads = share_of(d / 4, rows_share);
    for (i64 c = 0; c < quads; ++c) {
      const V o4 = b.lds(256), d4 = b.lds(256);
      for (int e = 0; e < 4; ++e) dot = b.fma(b.fma(o4), b.fma(d4), dot);
    }
    emit_cost(b, share_of(Cost{3, 3}, rows_share));
    if (share_of(1, rows_share) > 0) b.sts(128, dot);
  }
  b.repeat(Pipe::alu, s_pairs);  // S cleared (CS2R)
  Fragments sa(s_fm, s_fn);
  emit_pair_gemm(b, sa, s_fm, s_fn, d, true, true, kSlice);  // S
  // P = exp(scale S - m) / l where visible: per element the diagonal guard,
  // LDS of m, the exponential and a division (MUFU.EX2, MUFU.RCP, FCHK).
  emit_cost(b, {0, 12});
  if (s.causal) emit_cost(b, {6, 24});
  const V lr[2] = {b.lds(128), b.lds(128)};
  std::vector<V> p;
  for (int k = 0; k < s_elems; ++k) {
    const bool visible = fa1_takes(k, s.visible);
    b.guarded_branch(!visible);  // the diagonal guard: a masked element skips the rest
    b.repeat(Pipe::alu, 4);      // FSETP of l, ULDC, the bound test
    if (s.masked && fa1_takes(k, s.tested)) emit_cost(b, {3, 19});
    const V zero = b.fma();  // the masked value 0 (IMAD.MOV)
    if (!visible) {
      p.push_back(zero);
      continue;
    }
    const V mr = b.lds(128);
    const V e = emit_fa1_expf(b, sa.last[static_cast<size_t>(k / 4)], mr);
    p.push_back(emit_fa1_fdiv(b, e, lr[k % 4 / 2], false));
  }
  // P staged in shared memory (F2FP, STS per pair); dP's accumulators cleared.
  emit_cost(b, {3, s_pairs});
  for (size_t k = 0; k + 1 < p.size(); k += 2) b.sts(128, b.fma(p[k], p[k + 1]));
  Fragments dp(s_fm, s_fn);
  emit_pair_gemm(b, dp, s_fm, s_fn, d, true, true, kSlice);  // dP = dO V^T
  b.barrier();
  // dS = P o (dP - D_i): FADD, FMUL per element; staged like P.
  b.fma();
  std::vector<V> dsv;
  std::vector<V> drow(static_cast<size_t>(s_fm * 2));
  for (auto& r : drow) r = b.lds(128);
  for (int k = 0; k < s_elems; ++k)
    dsv.push_back(b.fma(p[static_cast<size_t>(k)],
                        b.fma(dp.last[static_cast<size_t>(k / 4)], drow[static_cast<size_t>(k / 2) % drow.size()])));
  for (size_t k = 0; k + 1 < dsv.size(); k += 2) b.sts(128, b.fma(dsv[k], dsv[k + 1]));
  b.barrier();
  Fragments dv(kv_fm, kv_fn), dk(kv_fm, kv_fn), dq(q_fm, q_fn);
  emit_pair_gemm(b, dv, kv_fm, kv_fn, br, false, false, kSlice);  // dV += P^T dO
  b.repeat(Pipe::alu, 2);                                          // dQ's accumulators (the rest start from RZ)
  emit_pair_gemm(b, dk, kv_fm, kv_fn, br, false, false, kSlice);  // dK += dS^T Q
  emit_pair_gemm(b, dq, q_fm, q_fn, bc, true, false, kSlice);     // dQ = dS K
  // dQ_i += scale dQ in shared memory, element by element (fp32).
  emit_cost(b, {1, 4});
  for (int k = 0; k < q_fm * q_fn * 4; ++k) b.sts(128, b.fma(dq.last[static_cast<size_t>(k / 4)], b.lds(128)));
  b.barrier();
  emit_sync_tile_store(b, br, d, 4, threads);  // dQaccum_i back, float4 chunks
  emit_fa1_next_block(b, s.causal, s.skips, s.sparse);
  return b.take();
}

// After a key block's inner loops: dK_j (times scale), dV_j staged through
// the K_j, V_j tiles (FMUL, F2FP, STS per pair), then stored.
WarpProgram fa1_backward_outer_store(int d, int bc, i64 elem) {
  constexpr int kWarps = static_cast<int>(Fa1BackwardSchedule::kWarps);
  const int wm = std::max(1, rows_first_warps_m(bc, kWarps));
  const int fm = std::max(1, bc / wm / 16), fn = std::max(1, d / std::max(1, kWarps / wm) / 8);
  ProgramBuilder b("fa1_bwd dK dV");
  b.barrier();
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < fm * fn * 2; ++k) b.sts(128, b.fma(b.fma(), b.fma()), b.alu());
  b.barrier();
  emit_sync_tile_store(b, bc, d, elem, 32 * kWarps);
  emit_sync_tile_store(b, bc, d, elem, 32 * kWarps);
  b.barrier();
  return b.take();
}

// dQaccum -> dQ (the kernel's last loop; 0x14050 in the d64 listing): per 8
// elements two LDG.128, four F2FP, four 4-byte stores, ~10 IMAD and 19 others.
WarpProgram fa1_backward_convert(i64 seq_q, int d, i64 threads) {
  ProgramBuilder b("fa1_bwd dQ");
  const i64 per_thread = ceil_div(seq_q * d / 8, threads);
  for (i64 k = 0; k < per_thread; ++k) {
    emit_cost(b, {10, 18});
    const V lo = b.ldg(512, b.alu()), hi = b.ldg(512);
    for (int h = 0; h < 4; ++h) b.stg(b.fma(h < 2 ? lo : hi));
  }
  return b.take();
}

void put(KernelPrograms& out, int id, WarpProgram p, int load_rounds = 0) {
  if (out.programs.size() <= static_cast<size_t>(id)) out.programs.resize(static_cast<size_t>(id) + 1);
  out.programs[static_cast<size_t>(id)] = std::move(p);
  if (out.load_rounds.size() <= static_cast<size_t>(id)) out.load_rounds.resize(static_cast<size_t>(id) + 1, 0);
  out.load_rounds[static_cast<size_t>(id)] = load_rounds;
}

// standard-eager's elementwise kernels (kernels/standard/elementwise.cu): per
// thread, 16-byte vectors of the data type (1-byte tensors: the same 8
// elements), four loaded before any is used; the per-element operations; a
// store per output. Padded rows (score_layout.h) place each vector by a
// multiply-shift division: IMAD.HI, SHF and two IMADs.
WarpProgram elementwise_program(const KernelPlan& k, i64 elem) {
  const auto& e = k.as<ElementwisePlan>();
  const bool padded = score_row_pitch(e.s.seq_k) != e.s.seq_k;
  const i64 per_vector = 16 / elem;
  const i64 vectors = ceil_div(ceil_div(e.s.rows_per_cta() * e.s.seq_k, per_vector), RowElementwiseSchedule::kThreads);
  ProgramBuilder b(k.name);
  b.repeat(Pipe::alu, 8);  // offsets (64-bit), bounds
  for (i64 v = 0; v < vectors; v += 4) {
    std::vector<std::vector<V>> batch;  // the inputs of each vector of the unrolled batch
    for (i64 u = v; u < std::min(vectors, v + 4); ++u) {
      std::vector<V> in;
      if (padded) b.repeat(Pipe::alu, 4);
      for (int t = 0; t < e.inputs; ++t) {
        const TensorId id = e.in[static_cast<size_t>(t)];
        const bool byte_tensor = id == TensorId::Z || id == TensorId::Mask;
        in.push_back(b.ldg(static_cast<std::int32_t>(32 * (byte_tensor ? per_vector : 16)), b.alu()));
      }
      batch.push_back(std::move(in));
    }
    for (const auto& in : batch) {
      V x = in[0];
      for (size_t t = 1; t < in.size(); ++t) x = b.alu(x, in[t]);
      for (i64 op = 0; op < e.fp32_ops_per_element; ++op) x = b.fma(x);  // one element's chain; the others beside it
      b.repeat(Pipe::fma, (per_vector - 1) * e.fp32_ops_per_element);
      for (int o = 0; o < e.outputs; ++o) b.stg(x, b.alu());
    }
    b.repeat(Pipe::alu, 3);  // loop control
  }
  return b.take();
}

}  // namespace

KernelPrograms warp_programs(const KernelPlan& k, i64 elem) {
  KernelPrograms out;
  out.warps = k.cta.threads / 32;
  switch (k.kind) {
    case KernelKind::fa2_fwd: {
      const auto& s = k.as<Fa2ForwardSchedule>();
      const int d = round16(s.head_dim), bm = round16(s.tiles.block_m), bn = round16(s.tiles.block_n);
      put(out, kMainStep, fa2_forward_step(d, bm, bn, elem, false, false));
      put(out, kMaskedStep, fa2_forward_step(d, bm, bn, elem, true, false));
      put(out, kFirstStep, fa2_forward_step(d, bm, bn, elem, false, true));
      put(out, kFirstMaskedStep, fa2_forward_step(d, bm, bn, elem, true, true));
      put(out, kEpilogue, fa2_forward_epilogue(d, bm, bn, elem, s.tiles.causal, false));
      put(out, kMaskedEpilogue, fa2_forward_epilogue(d, bm, bn, elem, s.tiles.causal, true));
      out.tensor = true;
      break;
    }
    case KernelKind::fa2_bwd_main: {
      const auto& s = k.as<Fa2BackwardSchedule>();
      const int d = round16(s.head_dim), bm = round16(s.tiles.block_m), bn = round16(s.tiles.block_n);
      put(out, kMainStep, fa2_backward_step(d, bm, bn, elem, false));
      put(out, kMaskedStep, fa2_backward_step(d, bm, bn, elem, true));
      put(out, kEpilogue, fa2_backward_epilogue(d, bm, bn, elem));
      put(out, kPrologue, fa2_backward_prologue(d, bm, bn));
      out.tensor = true;
      break;
    }
    case KernelKind::fa2_bwd_preprocess:
    case KernelKind::fa2_bwd_convert_dq:
      {
        const auto& rs = k.as<RowBlockSchedule>();
        put(out, kMainStep, fa2_row_kernel(k.kind, rs), fa2_row_load_rounds(k.kind, rs));
        // convert_dq writes each iteration's dQ right after its loads;
        // preprocess zeroes dQaccum after its loop (its D stores are 1/64 of its bytes).
        out.stores_per_round = k.kind == KernelKind::fa2_bwd_convert_dq;
      }
      out.loads_in_program = true;
      break;
    case KernelKind::fa1_fwd:
    case KernelKind::fa1_swapped_fwd: {
      const auto& t = k.kind == KernelKind::fa1_fwd ? k.as<Fa1ForwardSchedule>().tiles
                                                    : k.as<Fa1SwappedForwardSchedule>().tiles;
      const i64 dd = k.kind == KernelKind::fa1_fwd ? k.as<Fa1ForwardSchedule>().head_dim
                                                   : k.as<Fa1SwappedForwardSchedule>().head_dim;
      const int d = round16(dd), br = round16(t.block_m), bc = round16(t.block_n);
      const bool sparse = t.mask.active != nullptr;
      // Q_i, O_i; l_i, m_i; the next block's mask byte.
      const int step_rounds = 2 * sync_tile_rounds(br, d, elem, k.cta.threads) + 1 + (sparse ? 1 : 0);
      const Fa1Step step{d, br, bc, elem, false, t.causal, sparse, fa1_skips_per_step(t)};
      put(out, kMainStep, fa1_forward_step(step), step_rounds);
      const int warps = static_cast<int>(Fa1ForwardSchedule::warps_for(br));  // S's warps: whole rows each
      put(out, kMaskedStep, fa1_forward_step(step.with_mask(t, warps, 1)), step_rounds);
      put(out, kKeyLoad, fa1_outer_load(d, bc, elem, k.cta.threads, "fa1_fwd K V"),
          2 * sync_tile_rounds(bc, d, elem, k.cta.threads));
      put(out, kPrologue, global_fill(t.seq_q * d * elem, t.seq_q * 8, k.cta.threads, "fa1_fwd init"));
      out.tensor = true;
      out.loads_in_program = true;
      break;
    }
    case KernelKind::fa1_bwd: {
      const auto& s = k.as<Fa1BackwardSchedule>();
      const int d = round16(s.head_dim), br = round16(s.tiles.block_m), bc = round16(s.tiles.block_n);
      const bool sparse = s.tiles.mask.active != nullptr;
      // Q_i, O_i, dO_i, the fp32 dQaccum_i; l_i, m_i; the next block's mask byte.
      const int step_rounds = 3 * sync_tile_rounds(br, d, elem, k.cta.threads) +
                              sync_tile_rounds(br, d, 4, k.cta.threads) + 1 + (sparse ? 1 : 0);
      const Fa1Step step{d, br, bc, elem, false, s.tiles.causal, sparse, fa1_skips_per_step(s.tiles)};
      constexpr int kWarps = static_cast<int>(Fa1BackwardSchedule::kWarps);
      const int wm = std::max(1, rows_first_warps_m(br, kWarps));  // S's warp grid (rows first)
      put(out, kMainStep, fa1_backward_step(step), step_rounds);
      put(out, kMaskedStep, fa1_backward_step(step.with_mask(s.tiles, wm, kWarps / wm)), step_rounds);
      put(out, kKeyStore, fa1_backward_outer_store(d, bc, elem));
      // Each initialisation step clears one tensor of seq rows x d (the trace's
      // steps): dK, dV in the row loop, dQaccum flat.
      const i64 key_side = s.tiles.seq_k * elem * d, accum = s.tiles.seq_q * 4 * d;
      put(out, kPrologue, key_side >= accum ? global_fill(key_side, 0, k.cta.threads, "fa1_bwd init")
                                            : global_fill(0, accum, k.cta.threads, "fa1_bwd init"));
      put(out, kFinalStep, fa1_backward_convert(s.tiles.seq_q, d, k.cta.threads),
          static_cast<int>(ceil_div(s.tiles.seq_q * d / 8, k.cta.threads)));
      put(out, kKeyLoad, fa1_outer_load(d, bc, elem, k.cta.threads, "fa1_bwd K V"),
          2 * sync_tile_rounds(bc, d, elem, k.cta.threads));
      out.tensor = true;
      out.loads_in_program = true;
      break;
    }
    case KernelKind::gemm: {
      const auto& g = k.as<GemmPlan>();
      put(out, kMainStep, gemm_chunk(g, elem));
      put(out, kEpilogue, gemm_epilogue(g, elem, false));  // a tile's C (all but the CTA's last)
      put(out, kFinalStep, gemm_epilogue(g, elem, true));  // the last tile's C and the CTA's one-time work
      out.tensor = true;
      break;
    }
    case KernelKind::gemm_wgmma: {
      const auto& g = k.as<GemmPlan>();
      put(out, kMainStep, wgmma_gemm_chunk(g));
      put(out, kEpilogue, wgmma_gemm_epilogue(g, false));
      put(out, kFinalStep, wgmma_gemm_epilogue(g, true));
      out.warps = WgmmaGemmShape::kConsumerWarps;  // the producer warp is left out (wgmma_gemm_sass)
      out.tensor = true;
      break;
    }
    case KernelKind::softmax_fwd:
    case KernelKind::softmax_bwd: {
      const auto& sp = k.as<SoftmaxPlan>();
      const bool bwd = k.kind == KernelKind::softmax_bwd;
      // The backward's column loop batches 4 columns' loads per thread (SASS: 8
      // LDG.U16 back to back); the forward's visibility test between them keeps
      // the compiler from batching: a round per column.
      const i64 cols = ceil_div(sp.s.seq_k, sp.s.threads_per_row());
      // 16-byte chunks, four (pairs) in flight
      const bool vec = bwd ? softmax_backward_vectorised(sp.s) : softmax_forward_vectorised(sp.s, sp.tiles);
      const int rounds = static_cast<int>(vec ? ceil_div(ceil_div(sp.s.seq_k / 8, sp.s.threads_per_row()), 4)
                                              : bwd ? ceil_div(cols, 4) : cols);
      put(out, kMainStep, softmax_program(sp, bwd, false), rounds);
      if (!sp.s.row_fits_on_chip()) put(out, kStatsPass, softmax_program(sp, bwd, true), rounds);
      out.loads_in_program = true;
      break;
    }
    case KernelKind::splitkv_fwd: {
      const auto& s = k.as<SplitKvSchedule>();
      const int d = round16(s.head_dim), bm = round16(s.tiles.block_m), bn = round16(s.tiles.block_n);
      put(out, kMainStep, splitkv_forward_step(d, bm, bn, elem, false));
      put(out, kMaskedStep, splitkv_forward_step(d, bm, bn, elem, true));
      put(out, kEpilogue, splitkv_forward_epilogue(d, bm));
      out.tensor = true;
      break;
    }
    case KernelKind::fa3_fwd: {
      const auto& s = k.as<Fa3ForwardSchedule>();
      const int d = static_cast<int>(s.head_dim);
      put(out, kMainStep, fa3_forward_step(d, elem, false));
      put(out, kMaskedStep, fa3_forward_step(d, elem, true));
      put(out, kEpilogue, fa3_forward_epilogue(d));
      put(out, kMaskedEpilogue, fa3_forward_epilogue(d));  // the same code after either run
      // The consumer warps run the programs; the producer warpgroup is idle
      // but for its TMA issues (see fa3_forward_step).
      out.warps = 4 * Fa3ForwardSchedule::kConsumers;
      out.tensor = true;
      break;
    }
    case KernelKind::splitkv_combine:
      put(out, kMainStep, splitkv_combine_step(), 1);
      put(out, kEpilogue, splitkv_combine_epilogue(), 0);
      out.loads_in_program = true;
      break;
    case KernelKind::elementwise: {
      const auto& e = k.as<ElementwisePlan>();
      const i64 vectors = ceil_div(ceil_div(e.s.rows_per_cta() * e.s.seq_k, 16 / elem), RowElementwiseSchedule::kThreads);
      put(out, kMainStep, elementwise_program(k, elem), static_cast<int>(ceil_div(vectors, 4)));
      out.loads_in_program = true;
      break;
    }
  }
  return out;
}

}  // namespace iosim::schedule
