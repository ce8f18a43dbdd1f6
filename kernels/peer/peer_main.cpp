// iosim-peer: the benchmark peers our standard-attention kernels are measured
// against (issue 11), in the same device call as `iosim-kernels bench`.
//   iosim-peer gemm [problem flags]  cuBLAS (cublasGemmStridedBatchedEx, or
//       cublasGemmBatchedEx where one batch stride cannot describe the
//       operands) on exactly the GEMMs of the pass's plan: the same m, n, k,
//       batches, operand orientations, leading dimensions and batch offsets
//       as our kernels (kernels/standard/tensor_map.h places both); one JSON
//       line per GEMM: time and TFLOP/s, and a check of sampled outputs
//       against a double-precision dot product.
//   iosim-peer copy [--mib N]        DRAM copy bandwidth: cudaMemcpyAsync
//       device to device and a 16-byte-per-thread copy kernel; one JSON line.
// Timing as the harness times (kernels/harness/runner.cpp): warm-up runs, the
// median of --iters runs, inputs rotated over enough buffer sets to exceed
// --l2-multiple L2s.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/common/cuda_check.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/device_info.h"
#include "kernels/common/element_bits.h"
#include "kernels/harness/run_flags.h"
#include "kernels/peer/cublas_loader.h"
#include "kernels/peer/peer_kernels.h"
#include "kernels/standard/tensor_map.h"
#include "sim/cli/args.h"
#include "sim/cli/problem_flags.h"
#include "sim/common/error.h"
#include "sim/schedule/plan.h"
#include "sim/trace/trace.h"

