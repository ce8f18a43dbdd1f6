#include "sim/count/io_count.h"

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

KernelCount count_kernel(const trace::KernelTrace& kernel, const trace::TensorTable& tensors) {
  KernelCount kc{kernel.name(), workload::Pass::fwd, kernel.grid(), kernel.resources(), {}};
  const auto replica = kernel.replica_dims();
  const schedule::Dim3 g = kernel.grid();
  const i64 nx = replica[0] ? 1 : g.x, ny = replica[1] ? 1 : g.y, nz = replica[2] ? 1 : g.z;
  const i64 weight = (replica[0] ? g.x : 1) * (replica[1] ? g.y : 1) * (replica[2] ? g.z : 1);
  for (i64 z = 0; z < nz; ++z)
    for (i64 y = 0; y < ny; ++y)
      for (i64 x = 0; x < nx; ++x) {
        auto steps = kernel.cta_steps(x, y, z);
        while (steps.next()) add_step(kc.io, steps.value(), tensors, weight);
      }
  return kc;
}

RunCount count_run(const trace::AlgorithmTrace& run) {
  RunCount rc;
  for (const auto& entry : run.kernels) {
    KernelCount kc = count_kernel(*entry.kernel, *run.tensors);
    kc.pass = entry.pass;
    rc.io.add(kc.io);
    rc.kernels.push_back(std::move(kc));
  }
  return rc;
}

}  // namespace iosim::count
