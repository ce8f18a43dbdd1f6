// An attention problem's trace as the engine tests build it: B x H heads of
// N x d (N_q = seq_q when given), the profile's shared memory as the tiling's
// limit (the paper's rule).
#pragma once
#include "sim/profile/hardware_profile.h"
#include "sim/trace/algorithms.h"

namespace iosim::testing {

inline trace::AlgorithmTrace build_attention(const profile::HardwareProfile& p, workload::Algorithm a,
                                             workload::Pass pass, i64 batch, i64 heads, i64 n, i64 d,
                                             bool causal = false, i64 kv_heads = 0, i64 seq_q = 0) {
  workload::Problem prob;
  prob.batch = batch;
  prob.heads = heads;
  prob.kv_heads = kv_heads > 0 ? kv_heads : heads;
  prob.seq_k = n;
  prob.seq_q = seq_q > 0 ? seq_q : n;
  prob.head_dim = d;
  prob.causal = causal;
  trace::TraceOptions o;
  o.algorithm = a;
  o.pass = pass;
  o.sram_limit_bytes = p.smem_per_block_bytes;
  return trace::build_trace(prob, o);
}

}  // namespace iosim::testing