namespace iosim::peer {
namespace {

using cli::ArgParser;
using kernels::CudaEvent;
using kernels::DeviceBuffer;
using schedule::TensorId;
using u16 = std::uint16_t;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Timing {
  int warmup = 5, iters = 30;
  double l2_multiple = 4.0;
};

// Median milliseconds of `iters` runs of run(i) (i counts warm-up runs too).
template <class Run>
double time_runs(const Timing& t, Run run) {
  for (int w = 0; w < t.warmup; ++w) run(w);
  std::vector<CudaEvent> start(static_cast<size_t>(t.iters)), stop(static_cast<size_t>(t.iters));
  for (int it = 0; it < t.iters; ++it) {
    start[static_cast<size_t>(it)].record(nullptr);
    run(t.warmup + it);
    stop[static_cast<size_t>(it)].record(nullptr);
  }
  IOSIM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int it = 0; it < t.iters; ++it)
    ms.push_back(stop[static_cast<size_t>(it)].ms_since(start[static_cast<size_t>(it)]));
  return median(ms);
}

// Buffer sets so that one run's data is out of L2 when its set comes back.
i64 set_count(const Timing& t, i64 set_bytes) {
  const kernels::DeviceInfo dev = kernels::current_device();
  size_t free_bytes = 0, total_bytes = 0;
  IOSIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const i64 wanted = std::max<i64>(2, static_cast<i64>(std::ceil(t.l2_multiple * static_cast<double>(dev.l2_bytes) /
                                                                 static_cast<double>(set_bytes))));
  const i64 fit = static_cast<i64>(0.8 * static_cast<double>(free_bytes) / static_cast<double>(set_bytes));
  if (fit < 1)
    throw InputError("one buffer set needs " + std::to_string(set_bytes) + " bytes; the device has " +
                     std::to_string(free_bytes) + " free");
  return std::min<i64>({wanted, fit, 64});
}

Timing timing_from_flags(const ArgParser& f) {
  Timing t;
  t.warmup = static_cast<int>(f.integer("warmup").value_or(t.warmup));
  t.iters = static_cast<int>(f.integer("iters").value_or(t.iters));
  t.l2_multiple = f.real("l2-multiple").value_or(t.l2_multiple);
  if (t.iters < 1 || t.warmup < 0 || !(t.l2_multiple > 0))
    throw InputError("--iters must be >= 1, --warmup >= 0 and --l2-multiple > 0");
  return t;
}

// ---------------------------------------------------------------------------
// One GEMM of the plan as cuBLAS sees it. cuBLAS is column-major: our
// row-major C[m x n] = A[m x k] B[k x n] is its C^T[n x m] = B^T A^T, so
// cuBLAS's first operand is our B and its second our A. An operand stored
// [outer][k] (k contiguous) is, column-major, a k x outer matrix.
struct CublasGemm {
  cublasOperation_t op_first, op_second;  // for our B, our A
  int m, n, k;                            // cuBLAS's: our n, m, k
  int ld_first, ld_second, ldc;
};

CublasGemm cublas_shape(const schedule::GemmPlan& g, const kernels::detail::TensorMap& t) {
  const auto a = t.operand(g.a), b = t.operand(g.b);
  const auto c = t.output(g.c);
  const auto narrow = [](i64 v, const char* what) {
    if (v > INT32_MAX)
      throw InputError(std::string("cuBLAS's 32-bit API cannot take ") + what + " " + std::to_string(v));
    return static_cast<int>(v);
  };
  return {b.k_contiguous ? CUBLAS_OP_T : CUBLAS_OP_N,
          a.k_contiguous ? CUBLAS_OP_N : CUBLAS_OP_T,
          narrow(g.s.n, "n"),
          narrow(g.s.m, "m"),
          narrow(g.s.k, "k"),
          narrow(b.outer_stride, "ldb"),
          narrow(a.outer_stride, "lda"),
          narrow(c.row_stride, "ldc")};
}

// Element offsets of batch slice z's operand (group member 0) and output, as
// the kernel computes them (standard_gemm.cu: operand_base).
i64 operand_offset(const kernels::detail::GemmOperand& o, i64 z, i64 z_heads) {
  const i64 b = z / z_heads, head = ((z % z_heads) * o.head_mul) / o.head_div;
  return b * o.batch_stride + head * o.head_stride;
}
i64 output_offset(const kernels::detail::GemmOutput& c, i64 z, i64 z_heads) {
  return (z / z_heads) * c.batch_stride + (z % z_heads) * c.head_stride;
}

// The batch stride of offsets(z) when they are z * stride, else -1.
template <class Offset>
i64 uniform_stride(i64 batches, Offset offset) {
  const i64 stride = batches > 1 ? offset(1) - offset(0) : 0;
  for (i64 z = 0; z < batches; ++z)
    if (offset(z) != z * stride) return -1;
  return stride;
}

struct GemmRecord {
  std::string name, api, skipped;
  i64 m = 0, n = 0, k = 0, batches = 0;
  bool a_kc = true, b_kc = true;
  double median_ms = 0, flops = 0, max_error = 0;
  int checked = 0;
  bool verified = false;
};

// One set of the GEMM's tensors, filled; `map` points at them.
struct GemmSet {
  DeviceBuffer<u16> a, b, c;
  kernels::detail::TensorMap map;
};

GemmSet make_set(const workload::Problem& p, const schedule::GemmPlan& g, const trace::TensorTable& table) {
  GemmSet s;
  const auto elems = [&](TensorId t) { return static_cast<size_t>(table.info(t).bytes() / table.info(t).elem_bytes); };
  s.a = DeviceBuffer<u16>(elems(g.a.tensor));
  s.b = DeviceBuffer<u16>(elems(g.b.tensor));
  s.c = DeviceBuffer<u16>(elems(g.c));
  fill(s.a.get(), static_cast<i64>(s.a.size()), 1 + static_cast<std::uint64_t>(g.a.tensor), p.dtype);
  fill(s.b.get(), static_cast<i64>(s.b.size()), 1 + static_cast<std::uint64_t>(g.b.tensor), p.dtype);
  s.map = kernels::detail::tensor_map(p);
  s.map.set(g.a.tensor, s.a.get());
  s.map.set(g.b.tensor, s.b.get());
  s.map.set(g.c, s.c.get());
  return s;
}

// Issues cuBLAS's GEMM on one set: strided when each operand's batch
// offsets are z * stride, else with pointer arrays (built once per set).
class GemmCall {
 public:
  GemmCall(const Cublas& blas, const schedule::GemmPlan& g, const GemmSet& set, workload::DType dtype)
      : blas_(blas),
        g_(g),
        shape_(cublas_shape(g, set.map)),
        type_(dtype == workload::DType::bf16 ? CUDA_R_16BF : CUDA_R_16F) {
    a_ = set.map.operand(g.a);
    b_ = set.map.operand(g.b);
    c_ = set.map.output(g.c);
    const i64 z = g.s.batches, zh = g.z_heads;
    sa_ = uniform_stride(z, [&](i64 i) { return operand_offset(a_, i, zh); });
    sb_ = uniform_stride(z, [&](i64 i) { return operand_offset(b_, i, zh); });
    sc_ = uniform_stride(z, [&](i64 i) { return output_offset(c_, i, zh); });
    if (strided()) return;
    std::vector<const void*> pa, pb;
    std::vector<void*> pc;
    for (i64 i = 0; i < z; ++i) {
      pa.push_back(static_cast<const u16*>(a_.ptr) + operand_offset(a_, i, zh));
      pb.push_back(static_cast<const u16*>(b_.ptr) + operand_offset(b_, i, zh));
      pc.push_back(static_cast<u16*>(c_.ptr) + output_offset(c_, i, zh));
    }
    ptrs_ = DeviceBuffer<const void*>(3 * static_cast<size_t>(z));
    std::vector<const void*> all(pb.begin(), pb.end());  // cuBLAS's first operand is our B
    all.insert(all.end(), pa.begin(), pa.end());
    all.insert(all.end(), pc.begin(), pc.end());
    ptrs_.upload(all);
  }
  bool strided() const { return sa_ >= 0 && sb_ >= 0 && sc_ >= 0; }
  void operator()() const {
    const float alpha = 1.f, beta = 0.f;
    const int z = static_cast<int>(g_.s.batches);
    if (strided()) {
      Cublas::check(blas_.strided(blas_.handle(), shape_.op_first, shape_.op_second, shape_.m, shape_.n, shape_.k,
                                  &alpha, b_.ptr, type_, shape_.ld_first, sb_, a_.ptr, type_, shape_.ld_second, sa_,
                                  &beta, c_.ptr, type_, shape_.ldc, sc_, z, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmStridedBatchedEx");
      return;
    }
    const void* const* p = ptrs_.get();
    Cublas::check(
        blas_.batched(blas_.handle(), shape_.op_first, shape_.op_second, shape_.m, shape_.n, shape_.k, &alpha, p, type_,
                      shape_.ld_first, p + z, type_, shape_.ld_second, &beta, const_cast<void* const*>(p + 2 * z),
                      type_, shape_.ldc, z, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmBatchedEx");
  }

 private:
  const Cublas& blas_;
  const schedule::GemmPlan& g_;
  CublasGemm shape_;
  cudaDataType type_;
  kernels::detail::GemmOperand a_, b_;
  kernels::detail::GemmOutput c_;
  i64 sa_ = -1, sb_ = -1, sc_ = -1;
  DeviceBuffer<const void*> ptrs_;
};

// Sampled outputs against sum_k A(i, k) B(k, j) in double: the largest
// |C - ref| / (1 + |ref|) over `samples` (slice, row, column) samples.
double sampled_error(const schedule::GemmPlan& g, const GemmSet& set, workload::DType dtype, int samples) {
  const auto a = set.map.operand(g.a), b = set.map.operand(g.b);
  const auto c = set.map.output(g.c);
  const std::uint64_t seed_a = 1 + static_cast<std::uint64_t>(g.a.tensor),
                      seed_b = 1 + static_cast<std::uint64_t>(g.b.tensor);
  double worst = 0;
  for (int s = 0; s < samples; ++s) {
    const auto pick = [&](int which, i64 n) {
      return static_cast<i64>(mix(99, 3 * s + which) % static_cast<std::uint64_t>(n));
    };
    const i64 z = pick(0, g.s.batches), i = pick(1, g.s.m), j = pick(2, g.s.n);
    const i64 oa = operand_offset(a, z, g.z_heads), ob = operand_offset(b, z, g.z_heads);
    double ref = 0;
    for (i64 kk = 0; kk < g.s.k; ++kk)
      ref += input_value(seed_a, oa + (a.k_contiguous ? i * a.outer_stride + kk : kk * a.outer_stride + i)) *
             input_value(seed_b, ob + (b.k_contiguous ? j * b.outer_stride + kk : kk * b.outer_stride + j));
    u16 bits = 0;
    IOSIM_CUDA_CHECK(cudaMemcpy(&bits, set.c.get() + output_offset(c, z, g.z_heads) + i * c.row_stride + j, sizeof bits,
                                cudaMemcpyDeviceToHost));
    worst = std::max(worst, std::abs(kernels::from_bits(bits, dtype) - ref) / (1.0 + std::abs(ref)));
  }
  return worst;
}

GemmRecord bench_gemm(const Cublas& blas, const workload::Problem& p, const schedule::KernelPlan& k, const Timing& t) {
  const auto& g = k.as<schedule::GemmPlan>();
  GemmRecord r{k.name, "", "", g.s.m, g.s.n, g.s.k, g.s.batches, g.a.k_contiguous, g.b.k_contiguous};
  r.flops = 2.0 * static_cast<double>(g.s.m) * static_cast<double>(g.s.n) * static_cast<double>(g.s.k) *
            static_cast<double>(g.s.batches * g.s.k_groups);
  if (g.s.k_groups > 1) {
    r.skipped = "the sum over a GQA group's heads is not one cuBLAS call";
    return r;
  }
  const trace::TensorTable table(p);
  std::vector<GemmSet> sets;
  sets.push_back(make_set(p, g, table));
  const i64 set_bytes = static_cast<i64>(sets[0].a.bytes() + sets[0].b.bytes() + sets[0].c.bytes());
  for (i64 n = set_count(t, set_bytes); static_cast<i64>(sets.size()) < n;) sets.push_back(make_set(p, g, table));
  std::vector<GemmCall> calls;
  for (const auto& s : sets) calls.emplace_back(blas, g, s, p.dtype);
  r.api = calls[0].strided() ? "cublasGemmStridedBatchedEx" : "cublasGemmBatchedEx";
  r.median_ms = time_runs(t, [&](int i) { calls[static_cast<size_t>(i) % calls.size()](); });
  r.checked = 32;
  r.max_error = sampled_error(g, sets[0], p.dtype, r.checked);
  // fp16/bf16 output rounding (2^-8 relative for bf16) plus fp32 accumulation order.
  r.verified = r.max_error <= (p.dtype == workload::DType::bf16 ? 8e-3 : 2e-3);
  return r;
}

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

int cmd_gemm(const ArgParser& f) {
  const workload::Problem p = cli::problem_from_flags(f);
  trace::TraceOptions tiling = cli::tiling_from_flags(f);
  if (!f.has("algo")) tiling.algorithm = workload::Algorithm::standard;
  if (!workload::is_standard(tiling.algorithm))
    throw InputError("iosim-peer gemm times standard attention's GEMMs (--algo standard or standard-eager)");
  if (p.dtype == workload::DType::fp32) throw InputError("iosim-peer gemm: --dtype fp16 or bf16 (our kernels' types)");
  const Timing t = timing_from_flags(f);
  const schedule::PlanTiling plan_tiling{tiling.gemm.m, tiling.gemm.n, tiling.gemm};
  const schedule::Plan plan = schedule::make_plan(p, tiling.algorithm, tiling.pass, plan_tiling);
  const kernels::DeviceInfo dev = kernels::current_device();  // "no device" before cuBLAS's own error
  const Cublas blas;
  bool all_verified = true;
  for (const auto& k : plan.kernels) {
    if (!schedule::is_gemm(k.kind)) continue;
    const GemmRecord r = bench_gemm(blas, p, k, t);
    all_verified = all_verified && (r.verified || !r.skipped.empty());
    std::cout << "{\"source\": \"cublas\", \"kernel\": " << quoted(r.name) << ", \"batch\": " << p.batch
              << ", \"heads\": " << p.heads << ", \"kv_heads\": " << p.kv_heads << ", \"seq_q\": " << p.seq_q
              << ", \"seq_k\": " << p.seq_k << ", \"head_dim\": " << p.head_dim
              << ", \"dtype\": " << quoted(std::string(workload::to_string(p.dtype)))
              << ", \"layout\": " << quoted(std::string(workload::to_string(p.layout))) << ", \"m\": " << r.m
              << ", \"n\": " << r.n << ", \"k\": " << r.k << ", \"batches\": " << r.batches
              << ", \"a_k_contiguous\": " << (r.a_kc ? "true" : "false")
              << ", \"b_k_contiguous\": " << (r.b_kc ? "true" : "false") << ", \"flops\": " << num(r.flops);
    if (!r.skipped.empty()) {
      std::cout << ", \"skipped\": " << quoted(r.skipped) << "}\n";
      continue;
    }
    std::cout << ", \"api\": " << quoted(r.api) << ", \"median_ms\": " << num(r.median_ms)
              << ", \"tflops\": " << num(r.flops / (r.median_ms * 1e-3) / 1e12) << ", \"checked\": " << r.checked
              << ", \"max_error\": " << num(r.max_error) << ", \"verified\": " << (r.verified ? "true" : "false")
              << ", \"iters\": " << t.iters << ", \"device\": " << quoted(dev.name)
              << ", \"cublas\": " << quoted(blas.path()) << ", \"cublas_version\": " << blas.version() << "}\n";
  }
  if (!all_verified) std::cerr << "iosim-peer: a cuBLAS result differs from the reference (\"verified\": false)\n";
  return all_verified ? 0 : 1;
}

// ---------------------------------------------------------------------------
int cmd_copy(const ArgParser& f) {
  const i64 mib = f.integer("mib").value_or(2048);
  if (mib < 1) throw InputError("--mib must be >= 1");
  const Timing t = timing_from_flags(f);
  const i64 bytes = mib << 20;
  const kernels::DeviceInfo dev = kernels::current_device();
  if (bytes < 4 * dev.l2_bytes)
    throw InputError("--mib " + std::to_string(mib) + " is under 4 L2s (" + std::to_string(dev.l2_bytes >> 20) +
                     " MiB each): the copy would measure L2, not DRAM");
  DeviceBuffer<uint4> in(static_cast<size_t>(bytes / 16)), out(static_cast<size_t>(bytes / 16));
  in.fill_bytes(1);
  const double memcpy_ms = time_runs(t, [&](int) {
    IOSIM_CUDA_CHECK(
        cudaMemcpyAsync(out.get(), in.get(), static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, nullptr));
  });
  const int blocks = 8 * dev.sm_count;  // 8 CTAs of 256 threads per SM (2048 threads), grid-stride
  const double kernel_ms = time_runs(t, [&](int) { copy16(in.get(), out.get(), bytes / 16, blocks); });
  const auto gbps = [&](double ms) { return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9; };
  std::cout << "{\"source\": \"copy\", \"bytes\": " << bytes << ", \"memcpy_ms\": " << num(memcpy_ms)
            << ", \"memcpy_gbps\": " << num(gbps(memcpy_ms)) << ", \"kernel_ms\": " << num(kernel_ms)
            << ", \"kernel_gbps\": " << num(gbps(kernel_ms))
            << ", \"gbps\": " << num(std::max(gbps(memcpy_ms), gbps(kernel_ms))) << ", \"iters\": " << t.iters
            << ", \"device\": " << quoted(dev.name) << "}\n";
  return 0;
}

ArgParser make_parser(const std::string& command) {
  if (command == "gemm") {
    ArgParser p("gemm",
                "Times cuBLAS on each GEMM of a standard-attention pass, with our kernels' shapes and layouts\n"
                "(read+write GB/s are the caller's to derive); one JSON line per GEMM.",
                "iosim-peer");
    cli::ProblemFlagsHelp help;
    help.algorithms = "standard | standard-eager";
    help.default_algorithm = "standard";
    help.dtypes = "fp16 | bf16";
    help.default_tiling = "the GEMM tile (it does not change the GEMMs' shapes)";
    cli::add_problem_flags(p, help);
    harness::add_timing_flags(p);
    return p;
  }
  ArgParser p("copy",
              "DRAM copy bandwidth, read + write bytes per second: cudaMemcpyAsync device to device and a\n"
              "16-byte copy kernel; \"gbps\" is the faster of the two. One JSON line.",
              "iosim-peer");
  p.add("mib", ArgParser::Kind::integer, "N", "bytes copied, in MiB [2048]");
  harness::add_timing_flags(p);
  return p;
}

void usage(std::ostream& out) {
  out << "usage: iosim-peer gemm|copy [flags]\n"
         "  gemm  cuBLAS on the GEMMs of a standard-attention pass (our shapes and layouts); JSON lines\n"
         "  copy  DRAM copy bandwidth (cudaMemcpy and a copy kernel); one JSON line\n"
         "'iosim-peer gemm --help' lists the flags.\n";
}

}  // namespace
}  // namespace iosim::peer

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      iosim::peer::usage(args.empty() ? std::cerr : std::cout);
      return args.empty() ? 2 : 0;
    }
    const std::string command = args[0];
    if (command != "gemm" && command != "copy") {
      std::cerr << "iosim-peer: unknown command '" << command << "' (valid: gemm, copy)\n";
      return 2;
    }
    iosim::cli::ArgParser f = iosim::peer::make_parser(command);
    f.parse(std::vector<std::string>(args.begin() + 1, args.end()));
    if (f.help_requested()) {
      std::cout << f.help();
      return 0;
    }
    return command == "gemm" ? iosim::peer::cmd_gemm(f) : iosim::peer::cmd_copy(f);
  } catch (const iosim::InputError& e) {
    std::cerr << "iosim-peer: error: " << e.what() << "\n";
    return 2;
  } catch (const iosim::kernels::CudaError& e) {
    std::cerr << "iosim-peer: CUDA error: " << e.what() << "\n";
    return 4;
  } catch (const std::exception& e) {
    std::cerr << "iosim-peer: internal error: " << e.what() << "\n";
    return 5;
  }
}
