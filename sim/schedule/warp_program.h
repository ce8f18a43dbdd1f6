// What one warp of a kernel issues in one step of its loop nest, instruction
// by instruction: the pipe each instruction runs on and the instructions it
// waits for. The timing engine's SM model (sim/engine/sm_model.h) runs these
// programs on the four sub-partitions of an SM, for as many warps and CTAs as
// are resident, to time a step.
//
// Programs are written from each kernel's code, next to the schedule the
// kernel walks (warp_programs.cpp): the loops of its fragment products, its
// softmax's operations per element, its copies, in the order the source
// issues them (loads of the next k-slice hoisted ahead of the products, as the
// compiler does). Their instruction counts are checked against the SASS and
// Nsight Compute's instruction counters (experiments/validation), not fitted.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/hd.h"
#include "sim/schedule/local_memory.h"

namespace iosim::schedule {

// The SM pipes an instruction can occupy. Each sub-partition (SMSP) issues one
// warp instruction per cycle to one of its own pipes; shared memory (and the
// L1 behind it) is one unit per SM that the four SMSPs share.
enum class Pipe : std::uint8_t {
  tensor,  // HMMA.16816 (mma.sync m16n8k16)
  fma,     // FFMA, FADD, FMUL (full rate)
  alu,     // FMNMX, FSEL, FSETP, ISETP, LOP3, SHF, F2FP, IMAD (half rate)
  mufu,    // MUFU.EX2 / LG2 / RCP
  shfl,    // SHFL, VOTE
  smem,    // LDSM, LDS, STS: shared-memory bytes through the SM's shared port
  global,  // LDG (waits for memory), STG, RED, LDGSTS (issue only)
  barrier, // BAR.SYNC: every warp of the CTA
  // Uniform-datapath (UIADD3, ULDC, USHF, ...), branch-unit (BRA, BSSY,
  // BSYNC) and other control instructions (LDC, S2R, DEPBAR, NOP, a never
  // executed @!PT): an issue slot, no arithmetic pipe of the warp's lanes.
  uniform,
  kCount
};
inline constexpr int kPipeCount = static_cast<int>(Pipe::kCount);
const char* to_string(Pipe p);

// How an instruction uses its pipe. Everything but Hopper's asynchronous
// warpgroup MMA is `plain`: the warp waits for its pipe to accept it, and its
// result comes the pipe's latency later.
enum class Op : std::uint8_t {
  plain,
  // wgmma.mma_async (HGMMA), one per warp of the warpgroup (this warp's 16
  // rows: `flop`). The warp does not wait for the tensor pipe: the instruction
  // queues there, in order, and the warp keeps issuing (sm_model.cpp).
  wgmma,
  // wgmma.wait_group (WARPGROUP.DEPBAR): waits for its sources (the last
  // wgmma of the groups it waits for); releases the warp a cycle after issue.
  wgmma_wait,
  // Turn taking between warpgroups (FA3's ping-pong: bar.sync on this
  // warpgroup's named barrier, bar.arrive on the next one's). A warp of
  // warpgroup g (its CTA's warps in groups of 4) waits at its k-th
  // turn_wait until the previous warpgroup (g - 1, cyclically) has passed
  // the turn k times (k + 1 for g > 0: warpgroup 0 goes first); turn_pass
  // never waits. Both issue on the alu pipe (sm_model.cpp).
  turn_wait,
  turn_pass,
  // Control flow (alu pipe, as Nsight Compute counts them): a BRA whose
  // branch is taken or falls through, and the BSSY / BSYNC that bracket a
  // divergence-capable branch. Each holds the warp its measured cycles
  // (sm_pipes.branch_*) instead of the mean control-code stall.
  branch_taken,
  branch_not_taken,
  reconverge,
  // LDL / STL (global pipe, as Nsight Compute counts them) served by the L1:
  // its bytes go through the SM's shared-memory port and its result comes at
  // shared memory's latency (a store also writes through to the L2: the
  // engine sends its bytes there).
  local,
  // An LDL whose line the L1 no longer holds (schedule::local_hits): its
  // result comes at the global pipe's latency (an L2 hit); its bytes are the
  // engine's L2 requests, not the shared-memory port's.
  local_miss,
  // RED (red.global.add: global pipe, as Nsight Compute counts them): its
  // bytes go through the SM's reduction port (SmMachine::red_bytes_per_cycle,
  // the profile's sm_pipes.red_per_sm): a step is no shorter than the port's
  // drain, and the warp stalls only when that port's backlog exceeds its queue.
  reduce,
  // STG (global pipe, as Nsight Compute counts them): a warp's store, through
  // the SM's store port where the profile measures it (sm_pipes.store_*;
  // absent: its issue slot only). `store`: the lanes write contiguous bytes
  // (16 B each: 512 B, four lines); `store_fragment`: an MMA fragment written
  // out, 4 bytes per lane at row lane / 4 (8 rows x 16 B: eight lines).
  store,
  store_fragment,
  kCount
};
inline constexpr int kOpCount = static_cast<int>(Op::kCount);
const char* to_string(Op op);

struct Instr {
  static constexpr int kMaxSources = 3;
  Pipe pipe = Pipe::alu;
  Op op = Op::plain;
  std::uint8_t sources = 0;
  std::int32_t source[kMaxSources] = {-1, -1, -1};  // earlier instructions of the program it waits for
  std::int32_t bytes = 0;  // smem: bytes moved through the shared port; global: bytes loaded
  std::int32_t flop = 0;   // wgmma: this warp's FLOP (16 rows x N x 16 x 2)
};

// One warp's instructions for one step.
struct WarpProgram {
  std::string name;  // e.g. "fa2_fwd d64 128x128 unmasked"
  std::vector<Instr> code;
  // The code is written in the order the warp issues it (e.g. copied from
  // SASS), not in source order for the SM model to schedule as the compiler
  // would (sim/engine/compiler_order.h). No kernel's program sets it now;
  // tests use it to run a source order as written.
  bool issue_order_fixed = false;
  // Where each named region of the source order begins (for walks that
  // report the model's cycles per region: SmModel::walk); optional.
  std::vector<std::pair<std::int32_t, std::string>> regions;
  // The accesses of its Op::local instructions, in program order (empty: each
  // a 4-byte-per-lane access served by the L1; sim/schedule/local_memory.h).
  std::vector<LocalAccess> locals;
  bool locals_repeat = true;  // the program runs again and again (a step), not once (an epilogue)
  // For a reordered program (compiler_order): the index each instruction had
  // in the program it was reordered from; empty when written in this order.
  std::vector<std::int32_t> origin;
  // Instructions by pipe (what Nsight Compute's pipe counters see).
  std::array<i64, kPipeCount> count_by_pipe() const;
  i64 count(Pipe p) const { return count_by_pipe()[static_cast<size_t>(p)]; }
};

// Builds a program: each emitted instruction returns a handle later ones may
// wait for (kNone: no dependence).
class ProgramBuilder {
 public:
  using Value = std::int32_t;
  static constexpr Value kNone = -1;

