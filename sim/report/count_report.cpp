#include "sim/report/count_report.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace iosim::report {

using trace::TensorId;

std::string format_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000.0 && u < 5) {
    b /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.3f %s", b, units[u]);
  return buf;
}

std::string format_count(double v) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::string describe_problem(const workload::Problem& p) {
  std::ostringstream o;
  o << "B=" << p.batch << " H=" << p.heads << " Hkv=" << p.kv_heads << " Nq=" << p.seq_q << " Nk=" << p.seq_k
    << " d=" << p.head_dim << " " << workload::to_string(p.dtype) << " " << workload::to_string(p.layout)
    << (p.causal ? " causal" : "");
  switch (p.sparsity.kind) {
    case workload::SparsitySpec::Kind::dense: break;
    case workload::SparsitySpec::Kind::random_density:
      o << " block-sparse(density " << p.sparsity.density << ", seed " << p.sparsity.seed << ")";
      break;
    case workload::SparsitySpec::Kind::file: o << " block-sparse(" << p.sparsity.file << ")"; break;
  }
  return o.str();
}

KernelNote kernel_note(const trace::AlgorithmTrace& run) {
  KernelNote n{trace::kernel_availability(run), std::nullopt, {}};
  if (!n.availability.full)
    n.nearest = trace::nearest_kernel_tiling(run.problem, run.algorithm, run.pass, run.tiling.block_m,
                                             run.tiling.block_n, run.gemm, run.sram_limit_bytes, n.why_no_nearest);
  return n;
}

std::string KernelNote::text(const trace::AlgorithmTrace& run) const {
  const auto& a = availability;
  if (a.full) return a.ci ? "compiled (CI and full menu)" : "compiled (full menu only)";
  std::string s = "none compiled: " + a.reason;
  if (!nearest) return why_no_nearest.empty() || why_no_nearest == a.reason ? s : s + "; " + why_no_nearest;
  const std::string tile = workload::is_standard(run.algorithm)
                               ? "GEMM tile " + std::to_string(nearest->gemm.m) + "x" + std::to_string(nearest->gemm.n) +
                                     "x" + std::to_string(nearest->gemm.k)
                               : std::to_string(nearest->block_m) + " x " + std::to_string(nearest->block_n);
  return s + "; nearest compiled: " + tile + (nearest->in_ci_menu ? " (CI menu" : " (full menu") +
         (run.tiling.sram_elements_m > 0 ? "; --tiles kernel)" : ")");
}

void write_kernel_note(JsonWriter& j, const KernelNote& n) {
  j.key("kernel").begin_object();
  j.field("compiled", n.availability.full);
  if (n.availability.full) j.field("menu", n.availability.ci ? "ci" : "full"); else j.key("menu").null();
  if (n.availability.full) j.key("reason").null(); else j.field("reason", n.availability.reason);
  if (n.nearest) {
    j.key("nearest").begin_object().field("block_m", n.nearest->block_m).field("block_n", n.nearest->block_n);
    j.key("gemm").begin_object().field("m", n.nearest->gemm.m).field("n", n.nearest->gemm.n).field("k", n.nearest->gemm.k)
        .end_object();
    j.field("menu", n.nearest->in_ci_menu ? "ci" : "full").end_object();
  } else {
    j.key("nearest").null();
  }
  j.end_object();
}

void write_io_fields(JsonWriter& j, const count::IoTotals& io) {
  j.key("global").begin_object();
  j.field("read_bytes", io.read_bytes).field("write_bytes", io.write_bytes);
  j.field("total_bytes", io.total_bytes()).field("reduce_bytes", io.reduce_bytes);
  j.key("by_tensor").begin_object();
  for (int t = 0; t < trace::kTensorCount; ++t) {
    const auto& tb = io.by_tensor[static_cast<size_t>(t)];
    if (tb.read_bytes == 0 && tb.write_bytes == 0) continue;
    j.key(trace::tensor_name(static_cast<TensorId>(t))).begin_object();
    j.field("read_bytes", tb.read_bytes).field("write_bytes", tb.write_bytes).end_object();
  }
  j.end_object().end_object();
}

