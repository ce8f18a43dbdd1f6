// iosim-kernels: runs the CUDA attention kernels.
//   iosim-kernels check [flags]  one configuration vs the double reference; prints the errors
//   iosim-kernels bench [flags]  CUDA-event timing (warm-up, median of --iters runs, inputs
//                                rotated over enough buffer sets to exceed several L2s)
//   iosim-kernels menu           the compiled (head_dim, Br, Bc, dtype) instantiations
// Problem flags are the ones 'iosim simulate' takes (same names, same defaults).
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/cuda_check.h"
#include "kernels/harness/runner.h"
#include "sim/common/error.h"

namespace {

using iosim::i64;
using iosim::InputError;

// A strict flag parser: every flag is declared; unknown flags, repeated flags,
// missing values and malformed numbers are errors naming the flag.
class Flags {
 public:
  enum class Kind { flag, integer, real, text };
  Flags& add(const std::string& name, Kind kind, const std::string& help) {
    specs_[name] = {kind, help};
    order_.push_back(name);
    return *this;
  }
  void parse(const std::string& command, const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
      std::string name = args[i], value;
      if (name == "--help" || name == "-h") {
        help = true;
        continue;
      }
      if (name.rfind("--", 0) != 0) throw InputError(command + ": unexpected argument '" + name + "'");
      name = name.substr(2);
      bool inline_value = false;
      if (const auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
        inline_value = true;
      }
      const auto it = specs_.find(name);
      if (it == specs_.end())
        throw InputError(command + ": unknown flag '--" + name + "' (see 'iosim-kernels " + command + " --help')");
      if (values_.count(name)) throw InputError(command + ": flag '--" + name + "' given twice");
      if (it->second.kind == Kind::flag) {
        if (inline_value) throw InputError(command + ": flag '--" + name + "' takes no value");
        values_[name] = "";
        continue;
      }
      if (!inline_value) {
        if (i + 1 >= args.size()) throw InputError(command + ": flag '--" + name + "' needs a value");
        value = args[++i];
      }
      check_number(command, name, it->second.kind, value);
      values_[name] = value;
    }
  }
  bool has(const std::string& n) const { return values_.count(n) != 0; }
  std::optional<i64> integer(const std::string& n) const {
    if (!has(n)) return std::nullopt;
    return std::stoll(values_.at(n));
  }
  std::optional<double> real(const std::string& n) const {
    if (!has(n)) return std::nullopt;
    return std::stod(values_.at(n));
  }
  std::optional<std::string> text(const std::string& n) const {
    if (!has(n)) return std::nullopt;
    return values_.at(n);
  }
  std::string usage() const {
    std::string s;
    for (const auto& n : order_) s += "  --" + n + "\n      " + specs_.at(n).help + "\n";
    return s;
  }
  bool help = false;

 private:
  static void check_number(const std::string& command, const std::string& name, Kind kind, const std::string& v) {
    if (kind != Kind::integer && kind != Kind::real) return;
    size_t used = 0;
    bool ok = !v.empty();
    try {
      if (kind == Kind::integer) std::stoll(v, &used);
      else std::stod(v, &used);
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok || used != v.size())
      throw InputError(command + ": --" + name + " expects " + (kind == Kind::integer ? "an integer" : "a number") +
                       ", got '" + v + "'");
  }
  struct Spec {
    Kind kind;
    std::string help;
  };
  std::map<std::string, Spec> specs_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> values_;
};

