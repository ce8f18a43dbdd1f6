#include "sim/engine/local_traffic.h"

#include <algorithm>
#include <set>
#include <string>

#include "sim/schedule/local_memory.h"

namespace iosim::engine {

using schedule::Instr;
using schedule::LocalAccess;
using schedule::Op;
using schedule::WarpProgram;

namespace {

// Adds `source` to the first instruction from `at` on with a free source slot.
void wait_at(std::vector<Instr>& code, size_t at, std::int32_t source) {
  for (size_t j = at; j < code.size(); ++j) {
    Instr& in = code[j];
    if (in.sources < Instr::kMaxSources) {
      in.source[in.sources++] = source;
      return;
    }
  }
}

std::pair<int, int> compute_capability(const std::string& cc) {
  const size_t dot = cc.find('.');
  try {
    return {std::stoi(cc.substr(0, dot)), dot == std::string::npos ? 0 : std::stoi(cc.substr(dot + 1))};
  } catch (const std::exception&) {
    return {0, 0};
  }
}

}  // namespace

WarpProgram resolve_local_memory(const WarpProgram& program, i64 resident_warps, i64 l1_bytes, LocalTraffic& traffic) {
  traffic = {};
  WarpProgram out = program;
  if (program.locals.empty()) return out;
  const std::vector<bool> hit = schedule::local_hits(program.locals, resident_warps, l1_bytes, program.locals_repeat);
  std::set<std::int32_t> lines;
  size_t k = 0;  // the next local access
  for (size_t i = 0; i < out.code.size() && k < program.locals.size(); ++i) {
    Instr& in = out.code[i];
    if (in.op != Op::local) continue;
    const LocalAccess& a = program.locals[k];
    for (std::int32_t l = 0; l < a.lines(); ++l) lines.insert(a.word + l);
    if (!a.is_load()) {
      traffic.store_bytes += a.warp_bytes();
    } else {
      traffic.load_bytes += a.warp_bytes();
      if (!hit[k]) {
        in.op = Op::local_miss;
        traffic.miss_bytes += a.warp_bytes();
      }
      if (a.use_distance > 0) wait_at(out.code, i + static_cast<size_t>(a.use_distance), static_cast<std::int32_t>(i));
    }
    ++k;
  }
  traffic.frame_bytes = static_cast<i64>(lines.size()) * 128;
  return out;
}

LocalMemory local_memory(const std::shared_ptr<const schedule::KernelPrograms>& programs,
                         const profile::HardwareProfile& p, i64 ctas_per_sm, i64 smem_per_cta) {
  LocalMemory m;
  m.programs = programs;
  if (!programs) return m;
  const bool any = std::any_of(programs->programs.begin(), programs->programs.end(),
                               [](const WarpProgram& w) { return !w.locals.empty(); });
  if (!any) return m;
  const auto [major, minor] = compute_capability(p.compute_capability);
  m.l1_bytes = schedule::l1_bytes_beside_smem(p.l1_per_sm_bytes, ctas_per_sm * smem_per_cta, major, minor);
  const i64 warps = std::max<i64>(1, programs->warps);
  auto resolved = std::make_shared<schedule::KernelPrograms>(*programs);
  m.traffic.resize(resolved->programs.size());
  for (size_t id = 0; id < resolved->programs.size(); ++id) {
    WarpProgram& w = resolved->programs[id];
    w = resolve_local_memory(w, warps * ctas_per_sm, m.l1_bytes, m.traffic[id]);
    m.frame_bytes = std::max(m.frame_bytes, m.traffic[id].frame_bytes * warps);
  }
  m.programs = resolved;
  return m;
}

}  // namespace iosim::engine