namespace {
void write_kernel_shape(JsonWriter& j, const std::string& name, workload::Pass pass, const schedule::Dim3& grid,
                        const trace::CtaResources& cta, i64 steps) {
  j.field("name", name).field("pass", workload::to_string(pass));
  j.key("grid").begin_array().value(grid.x).value(grid.y).value(grid.z).end_array();
  j.field("ctas", grid.count()).field("steps", steps);
  j.key("tiling").begin_object().field("sram_bytes", cta.smem_bytes).field("threads", cta.threads)
      .field("regs_per_thread", cta.regs_per_thread).end_object();
}
}  // namespace

void write_kernel_plan_fields(JsonWriter& j, const trace::KernelEntry& k, i64 steps) {
  write_kernel_shape(j, k.kernel->name(), k.pass, k.kernel->grid(), k.kernel->resources(), steps);
}

void write_kernel_count_fields(JsonWriter& j, const count::KernelCount& k) {
  write_kernel_shape(j, k.name, k.pass, k.grid, k.cta, k.io.steps);
  j.field("flops", k.io.tensor_flops);
  j.key("nonmatmul").begin_object().field("fp32_ops", k.io.fp32_ops).field("sfu_ops", k.io.sfu_ops).end_object();
  write_io_fields(j, k.io);
}

void write_count_fields(JsonWriter& j, const profile::HardwareProfile& prof, const trace::AlgorithmTrace& run,
                        const count::RunCount* counts, const count::Formula& formula) {
  const auto& p = run.problem;
  j.field("profile", prof.name).field("device", prof.display_name);
  j.field("algorithm", workload::to_string(run.algorithm)).field("pass", workload::to_string(run.pass));
  j.key("problem").begin_object();
  j.field("batch", p.batch).field("heads", p.heads).field("kv_heads", p.kv_heads);
  j.field("seq_q", p.seq_q).field("seq_k", p.seq_k).field("head_dim", p.head_dim);
  j.field("dtype", workload::to_string(p.dtype)).field("layout", workload::to_string(p.layout));
  j.field("causal", p.causal);
  j.field("block_density", run.mask ? run.mask->density() : 1.0);
  j.end_object();
  j.field("counted_by", counts ? "trace" : "formula");
  if (counts) {
    j.field("flops", counts->io.tensor_flops);
    j.key("nonmatmul").begin_object().field("fp32_ops", counts->io.fp32_ops).field("sfu_ops", counts->io.sfu_ops)
        .end_object();
    write_io_fields(j, counts->io);
  } else {
    j.field("flops", formula.tensor_flops);
    j.key("nonmatmul").null();
    j.key("global").begin_object().field("read_bytes", formula.read_bytes).field("write_bytes", formula.write_bytes);
    j.field("total_bytes", formula.bytes()).end_object();
  }
  j.key("formula").begin_object();
  j.field("bytes", formula.bytes()).field("read_bytes", formula.read_bytes).field("write_bytes", formula.write_bytes);
  if (counts) j.field("equals_trace", formula.bytes() == counts->io.total_bytes()); else j.key("equals_trace").null();
  j.field("expression", formula.expression);
  // Whole bytes, like every byte count (the expression itself is asymptotic).
  if (formula.paper_bytes > 0) j.field("paper_bytes", static_cast<i64>(std::llround(formula.paper_bytes)));
  else j.key("paper_bytes").null();
  j.key("terms").begin_array();
  for (const auto& t : formula.terms) j.begin_object().field("what", t.what).field("bytes", t.bytes).end_object();
  j.end_array().end_object();
  j.key("tiling").begin_object();
  j.field("block_m", run.tiling.block_m).field("block_n", run.tiling.block_n);
  j.field("splits", run.tiling.splits).field("splits_rule", run.tiling.splits_rule);
  j.field("sram_bytes", run.tiling.sram_bytes).field("sram_limit_bytes", run.sram_limit_bytes);
  j.field("rule", run.tiling.rule);
  j.key("gemm")
      .begin_object()
      .field("m", run.gemm.m)
      .field("n", run.gemm.n)
      .field("k", run.gemm.k)
      .field("impl", schedule::gemm_impl_name(run.gemm.impl))
      .end_object();
  j.end_object();
  write_kernel_note(j, kernel_note(run));
}

