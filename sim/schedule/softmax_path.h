// Which path the row-softmax kernels take, for the kernels and for their warp
// programs (sim/schedule/warp_programs.cpp) alike.
#pragma once
#include "sim/common/hd.h"
#include "sim/schedule/attention_tiles.h"
#include "sim/schedule/kernel_schedules.h"

namespace iosim::schedule {

// The 16-byte path (kernels/standard/standard_attention.cu softmax_row_vec16):
// a row staged on chip, a length that is a multiple of 8, and mask blocks that
// no 8-column chunk straddles.
IOSIM_HD inline bool softmax_forward_vectorised(const RowSoftmaxSchedule& s, const AttentionTiles& t) {
  return s.row_fits_on_chip() && s.seq_k % 8 == 0 && (t.mask.active == nullptr || t.block_n % 8 == 0);
}

// The backward's 16-byte path (softmax_backward_row_vec16): a row staged on
// chip and a length that is a multiple of 8 (it tests no mask: P is 0 where
// the forward masked).
IOSIM_HD inline bool softmax_backward_vectorised(const RowSoftmaxSchedule& s) {
  return s.row_fits_on_chip() && s.seq_k % 8 == 0;
}

}  // namespace iosim::schedule
