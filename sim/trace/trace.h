// The trace: what each CTA of each kernel moves between shared memory and
// global memory, tile by tile, and how much it computes in between.
//
// A kernel's trace is a grid of CTAs; a CTA's trace is a sequence of Steps.
// A Step is "issue these tile loads, compute, issue these tile stores"; the
// timing engine overlaps step k+1's loads with step k's compute up to the
// kernel's pipeline depth. Tiles are addressed logically (tensor, batch, head,
// row range, column range); TensorTable maps them to byte addresses.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/hd.h"
#include "sim/schedule/kernel_schedules.h"
#include "sim/schedule/tensors.h"
#include "sim/schedule/warp_programs.h"
#include "sim/trace/generator.h"
#include "sim/workload/problem.h"

namespace iosim::trace {

// Every tensor a traced algorithm touches (named in sim/schedule/tensors.h).
using schedule::kTensorCount;
using schedule::tensor_name;
using schedule::TensorId;

// Read: a tile load. Write: a tile store. ReduceAdd: an fp32 atomic add
// performed at L2 (FlashAttention-2's dQ); it reads and writes at L2, but the
// SM only sends the operand, so it counts as SM->L2 write bytes.
enum class AccessKind : std::uint8_t { Read, Write, ReduceAdd };

struct TileAccess {
  TensorId tensor = TensorId::Q;
  AccessKind kind = AccessKind::Read;
  i64 batch = 0;
  i64 head = 0;  // head index within this tensor (KV head for K, V, dK, dV)
  i64 row0 = 0;
  i64 rows = 0;
  i64 col0 = 0;
  i64 cols = 0;
  // Rows written a piece at a time (a warp instruction's share of a 32-byte
  // sector, whole sectors on the crossbar each): `rows` rows in pieces of
  // `piece_rows` rows, `piece_step` rows apart (0: one contiguous tile).
  // Only for tensors whose rows are adjacent in memory.
  i64 piece_rows = 0;
  i64 piece_step = 0;
};

// Work between the loads and the stores of one step.
struct ComputeWork {
  i64 tensor_flops = 0;  // matrix-multiply FLOPs (2 per multiply-add) on tensor cores
  i64 fp32_ops = 0;      // max, sum, scale, rescale, masking on the FP32 pipes
  i64 sfu_ops = 0;       // exponentials on the special-function units
  // The warp program the step runs (schedule::StepProgram, an index into its
  // kernel's schedule::KernelPrograms); -1: none (trace files, or nothing to run).
  int program = -1;
};

struct Step {
  static constexpr int kMaxLoads = 8;
  static constexpr int kMaxStores = 6;
  std::array<TileAccess, kMaxLoads> loads{};
  std::array<TileAccess, kMaxStores> stores{};
  int load_count = 0;
  int store_count = 0;
  ComputeWork compute{};

  void load(const TileAccess& a);
  void store(const TileAccess& a);
  // Forgets the accesses without zeroing the arrays: steps are built in a hot loop.
  void clear() {
    load_count = store_count = 0;
    compute = {};
  }
};

// Geometry of one tensor in global memory.
struct TensorInfo {
  bool used = false;
  i64 batch = 0, heads = 0, rows = 0, cols = 0;
  i64 elem_bytes = 0;
  workload::Layout layout = workload::Layout::bhsd;
  u64 base = 0;  // byte address; allocations are 2 MiB aligned like cudaMalloc's large blocks
  i64 pitch = 0;  // elements from one row to the next (>= cols; schedule::score_row_pitch for N x N tensors)
  i64 bytes() const { return batch * heads * rows * pitch * elem_bytes; }
};

// Byte addresses of every tensor of a problem.
class TensorTable {
 public:
  // `splits` > 0 adds splitkv's per-split partials Oaccum and LSEaccum
  // (fp32, [batch][head][split * seq_q + row]); 0 leaves them out.
  explicit TensorTable(const workload::Problem& p, i64 splits = 0);
  const TensorInfo& info(TensorId t) const { return tensors_[static_cast<int>(t)]; }
  i64 tile_bytes(const TileAccess& a) const { return a.rows * a.cols * info(a.tensor).elem_bytes; }
  u64 address(TensorId t, i64 batch, i64 head, i64 row, i64 col) const;
  // Calls fn(address, bytes) for each contiguous byte range of the tile,
  // merging rows that are adjacent in memory.
  void for_each_segment(const TileAccess& a, const std::function<void(u64, i64)>& fn) const;
  u64 end_address() const { return end_; }

 private:
  std::array<TensorInfo, kTensorCount> tensors_{};
  u64 end_ = 0;
};

// Per-CTA resources that set occupancy.
struct CtaResources {
  i64 threads = 128;
  i64 smem_bytes = 0;
  i64 regs_per_thread = 128;
};

// One kernel of a pass. cta_steps() replays the CTA at grid position (x, y, z).
class KernelTrace {
 public:
  virtual ~KernelTrace() = default;
  virtual std::string name() const = 0;
  virtual schedule::Dim3 grid() const = 0;
  virtual CtaResources resources() const = 0;
  // Tile loads the kernel keeps in flight ahead of compute (software pipelining).
  virtual int pipeline_stages() const { return 2; }
  // What each warp issues per kind of step (null: unknown; the engine then
  // times steps from their ComputeWork counts alone).
  virtual std::shared_ptr<const schedule::KernelPrograms> programs() const { return nullptr; }
  virtual Generator<Step> cta_steps(i64 x, i64 y, i64 z) const = 0;
  // Grid dimensions whose index only selects a head or a batch entry: every
  // index along such a dimension has the same trace up to addresses, so byte
  // counting walks index 0 and multiplies by the extent.
  virtual std::array<bool, 3> replica_dims() const { return {false, true, true}; }
  // Bytes the kernel's TMA boxes carry past its tensors' ends (zero-filled):
  // on the SM<->L2 crossbar's read counter, in no memory (the trace's loads
  // stop at the tensors' ends).
  virtual i64 zero_fill_read_bytes() const { return 0; }
};

using KernelList = std::vector<std::unique_ptr<KernelTrace>>;

}  // namespace iosim::trace
