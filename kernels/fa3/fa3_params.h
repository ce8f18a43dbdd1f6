// Kernel parameters of the FlashAttention-3 forward kernel: a plain struct
// passed by value (__grid_constant__, so the TMA descriptors stay in the
// parameter space the TMA unit reads them from).
#pragma once
#include <cuda.h>  // CUtensorMap (the type only)

#include "kernels/common/attention_api.h"
#include "sim/schedule/fa3_schedule.h"

namespace iosim::kernels::fa3 {

struct ForwardParams {
  CUtensorMap tma_q, tma_k, tma_v;  // 4-D maps {d, seq, heads, batch}, boxes of 64 columns x 128 rows
  schedule::Fa3ForwardSchedule sched;
  void* o = nullptr;
  float* lse = nullptr;  // [batch][heads][seq_q], natural log
  Strides o_str;
  float scale = 0;       // softmax scale
  float scale_log2 = 0;  // scale * log2(e): exponentials are exp2 with the scale folded in
  // Scheduling choices (ForwardVariant) that leave every number unchanged.
  bool pingpong = true;
  bool v_after_next_k = true;
};

// Choices the tests and the bench vary; fa3_forward uses the defaults.
struct ForwardVariant {
  bool pingpong = true;          // consumers take turns issuing their GEMMs (named barriers)
  bool v_after_next_k = true;  // the producer loads K_{n+1} before V_n (else K_n, V_n together)
};

}  // namespace iosim::kernels::fa3
