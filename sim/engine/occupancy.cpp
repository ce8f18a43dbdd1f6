#include "sim/engine/occupancy.h"

#include <algorithm>

#include "sim/common/error.h"

namespace iosim::engine {

namespace {

constexpr i64 kWarpSize = 32;
constexpr i64 kRegisterAllocationUnit = 256;  // registers, per warp (occupancy calculator, cc >= 5.0)
constexpr i64 kSmemReservePerCta = 1024;      // cc >= 8.0: the runtime keeps 1 KiB per block

int cc_major(const std::string& cc) {
  const auto dot = cc.find('.');
  try {
    return std::stoi(cc.substr(0, dot));
  } catch (...) {
    return 0;
  }
}

}  // namespace

Occupancy compute_occupancy(const profile::HardwareProfile& p, const trace::CtaResources& cta, i64 total_ctas,
                            const std::string& kernel_name) {
  auto bad = [&](const std::string& what) {
    throw InputError("kernel '" + kernel_name + "' cannot run on " + p.name + ": " + what);
  };
  if (cta.threads < 1) bad("a CTA needs at least one thread");
  if (cta.smem_bytes > p.smem_per_block_bytes)
    bad("a CTA uses " + std::to_string(cta.smem_bytes) + " B of shared memory; at most " +
        std::to_string(p.smem_per_block_bytes) + " B per block");
  if (cta.regs_per_thread > p.max_registers_per_thread)
    bad(std::to_string(cta.regs_per_thread) + " registers per thread; at most " +
        std::to_string(p.max_registers_per_thread));
  if (cta.threads > p.max_threads_per_sm)
    bad(std::to_string(cta.threads) + " threads per CTA; at most " + std::to_string(p.max_threads_per_sm) + " per SM");

  Occupancy o;
  o.total_ctas = total_ctas;
  const i64 warps = ceil_div(cta.threads, kWarpSize);
  o.smem_per_cta = cta.smem_bytes + (cc_major(p.compute_capability) >= 8 ? kSmemReservePerCta : 0);
  const i64 regs_per_warp = ceil_div(cta.regs_per_thread * kWarpSize, kRegisterAllocationUnit) * kRegisterAllocationUnit;
  o.regs_per_cta = regs_per_warp * warps;
  o.by_smem = o.smem_per_cta > 0 ? p.smem_per_sm_bytes / o.smem_per_cta : p.max_ctas_per_sm;
  o.by_registers = o.regs_per_cta > 0 ? p.registers_per_sm / o.regs_per_cta : p.max_ctas_per_sm;
  o.by_threads = p.max_threads_per_sm / cta.threads;
  o.by_warps = p.max_warps_per_sm / warps;
  o.by_max_ctas = p.max_ctas_per_sm;
  // First limit wins ties, in this order.
  const std::pair<i64, const char*> limits[] = {{o.by_smem, "shared_memory"},
                                                {o.by_registers, "registers"},
                                                {o.by_warps, "warps"},
                                                {o.by_threads, "threads"},
                                                {o.by_max_ctas, "max_ctas"}};
  o.ctas_per_sm = limits[0].first;
  o.limiter = limits[0].second;
  for (const auto& [n, name] : limits)
    if (n < o.ctas_per_sm) {
      o.ctas_per_sm = n;
      o.limiter = name;
    }
  if (o.ctas_per_sm < 1)
    bad("no CTA fits on an SM (limited by " + o.limiter + ": " + std::to_string(o.smem_per_cta) + " B shared memory, " +
        std::to_string(o.regs_per_cta) + " registers per CTA)");
  o.slots = o.ctas_per_sm * p.sm_count;
  o.waves = ceil_div(total_ctas, o.slots);
  o.waves_exact = static_cast<double>(total_ctas) / static_cast<double>(o.slots);
  return o;
}

}  // namespace iosim::engine
