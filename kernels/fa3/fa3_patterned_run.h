// Device buffers of one fa3 forward run on patterned inputs: Q, K and V hold
// a fixed sequence of values in [-1, 1] (a multiplicative hash of the index,
// rounded to the data type): finite, cheap at any size, no random generator.
// For timing (iosim-fa3-bench) and for comparing fa3's variants bit for bit
// (test_gpu_fa3); accuracy against the reference uses harness::check's inputs.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/common/attention_api.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/element_bits.h"
#include "sim/schedule/fa3_schedule.h"

namespace iosim::kernels::fa3 {

struct PatternedRun {
  AttentionConfig config;
  DeviceBuffer<std::uint16_t> q, k, v, o;
  DeviceBuffer<float> lse;

  explicit PatternedRun(const workload::Problem& p) {
    config.problem = p;
    config.block_m = schedule::Fa3ForwardSchedule::kBlockM;
    config.block_n = schedule::Fa3ForwardSchedule::kBlockN;
    const i64 nq = p.batch * p.heads * p.seq_q * p.head_dim, nk = p.batch * p.kv_heads * p.seq_k * p.head_dim;
    q = upload(pattern(nq, 2654435761u, p.dtype));
    k = upload(pattern(nk, 40503u, p.dtype));
    v = upload(pattern(nk, 2246822519u, p.dtype));
    o = DeviceBuffer<std::uint16_t>(static_cast<size_t>(nq));
    lse = DeviceBuffer<float>(static_cast<size_t>(p.batch * p.heads * p.seq_q));
  }
  ForwardBuffers buffers() const {
    ForwardBuffers b;
    b.q = q.get();
    b.k = k.get();
    b.v = v.get();
    b.o = o.get();
    b.lse = lse.get();
    return b;
  }
  // NaN bytes in O and L, so an unwritten element cannot match.
  void poison_outputs() {
    o.fill_bytes(0xFF);
    lse.fill_bytes(0xFF);
  }

 private:
  static std::vector<std::uint16_t> pattern(i64 n, std::uint32_t mult, workload::DType t) {
    std::vector<std::uint16_t> bits(static_cast<size_t>(n));
    for (size_t i = 0; i < bits.size(); ++i) {
      const std::uint32_t h = static_cast<std::uint32_t>(i) * mult;
      bits[i] = to_bits(static_cast<float>(h >> 16) / 32767.5f - 1.0f, t);
    }
    return bits;
  }
  static DeviceBuffer<std::uint16_t> upload(const std::vector<std::uint16_t>& host) {
    DeviceBuffer<std::uint16_t> d(host.size());
    d.upload(host);
    return d;
  }
};

}  // namespace iosim::kernels::fa3
