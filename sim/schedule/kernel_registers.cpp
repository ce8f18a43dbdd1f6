#include "sim/schedule/kernel_registers.h"

namespace iosim::schedule {

namespace {

struct CompiledKernel {
  KernelKind kind;
  workload::DType dtype;
  RegisterKey key;
  i64 registers;
};

using workload::DType;
constexpr CompiledKernel kCompiled[] = {
#define X(kind, dt, a, b, c, regs) {KernelKind::kind, DType::dt, {a, b, c}, regs},
#include "sim/schedule/kernel_registers.inc"
#undef X
};

}  // namespace

std::optional<i64> compiled_registers(KernelKind kind, workload::DType dtype, const RegisterKey& key) {
  for (const CompiledKernel& k : kCompiled)
    if (k.kind == kind && k.dtype == dtype && k.key == key) return k.registers;
  return std::nullopt;
}

}  // namespace iosim::schedule