Flags make_flags(const std::string& command) {
  using K = Flags::Kind;
  Flags f;
  f.add("algo", K::text, "standard | fa1 | fa2 [fa2]")
      .add("pass", K::text, command == "bench" ? "fwd | bwd [fwd]" : "fwd | bwd | fwdbwd [fwd]")
      .add("batch", K::integer, "batch size [1]")
      .add("heads", K::integer, "query heads [1]")
      .add("kv-heads", K::integer, "key/value heads (GQA/MQA) [heads]")
      .add("seq", K::integer, "sequence length of queries and keys")
      .add("seq-q", K::integer, "query length (with --seq-k, instead of --seq)")
      .add("seq-k", K::integer, "key length (with --seq-q)")
      .add("head-dim", K::integer, "head dimension (required)")
      .add("dtype", K::text, "fp16 | bf16 [fp16]")
      .add("causal", K::flag, "causal mask, bottom-right aligned")
      .add("block-m", K::integer, "query rows per tile (with --block-n) [FlashAttention-2's choice for fa2]")
      .add("block-n", K::integer, "key columns per tile (with --block-m)")
      .add("gemm-m", K::integer, "standard attention GEMM tile rows [128]")
      .add("gemm-n", K::integer, "standard attention GEMM tile columns [128]")
      .add("gemm-k", K::integer, "standard attention GEMM reduction chunk [32]")
      .add("layout", K::text, "bshd | bhsd [bshd]")
      .add("block-density", K::real, "block-sparse: fraction of tiles kept, in (0, 1]")
      .add("mask-seed", K::integer, "seed of the random block mask [0]")
      .add("block-mask", K::text, "block-sparse mask file: rows of 0/1, one per query block")
      .add("seed", K::integer, "seed of the random inputs [1]")
      .add("q-scale", K::real, "multiply Q (uniform in [-1, 1]) by this, for large logits [1]")
      .add("json", K::flag, "print one JSON object instead of text");
  if (command == "check") f.add("tol", K::real, "exit 1 when any relative error exceeds this");
  if (command == "bench") {
    f.add("warmup", K::integer, "untimed runs first [5]")
        .add("iters", K::integer, "timed runs; the median is reported [30]")
        .add("l2-multiple", K::real, "rotate buffer sets until they hold this many L2s [4]");
  }
  return f;
}

iosim::harness::RunSpec spec_from(const Flags& f) {
  iosim::harness::RunSpec s;
  auto& p = s.problem;
  p.batch = f.integer("batch").value_or(1);
  p.heads = f.integer("heads").value_or(1);
  p.kv_heads = f.integer("kv-heads").value_or(p.heads);
  if (f.has("seq") && (f.has("seq-q") || f.has("seq-k")))
    throw InputError("give either --seq N or both --seq-q and --seq-k, not both");
  if (f.has("seq")) {
    p.seq_q = p.seq_k = *f.integer("seq");
  } else if (f.has("seq-q") && f.has("seq-k")) {
    p.seq_q = *f.integer("seq-q");
    p.seq_k = *f.integer("seq-k");
  } else {
    throw InputError("the sequence length is required: --seq N, or --seq-q NQ --seq-k NK");
  }
  if (!f.has("head-dim")) throw InputError("--head-dim D is required");
  p.head_dim = *f.integer("head-dim");
  p.dtype = iosim::workload::parse_dtype(f.text("dtype").value_or("fp16"));
  p.causal = f.has("causal");
  p.layout = iosim::workload::parse_layout(f.text("layout").value_or("bshd"));
  if (f.has("block-density") && f.has("block-mask")) throw InputError("give either --block-density or --block-mask");
  if (f.has("mask-seed") && !f.has("block-density")) throw InputError("--mask-seed only applies with --block-density");
  if (f.has("block-density")) {
    p.sparsity.kind = iosim::workload::SparsitySpec::Kind::random_density;
    p.sparsity.density = *f.real("block-density");
    p.sparsity.seed = static_cast<std::uint64_t>(f.integer("mask-seed").value_or(0));
  } else if (f.has("block-mask")) {
    p.sparsity.kind = iosim::workload::SparsitySpec::Kind::file;
    p.sparsity.file = *f.text("block-mask");
  }
  p.validate();
  s.algorithm = f.text("algo").value_or("fa2");
  s.block_m = f.integer("block-m").value_or(0);
  s.block_n = f.integer("block-n").value_or(0);
  s.gemm.m = f.integer("gemm-m").value_or(s.gemm.m);
  s.gemm.n = f.integer("gemm-n").value_or(s.gemm.n);
  s.gemm.k = f.integer("gemm-k").value_or(s.gemm.k);
  s.data_seed = static_cast<std::uint64_t>(f.integer("seed").value_or(1));
  s.q_scale = f.real("q-scale").value_or(1.0);
  return s;
}

std::string problem_json(const iosim::harness::RunSpec& s, const std::string& pass, iosim::harness::Blocks b) {
  const auto& p = s.problem;
  std::ostringstream o;
  o << "\"algo\": \"" << s.algorithm << "\", \"pass\": \"" << pass << "\", \"batch\": " << p.batch
    << ", \"heads\": " << p.heads << ", \"kv_heads\": " << p.kv_heads << ", \"seq_q\": " << p.seq_q
    << ", \"seq_k\": " << p.seq_k << ", \"head_dim\": " << p.head_dim << ", \"dtype\": \""
    << iosim::workload::to_string(p.dtype) << "\", \"causal\": " << (p.causal ? "true" : "false")
    << ", \"layout\": \"" << iosim::workload::to_string(p.layout) << "\", \"block_m\": " << b.m
    << ", \"block_n\": " << b.n << ", \"block_density\": "
    << (p.sparsity.is_dense() ? 1.0 : p.sparsity.density);
  return o.str();
}

