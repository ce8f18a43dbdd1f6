// iosim-kernels: runs the CUDA attention kernels.
//   iosim-kernels check [flags]  one configuration vs the double reference; prints the errors
//   iosim-kernels bench [flags]  CUDA-event timing (warm-up, median of --iters runs, inputs
//                                rotated over enough buffer sets to exceed several L2s)
//   iosim-kernels menu           the compiled (head_dim, Br, Bc, dtype) instantiations
// Problem flags are the ones 'iosim simulate' takes, parsed by the same code
// (kernels/harness/run_flags.h).
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/cuda_check.h"
#include "kernels/harness/run_flags.h"
#include "kernels/harness/runner.h"
#include "sim/common/error.h"

namespace {

using iosim::cli::ArgParser;

std::string problem_json(const iosim::harness::RunSpec& s, const std::string& pass, iosim::harness::Blocks b,
                         iosim::i64 splits) {
  const auto& p = s.problem;
  std::ostringstream o;
  o << "\"algo\": \"" << s.algorithm << "\", \"pass\": \"" << pass << "\", \"batch\": " << p.batch
    << ", \"heads\": " << p.heads << ", \"kv_heads\": " << p.kv_heads << ", \"seq_q\": " << p.seq_q
    << ", \"seq_k\": " << p.seq_k << ", \"head_dim\": " << p.head_dim << ", \"dtype\": \""
    << iosim::workload::to_string(p.dtype) << "\", \"causal\": " << (p.causal ? "true" : "false")
    << ", \"layout\": \"" << iosim::workload::to_string(p.layout) << "\", \"block_m\": " << b.m
    << ", \"block_n\": " << b.n << ", \"splits\": " << splits << ", \"block_density\": "
    << (p.sparsity.is_dense() ? 1.0 : p.sparsity.density);
  return o.str();
}

std::string problem_text(const iosim::harness::RunSpec& s, const std::string& pass, iosim::harness::Blocks b,
                         iosim::i64 splits) {
  const auto& p = s.problem;
  std::ostringstream o;
  o << s.algorithm << " " << pass << "  B=" << p.batch << " H=" << p.heads << " Hkv=" << p.kv_heads
    << " Nq=" << p.seq_q << " Nk=" << p.seq_k << " d=" << p.head_dim << " " << iosim::workload::to_string(p.dtype)
    << (p.causal ? " causal" : "") << " " << iosim::workload::to_string(p.layout) << "  Br=" << b.m
    << " Bc=" << b.n;
  if (s.algorithm == "splitkv") o << " splits=" << splits;
  if (!p.sparsity.is_dense()) o << " density=" << p.sparsity.density;
  return o.str();
}

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  const std::string s = buf;
  return (s == "inf" || s == "-inf" || s == "nan" || s == "-nan") ? "\"" + s + "\"" : s;
}

// The per-kernel times of a bench, with the trace's bytes and FLOPs per kernel.
std::string kernels_json(const std::vector<iosim::harness::KernelTiming>& kernels) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    o << (i ? ", " : "") << "{\"name\": \"" << k.name << "\", \"median_ms\": " << num(k.median_ms)
      << ", \"min_ms\": " << num(k.min_ms) << ", \"read_bytes\": " << k.read_bytes
      << ", \"write_bytes\": " << k.write_bytes << ", \"tensor_flops\": " << k.tensor_flops << "}";
  }
  o << "]";
  return o.str();
}

int cmd_check(const ArgParser& f) {
  const auto [spec, pass] = iosim::harness::run_from_flags(f);
  const std::string pass_name(iosim::workload::to_string(pass));
  const auto r = iosim::harness::check(spec, pass);
  if (f.flag("json")) {
    std::cout << "{\"command\": \"check\", " << problem_json(spec, pass_name, r.blocks, r.splits) << ", \"errors\": {";
    for (size_t i = 0; i < r.errors.size(); ++i) {
      const auto& e = r.errors[i];
      std::cout << (i ? ", " : "") << "\"" << e.tensor << "\": {\"max_abs_error\": " << num(e.norms.max_abs_error)
                << ", \"max_abs_ref\": " << num(e.norms.max_abs_ref) << ", \"relative\": " << num(e.norms.relative())
                << "}";
    }
    std::cout << "}, \"max_relative\": " << num(r.max_relative()) << "}\n";
  } else {
    std::cout << problem_text(spec, pass_name, r.blocks, r.splits) << "\n";
    for (const auto& e : r.errors) {
      std::printf("  %-3s max|err| %-12.4g max|ref| %-12.4g relative %.4g\n", e.tensor.c_str(),
                  e.norms.max_abs_error, e.norms.max_abs_ref, e.norms.relative());
    }
  }
  if (const auto tol = f.real("tol"); tol && !(r.max_relative() <= *tol)) {
    std::cerr << "iosim-kernels: relative error " << r.max_relative() << " exceeds --tol " << *tol << "\n";
    return 1;
  }
  return 0;
}

