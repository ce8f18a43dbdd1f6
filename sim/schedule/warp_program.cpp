#include "sim/schedule/warp_program.h"

#include <algorithm>
#include <stdexcept>

namespace iosim::schedule {

const char* to_string(Pipe p) {
  switch (p) {
    case Pipe::tensor: return "tensor";
    case Pipe::fma: return "fma";
    case Pipe::alu: return "alu";
    case Pipe::mufu: return "mufu";
    case Pipe::shfl: return "shfl";
    case Pipe::smem: return "smem";
    case Pipe::global: return "global";
    case Pipe::barrier: return "barrier";
    case Pipe::uniform: return "uniform";
    case Pipe::kCount: break;
  }
  return "?";
}

const char* to_string(Op op) {
  switch (op) {
    case Op::plain: return "plain";
    case Op::wgmma: return "wgmma";
    case Op::wgmma_wait: return "wgmma_wait";
    case Op::turn_wait: return "turn_wait";
    case Op::turn_pass: return "turn_pass";
    case Op::branch_taken: return "branch_taken";
    case Op::branch_not_taken: return "branch_not_taken";
    case Op::reconverge: return "reconverge";
    case Op::local: return "local";
    case Op::local_miss: return "local_miss";
    case Op::reduce: return "reduce";
    case Op::store: return "store";
    case Op::store_fragment: return "store_fragment";
    case Op::kCount: break;
  }
  return "?";
}

std::array<i64, kPipeCount> WarpProgram::count_by_pipe() const {
  std::array<i64, kPipeCount> n{};
  for (const Instr& i : code) ++n[static_cast<size_t>(i.pipe)];
  return n;
}

ProgramBuilder::Value ProgramBuilder::emit(Pipe pipe, Value a, Value b, Value c, std::int32_t bytes) {
  Instr in;
  in.pipe = pipe;
  in.bytes = bytes;
  for (const Value v : {a, b, c})
    if (v != kNone) in.source[in.sources++] = v;
  program_.code.push_back(in);
  return static_cast<Value>(program_.code.size() - 1);
}

i64 ProgramBuilder::count_since(Pipe p, i64 from) const {
  i64 n = 0;
  for (size_t k = static_cast<size_t>(std::max<i64>(from, 0)); k < program_.code.size(); ++k) n += program_.code[k].pipe == p;
  return n;
}

ProgramBuilder::Value ProgramBuilder::wgmma(int n, Value a, Value desc) {
  if (n < 8 || n > 256 || n % 8 != 0) throw std::logic_error("wgmma m64nNk16: N must be 8..256 in steps of 8");
  const Value v = emit(Pipe::tensor, a, desc);
  Instr& in = program_.code.back();
  in.op = Op::wgmma;
  in.flop = 16 * n * 16 * 2;
  return v;
}

ProgramBuilder::Value ProgramBuilder::emit_op(Pipe pipe, Op op, Value source, std::int32_t bytes) {
  const Value v = emit(pipe, source, kNone, kNone, bytes);
  program_.code.back().op = op;
  return v;
}

ProgramBuilder::Value ProgramBuilder::wgmma_wait(Value last) { return emit_op(Pipe::alu, Op::wgmma_wait, last); }
ProgramBuilder::Value ProgramBuilder::turn_wait() { return emit_op(Pipe::alu, Op::turn_wait); }
ProgramBuilder::Value ProgramBuilder::turn_pass() { return emit_op(Pipe::alu, Op::turn_pass); }
ProgramBuilder::Value ProgramBuilder::branch(bool taken) {
  return emit_op(Pipe::alu, taken ? Op::branch_taken : Op::branch_not_taken);
}
ProgramBuilder::Value ProgramBuilder::reconverge() { return emit_op(Pipe::alu, Op::reconverge); }
ProgramBuilder::Value ProgramBuilder::local_access(const LocalAccess& a) {
  program_.locals.push_back(a);
  return emit_op(Pipe::global, Op::local, kNone, static_cast<std::int32_t>(a.warp_bytes()));
}
ProgramBuilder::Value ProgramBuilder::red(Value data, Value addr) {
  const Value v = emit(Pipe::global, data, addr, kNone, 256);
  program_.code.back().op = Op::reduce;
  return v;
}

}  // namespace iosim::schedule
