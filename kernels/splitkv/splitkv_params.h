// Kernel parameters of the split-KV kernels: plain structs passed by value,
// built by the launcher (splitkv_api.cu) from an AttentionConfig and the
// plan's schedules.
#pragma once
#include "kernels/common/attention_api.h"
#include "sim/schedule/kernel_schedules.h"

namespace iosim::kernels::splitkv {

struct ForwardParams {
  schedule::SplitKvSchedule sched;  // grid, tiles, heads, splits
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  float* o_accum = nullptr;    // [batch][heads][splits * seq_q][d] fp32, each split's normalised O
  float* lse_accum = nullptr;  // [batch][heads][splits * seq_q], natural log
  Strides q_str, kv_str;
  float scale = 0;
  float scale_log2 = 0;
  schedule::StepLog step_log;  // tests: the steps each CTA executes ({i, j, split, masked})
};

struct CombineParams {
  schedule::SplitKvCombineSchedule sched;
  const float* o_accum = nullptr;
  const float* lse_accum = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // [batch][heads][seq_q]
  Strides o_str;
};

}  // namespace iosim::kernels::splitkv