  explicit ProgramBuilder(std::string name) { program_.name = std::move(name); }
  Value emit(Pipe pipe, Value a = kNone, Value b = kNone, Value c = kNone, std::int32_t bytes = 0);
  Value mma(Value acc, Value a, Value b) { return emit(Pipe::tensor, acc, a, b); }
  Value ldsm(Value addr = kNone) { return emit(Pipe::smem, addr, kNone, kNone, 512); }  // .x4: 32 lanes x 16 B
  Value lds(std::int32_t bytes, Value addr = kNone) { return emit(Pipe::smem, addr, kNone, kNone, bytes); }
  Value sts(std::int32_t bytes, Value data, Value addr = kNone) { return emit(Pipe::smem, data, addr, kNone, bytes); }
  Value fma(Value a = kNone, Value b = kNone, Value c = kNone) { return emit(Pipe::fma, a, b, c); }
  Value alu(Value a = kNone, Value b = kNone, Value c = kNone) { return emit(Pipe::alu, a, b, c); }
  Value mufu(Value a) { return emit(Pipe::mufu, a); }
  Value shfl(Value a) { return emit(Pipe::shfl, a); }
  Value ldg(std::int32_t bytes, Value addr = kNone) { return emit(Pipe::global, addr, kNone, kNone, bytes); }
  Value stg(Value data, Value addr = kNone) { return store(Op::store, data, addr); }
  // A store of an MMA fragment straight from its registers (Op::store_fragment).
  Value stg_fragment(Value data, Value addr = kNone) { return store(Op::store_fragment, data, addr); }
  Value cp_async(Value addr = kNone) { return emit(Pipe::global, addr); }
  Value barrier() { return emit(Pipe::barrier); }
  // One warp's part of a wgmma m64nNk16 (its 16 rows; f16/bf16 inputs, f32
  // accumulators): a = the A operand when it comes from registers (RS form),
  // desc = the instruction computing its descriptors. Accumulating into the
  // previous wgmma's registers needs no dependence: the tensor pipe runs a
  // warp's wgmmas in order.
  Value wgmma(int n, Value a = kNone, Value desc = kNone);
  // wgmma.wait_group: done once `last` (the newest wgmma it waits for) is.
  Value wgmma_wait(Value last);
  // Warpgroup turn taking (Op::turn_wait / Op::turn_pass).
  Value turn_wait();
  Value turn_pass();
  // A BRA (taken or falling through), and BSSY or BSYNC.
  Value branch(bool taken);
  Value reconverge();
  // A local-memory access (a spill or a register-indexed table), as the
  // kernel's SASS issues it (schedule::fa2_local_accesses).
  Value local_access(const LocalAccess& a);
  // The program runs once per CTA (an epilogue): its local accesses follow
  // no earlier run of their own.
  void runs_once() { program_.locals_repeat = false; }
  // red.global.add.v2.f32: 8 bytes per lane added into global memory.
  Value red(Value data, Value addr = kNone);
  // An `if` around a body as the compiler writes it where lanes may
  // disagree: BSSY, the BRA (taken: the body is skipped), BSYNC.
  void guarded_branch(bool taken) {
    reconverge();
    branch(taken);
    reconverge();
  }
  // n independent instructions of a pipe (address arithmetic, predicates, loop control).
  void repeat(Pipe pipe, i64 n) {
    for (i64 k = 0; k < n; ++k) emit(pipe);
  }
  i64 size() const { return static_cast<i64>(program_.code.size()); }
  // The instructions from here on, up to the next region, belong to `name`.
  void region(std::string name) { program_.regions.emplace_back(static_cast<std::int32_t>(size()), std::move(name)); }
  // Instructions of a pipe emitted since instruction `from` (a region of the program).
  i64 count_since(Pipe p, i64 from) const;
  WarpProgram take() { return std::move(program_); }

 private:
  Value store(Op op, Value data, Value addr) {
    const Value v = emit(Pipe::global, data, addr);
    program_.code.back().op = op;
    return v;
  }
  // An instruction with its Op (one source at most).
  Value emit_op(Pipe pipe, Op op, Value source = kNone, std::int32_t bytes = 0);
  WarpProgram program_;
};

}  // namespace iosim::schedule
