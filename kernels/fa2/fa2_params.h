// Kernel parameters of the FlashAttention-2 kernels: plain structs passed by
// value, built by the launchers from an AttentionConfig and its schedule.
#pragma once
#include "kernels/common/attention_api.h"
#include "sim/schedule/kernel_schedules.h"

namespace iosim::kernels::fa2 {

struct ForwardParams {
  schedule::Fa2ForwardSchedule sched;  // grid, tiles (with the device block mask), heads
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // [batch][heads][seq_q], natural log
  Strides q_str, kv_str, o_str;
  float scale = 0;       // softmax scale
  float scale_log2 = 0;  // scale * log2(e): exponentials are exp2f with the scale folded in
  schedule::StepLog step_log;  // tests: the steps each CTA executes
};

struct BackwardParams {
  schedule::Fa2BackwardSchedule sched;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* d_o = nullptr;
  const float* lse = nullptr;  // [batch][heads][seq_q]
  const float* dvec = nullptr;  // D = rowsum(dO * O), [batch][heads][seq_q]
  void* dk = nullptr;
  void* dv = nullptr;
  float* dq_accum = nullptr;    // [batch][heads][seq_q][d] fp32
  Strides q_str, kv_str;       // dO shares Q's strides; dK/dV share K's
  float scale = 0;
  float scale_log2 = 0;
  schedule::StepLog step_log;  // tests: the steps each CTA executes
};

// Preprocess (D = rowsum(dO * O), dQaccum = 0) and dQ conversion kernels.
struct RowParams {
  schedule::RowBlockSchedule rows;
  i64 head_dim = 0;
  const void* o = nullptr;
  const void* d_o = nullptr;
  float* dvec = nullptr;
  float* dq_accum = nullptr;
  void* dq = nullptr;
  Strides q_str;  // O, dO, dQ
  float scale = 0;
};

}  // namespace iosim::kernels::fa2