std::string problem_text(const iosim::harness::RunSpec& s, const std::string& pass, iosim::harness::Blocks b) {
  const auto& p = s.problem;
  std::ostringstream o;
  o << s.algorithm << " " << pass << "  B=" << p.batch << " H=" << p.heads << " Hkv=" << p.kv_heads
    << " Nq=" << p.seq_q << " Nk=" << p.seq_k << " d=" << p.head_dim << " " << iosim::workload::to_string(p.dtype)
    << (p.causal ? " causal" : "") << " " << iosim::workload::to_string(p.layout) << "  Br=" << b.m
    << " Bc=" << b.n;
  if (!p.sparsity.is_dense()) o << " density=" << p.sparsity.density;
  return o.str();
}

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  const std::string s = buf;
  return (s == "inf" || s == "-inf" || s == "nan" || s == "-nan") ? "\"" + s + "\"" : s;
}

int cmd_check(const Flags& f) {
  const auto spec = spec_from(f);
  const std::string pass_name = f.text("pass").value_or("fwd");
  const auto pass = iosim::workload::parse_pass(pass_name);
  const auto r = iosim::harness::check(spec, pass);
  if (f.has("json")) {
    std::cout << "{\"command\": \"check\", " << problem_json(spec, pass_name, r.blocks) << ", \"errors\": {";
    for (size_t i = 0; i < r.errors.size(); ++i) {
      const auto& e = r.errors[i];
      std::cout << (i ? ", " : "") << "\"" << e.tensor << "\": {\"max_abs_error\": " << num(e.norms.max_abs_error)
                << ", \"max_abs_ref\": " << num(e.norms.max_abs_ref) << ", \"relative\": " << num(e.norms.relative())
                << "}";
    }
    std::cout << "}, \"max_relative\": " << num(r.max_relative()) << "}\n";
  } else {
    std::cout << problem_text(spec, pass_name, r.blocks) << "\n";
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

int cmd_bench(const Flags& f) {
  const auto spec = spec_from(f);
  const std::string pass_name = f.text("pass").value_or("fwd");
  const auto pass = iosim::workload::parse_pass(pass_name);
  iosim::harness::BenchOptions o;
  o.warmup = static_cast<int>(f.integer("warmup").value_or(o.warmup));
  o.iters = static_cast<int>(f.integer("iters").value_or(o.iters));
  o.l2_multiple = f.real("l2-multiple").value_or(o.l2_multiple);
  const auto r = iosim::harness::bench(spec, pass, o);
  if (f.has("json")) {
    std::cout << "{\"command\": \"bench\", " << problem_json(spec, pass_name, r.blocks) << ", \"device\": \""
              << r.device << "\", \"median_ms\": " << num(r.median_ms) << ", \"min_ms\": " << num(r.min_ms)
              << ", \"max_ms\": " << num(r.max_ms) << ", \"flops\": " << num(r.flops)
              << ", \"tflops\": " << num(r.tflops) << ", \"iters\": " << o.iters << ", \"warmup\": " << o.warmup
              << ", \"sets\": " << r.sets << ", \"set_bytes\": " << r.set_bytes << "}\n";
  } else {
    std::cout << problem_text(spec, pass_name, r.blocks) << "\n";
    std::printf("  %s: median %.4f ms (min %.4f, max %.4f over %d runs), %.1f TFLOP/s; %d buffer sets x %.1f MiB\n",
                r.device.c_str(), r.median_ms, r.min_ms, r.max_ms, o.iters, r.tflops, r.sets,
                static_cast<double>(r.set_bytes) / (1 << 20));
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
         "  bench  time one pass with CUDA events (median of --iters runs, rotated inputs)\n"
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
    Flags f = make_flags(command);
    f.parse(command, std::vector<std::string>(args.begin() + 1, args.end()));
    if (f.help) {
      std::cout << "usage: iosim-kernels " << command << " [flags]\n" << f.usage();
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