int cmd_bench(const ArgParser& f) {
  const auto [spec, pass] = iosim::harness::run_from_flags(f);
  const std::string pass_name(iosim::workload::to_string(pass));
  iosim::harness::BenchOptions o;
  o.warmup = static_cast<int>(f.integer("warmup").value_or(o.warmup));
  o.iters = static_cast<int>(f.integer("iters").value_or(o.iters));
  o.l2_multiple = f.real("l2-multiple").value_or(o.l2_multiple);
  o.per_kernel = f.flag("per-kernel");
  const auto r = iosim::harness::bench(spec, pass, o);
  if (f.flag("json")) {
    std::cout << "{\"command\": \"bench\", " << problem_json(spec, pass_name, r.blocks, r.splits) << ", \"device\": \""
              << r.device << "\", \"median_ms\": " << num(r.median_ms) << ", \"min_ms\": " << num(r.min_ms)
              << ", \"max_ms\": " << num(r.max_ms) << ", \"flops\": " << num(r.flops)
              << ", \"tflops\": " << num(r.tflops) << ", \"iters\": " << o.iters << ", \"warmup\": " << o.warmup
              << ", \"sets\": " << r.sets << ", \"set_bytes\": " << r.set_bytes;
    if (o.per_kernel) std::cout << ", \"kernels\": " << kernels_json(r.kernels);
    std::cout << "}\n";
  } else {
    std::cout << problem_text(spec, pass_name, r.blocks, r.splits) << "\n";
    std::printf("  %s: median %.4f ms (min %.4f, max %.4f over %d runs), %.1f TFLOP/s; %d buffer sets x %.1f MiB\n",
                r.device.c_str(), r.median_ms, r.min_ms, r.max_ms, o.iters, r.tflops, r.sets,
                static_cast<double>(r.set_bytes) / (1 << 20));
    for (const auto& k : r.kernels)
      std::printf("  %-20s median %.4f ms  %8.1f TFLOP/s  %8.1f GB/s (trace bytes)\n", k.name.c_str(), k.median_ms,
                  static_cast<double>(k.tensor_flops) / (k.median_ms * 1e-3) / 1e12,
                  static_cast<double>(k.read_bytes + k.write_bytes) / (k.median_ms * 1e-3) / 1e9);
  }
  return 0;
}

int cmd_menu() {
  for (const auto& algo : iosim::harness::kernel_algorithms()) {
    std::cout << algo << ":\n";
    for (const auto& e : iosim::kernels::compiled_menu(algo)) std::cout << "  " << e << "\n";
  }
  return 0;
}

void usage(std::ostream& out) {
  out << "usage: iosim-kernels check|bench|menu [flags]\n"
         "  check  run one configuration against the double-precision reference and print the errors\n"
         "  bench  time a pass with CUDA events (median of --iters runs, rotated inputs)\n"
         "  menu   list the compiled kernel instantiations\n"
         "'iosim-kernels check --help' lists the flags.\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      usage(args.empty() ? std::cerr : std::cout);
      return args.empty() ? 2 : 0;
    }
    const std::string command = args[0];
    if (command == "menu") return cmd_menu();
    if (command != "check" && command != "bench") {
      std::cerr << "iosim-kernels: unknown command '" << command << "'\n";
      usage(std::cerr);
      return 2;
    }
    ArgParser f = iosim::harness::make_run_parser(command);
    f.parse(std::vector<std::string>(args.begin() + 1, args.end()));
    if (f.help_requested()) {
      std::cout << f.help();
      return 0;
    }
    return command == "check" ? cmd_check(f) : cmd_bench(f);
  } catch (const iosim::InputError& e) {
    std::cerr << "iosim-kernels: error: " << e.what() << "\n";
    return 2;
  } catch (const iosim::kernels::NotCompiled& e) {
    std::cerr << "iosim-kernels: not compiled: " << e.what() << "\n";
    return 3;
  } catch (const iosim::kernels::CudaError& e) {
    std::cerr << "iosim-kernels: CUDA error: " << e.what() << "\n";
    return 4;
  } catch (const std::exception& e) {
    std::cerr << "iosim-kernels: internal error: " << e.what() << "\n";
    return 5;
  }
}
