#include "sim/schedule/warp_program.h"

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
    case Pipe::kCount: break;
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

}  // namespace iosim::schedule
