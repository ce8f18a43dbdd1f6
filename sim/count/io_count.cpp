#include "sim/count/io_count.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace iosim::count {

void IoTotals::add(const IoTotals& o) {
  for (int t = 0; t < trace::kTensorCount; ++t) {
    by_tensor[t].read_bytes += o.by_tensor[t].read_bytes;
    by_tensor[t].write_bytes += o.by_tensor[t].write_bytes;
  }
  read_bytes += o.read_bytes;
  write_bytes += o.write_bytes;
  reduce_bytes += o.reduce_bytes;
  tensor_flops += o.tensor_flops;
  fp32_ops += o.fp32_ops;
  sfu_ops += o.sfu_ops;
  steps += o.steps;
}

void add_step(IoTotals& io, const trace::Step& step, const trace::TensorTable& tensors, i64 weight) {
  for (int k = 0; k < step.load_count; ++k) {
    const auto& a = step.loads[static_cast<size_t>(k)];
    const i64 bytes = tensors.tile_bytes(a) * weight;
    io.by_tensor[static_cast<int>(a.tensor)].read_bytes += bytes;
    io.read_bytes += bytes;
  }
  for (int k = 0; k < step.store_count; ++k) {
    const auto& a = step.stores[static_cast<size_t>(k)];
    const i64 bytes = tensors.tile_bytes(a) * weight;
    io.by_tensor[static_cast<int>(a.tensor)].write_bytes += bytes;
    io.write_bytes += bytes;
    if (a.kind == trace::AccessKind::ReduceAdd) io.reduce_bytes += bytes;
  }
  io.tensor_flops += step.compute.tensor_flops * weight;
  io.fp32_ops += step.compute.fp32_ops * weight;
  io.sfu_ops += step.compute.sfu_ops * weight;
  io.steps += weight;
}

namespace {
// CTAs walked: one index along each replica dimension.
i64 walked_ctas(const trace::KernelTrace& kernel) {
  const auto replica = kernel.replica_dims();
  const schedule::Dim3 g = kernel.grid();
  return (replica[0] ? 1 : g.x) * (replica[1] ? 1 : g.y) * (replica[2] ? 1 : g.z);
}
}  // namespace

// CTAs are independent, so long grids are split across hardware threads;
// each thread sums its own totals and the sums are exact integers.
i64 walk_threads(const trace::KernelTrace& kernel) {
  const i64 threads = std::clamp<i64>(static_cast<i64>(std::thread::hardware_concurrency()), 1, 16);
  return walked_ctas(kernel) >= 4096 ? threads : 1;
}

i64 walked_steps(const trace::KernelTrace& kernel, i64 kernel_steps) {
  return kernel_steps / (kernel.grid().count() / walked_ctas(kernel));  // replica CTAs have the same steps
}

KernelCount count_kernel(const trace::KernelTrace& kernel, const trace::TensorTable& tensors,
                         ProgressSink* progress) {
  KernelCount kc{kernel.name(), workload::Pass::fwd, kernel.grid(), kernel.resources(), {}};
  const auto replica = kernel.replica_dims();
  const schedule::Dim3 g = kernel.grid();
  const i64 nx = replica[0] ? 1 : g.x, ny = replica[1] ? 1 : g.y, nz = replica[2] ? 1 : g.z;
  const i64 weight = (replica[0] ? g.x : 1) * (replica[1] ? g.y : 1) * (replica[2] ? g.z : 1);
  const i64 ctas = nx * ny * nz;
  const i64 workers = walk_threads(kernel);
  std::vector<IoTotals> partial(static_cast<size_t>(workers));
  // Steps walked by all workers; the calling thread (worker 0) passes them on.
  std::atomic<i64> walked{0};
  i64 reported = 0;
  auto work = [&](i64 w) {
    IoTotals& io = partial[static_cast<size_t>(w)];
    i64 mine = 0;
    for (i64 c = w; c < ctas; c += workers) {
      const i64 x = c % nx, y = (c / nx) % ny, z = c / (nx * ny);
      auto steps = kernel.cta_steps(x, y, z);
      while (steps.next()) {
        add_step(io, steps.value(), tensors, weight);
        if (progress && ++mine % kProgressEverySteps == 0) {
          const i64 now = walked.fetch_add(kProgressEverySteps) + kProgressEverySteps;
          if (w == 0) {
            progress->add(now - reported);
            reported = now;
          }
        }
      }
    }
    if (progress) walked.fetch_add(mine % kProgressEverySteps);
  };
  std::vector<std::thread> pool;
  for (i64 w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  if (progress) progress->add(walked.load() - reported);
  for (const auto& p : partial) kc.io.add(p);
  return kc;
}

RunCount count_run(const trace::AlgorithmTrace& run, ProgressSink* progress) {
  RunCount rc;
  for (const auto& entry : run.kernels) {
    KernelCount kc = count_kernel(*entry.kernel, *run.tensors, progress);
    kc.pass = entry.pass;
    rc.io.add(kc.io);
    rc.kernels.push_back(std::move(kc));
  }
  return rc;
}

}  // namespace iosim::count