void print_count_report(std::ostream& out, const profile::HardwareProfile& prof, const trace::AlgorithmTrace& run,
                        const count::RunCount* counts, const count::Formula& formula,
                        const std::vector<i64>& kernel_steps) {
  out << "iosim: " << workload::to_string(run.algorithm) << " " << workload::to_string(run.pass) << " on "
      << prof.display_name << " (" << prof.name << ")\n";
  out << "problem: " << describe_problem(run.problem) << "\n";
  out << "tiling:  Br=" << run.tiling.block_m << " Bc=" << run.tiling.block_n << " (" << run.tiling.rule
      << "); shared memory " << run.tiling.sram_bytes << " of " << run.sram_limit_bytes << " B per CTA\n";
  if (run.algorithm == workload::Algorithm::splitkv)
    out << "splits:  " << run.tiling.splits << " (" << run.tiling.splits_rule << ")\n";
  out << "kernel:  " << kernel_note(run).text(run) << "\n";
  if (counts)
    out << "work:    " << format_count(static_cast<double>(counts->io.tensor_flops)) << "FLOP on tensor cores, "
        << format_count(static_cast<double>(counts->io.fp32_ops)) << "FP32 ops, "
        << format_count(static_cast<double>(counts->io.sfu_ops)) << "exp\n\n";
  else
    out << "work:    " << format_count(static_cast<double>(formula.tensor_flops)) << "FLOP on tensor cores\n"
        << "counted: by the closed form, which equals the trace walk (tests/test_formulas.cpp); per-tensor,\n"
        << "         per-kernel bytes and FP32/exp counts need the walk: --count-by trace\n\n";

  out << "SRAM <-> global memory, per kernel\n";
  out << std::left << std::setw(22) << "  kernel" << std::setw(26) << "grid" << std::right << std::setw(14)
      << (counts ? "read" : "steps") << std::setw(14) << (counts ? "write" : "") << "\n";
  for (size_t k = 0; k < run.kernels.size(); ++k) {
    const auto& kernel = *run.kernels[k].kernel;
    std::ostringstream grid;
    grid << kernel.grid().x << " x " << kernel.grid().y << " x " << kernel.grid().z;
    out << "  " << std::left << std::setw(20) << kernel.name() << std::setw(26) << grid.str() << std::right;
    if (counts)
      out << std::setw(14) << format_bytes(static_cast<double>(counts->kernels[k].io.read_bytes)) << std::setw(14)
          << format_bytes(static_cast<double>(counts->kernels[k].io.write_bytes));
    else if (k < kernel_steps.size())
      out << std::setw(14) << format_count(static_cast<double>(kernel_steps[k]));
    out << "\n";
  }
  if (counts) {
    out << "\nper tensor\n";
    for (int t = 0; t < trace::kTensorCount; ++t) {
      const auto& tb = counts->io.by_tensor[static_cast<size_t>(t)];
      if (tb.read_bytes == 0 && tb.write_bytes == 0) continue;
      out << "  " << std::left << std::setw(10) << trace::tensor_name(static_cast<TensorId>(t)) << std::right
          << std::setw(14) << format_bytes(static_cast<double>(tb.read_bytes)) << " read" << std::setw(14)
          << format_bytes(static_cast<double>(tb.write_bytes)) << " written\n";
    }
    out << "\ntotal:   " << format_bytes(static_cast<double>(counts->io.total_bytes())) << " ("
        << counts->io.total_bytes() << " B)\n";
  }
  out << "formula: " << format_bytes(static_cast<double>(formula.bytes())) << " (" << formula.bytes() << " B) "
      << (!counts ? "(read " + format_bytes(static_cast<double>(formula.read_bytes)) + ", written " +
                        format_bytes(static_cast<double>(formula.write_bytes)) + ")"
                  : formula.bytes() == counts->io.total_bytes() ? "= trace, exactly"
                                                                : "!= trace")
      << "\n";
  if (!formula.expression.empty()) {
    out << "paper:   " << formula.expression;
    if (formula.paper_bytes > 0) out << " = " << format_bytes(formula.paper_bytes);
    out << "\n";
  }
}

}  // namespace iosim::report
