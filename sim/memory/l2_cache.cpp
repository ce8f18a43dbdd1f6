#include "sim/memory/l2_cache.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/common/error.h"

namespace iosim::memory {

namespace {

constexpr double kNever = -std::numeric_limits<double>::infinity();

bool is_pow2(i64 v) { return v > 0 && (v & (v - 1)) == 0; }

// Sector masks are 8 bits; a table avoids a libgcc call where the build does
// not enable the popcnt instruction.
constexpr std::array<std::uint8_t, 256> kPopcount = [] {
  std::array<std::uint8_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(i));
  return t;
}();
int popc(unsigned v) { return kPopcount[v & 0xffu]; }

// Lemire's fast modulo for 32-bit values.
u64 mod_magic(u64 d) { return ~u64{0} / d + 1; }
u64 fast_mod(std::uint32_t a, u64 magic, u64 d) {
  const u64 low = magic * a;
  return static_cast<u64>((static_cast<unsigned __int128>(low) * d) >> 64);
}

// XOR-fold of a line index to 32 bits (before the modulo by the set count).
u64 fold32(u64 line) {
  const u64 h = line ^ (line >> 9) ^ (line >> 18) ^ (line >> 27) ^ (line >> 36) ^ (line >> 45);
  return (h ^ (h >> 32)) & 0xffffffffu;
}

u64 hash_key(u64 addr, i64 row_bytes, i64 rows, i64 stride, unsigned view = 0) {
  u64 h = addr * 0x9e3779b97f4a7c15ull + view * 0xd6e8feb86659fd93ull;
  h ^= static_cast<u64>(row_bytes) + 0x7f4a7c15ull + (h << 6) + (h >> 2);
  h ^= static_cast<u64>(rows) * 0xbf58476d1ce4e5b9ull + (h << 6) + (h >> 2);
  h ^= static_cast<u64>(stride) * 0x94d049bb133111ebull + (h << 6) + (h >> 2);
  return h ^ (h >> 29);
}

}  // namespace

// ---------------------------------------------------------------------------
void L2Geometry::validate() const {
  auto bad = [](const std::string& what) { throw InputError("L2 geometry: " + what); };
  if (!is_pow2(line_bytes)) bad("line size must be a power of two (got " + std::to_string(line_bytes) + ")");
  if (!is_pow2(sector_bytes) || sector_bytes > line_bytes)
    bad("sector size must be a power of two no larger than the line (got " + std::to_string(sector_bytes) + ")");
  if (line_bytes / sector_bytes > 8) bad("at most 8 sectors per line are supported");
  if (ways < 1 || ways > 64) bad("associativity must be between 1 and 64 ways");
  if (partitions < 1 || partitions > 8) bad("partitions must be between 1 and 8");
  if (capacity_bytes <= 0 || capacity_bytes % (line_bytes * ways) != 0)
    bad("capacity " + std::to_string(capacity_bytes) + " B is not a whole number of sets of " +
        std::to_string(ways) + " ways x " + std::to_string(line_bytes) + " B");
  if (sets() > (i64{1} << 32)) bad("too many sets");
}

L2Geometry L2Geometry::from_profile(const profile::HardwareProfile& p) {
  L2Geometry g{p.l2_model_bytes(), p.l2_line_bytes, p.l2_sector_bytes, p.l2_associativity, p.l2_partitions};
  g.validate();
  return g;
}

void L2KindCounts::add(const L2KindCounts& o) {
  requests += o.requests;
  merged_requests += o.merged_requests;
  bytes += o.bytes;
  sectors += o.sectors;
  hit_sectors += o.hit_sectors;
  miss_sectors += o.miss_sectors;
  lookup_sectors += o.lookup_sectors;
  lookup_hit_sectors += o.lookup_hit_sectors;
  lookup_miss_sectors += o.lookup_miss_sectors;
}

L2KindCounts L2KindCounts::minus(const L2KindCounts& o) const {
  return {requests - o.requests,
          merged_requests - o.merged_requests,
          bytes - o.bytes,
          sectors - o.sectors,
          hit_sectors - o.hit_sectors,
          miss_sectors - o.miss_sectors,
          lookup_sectors - o.lookup_sectors,
          lookup_hit_sectors - o.lookup_hit_sectors,
          lookup_miss_sectors - o.lookup_miss_sectors};
}

L2KindCounts L2Counters::total() const {
  L2KindCounts t;
  for (const auto& k : kind) t.add(k);
  return t;
}

L2Counters L2Counters::minus(const L2Counters& o) const {
  L2Counters d;
  for (int k = 0; k < kAccessKinds; ++k) d.kind[static_cast<size_t>(k)] = kind[static_cast<size_t>(k)].minus(o.kind[static_cast<size_t>(k)]);
  d.tensor.resize(tensor.size());
  for (size_t t = 0; t < tensor.size(); ++t) {
    const L2TensorCounts z{};
    const L2TensorCounts& b = t < o.tensor.size() ? o.tensor[t] : z;
    const L2TensorCounts& a = tensor[t];
    d.tensor[t] = {a.read_bytes - b.read_bytes,       a.write_bytes - b.write_bytes,
                   a.hit_sectors - b.hit_sectors,     a.miss_sectors - b.miss_sectors,
                   a.fetch_sectors - b.fetch_sectors, a.writeback_sectors - b.writeback_sectors};
  }
  d.fetch_sectors = fetch_sectors - o.fetch_sectors;
  d.writeback_sectors = writeback_sectors - o.writeback_sectors;
  d.early_writeback_sectors = early_writeback_sectors - o.early_writeback_sectors;
  d.line_visits = line_visits - o.line_visits;
  d.fast_path_requests = fast_path_requests - o.fast_path_requests;
  d.dirty_mark_visits = dirty_mark_visits - o.dirty_mark_visits;
  d.unsampled_requests = unsampled_requests - o.unsampled_requests;
  return d;
}

void L2Counters::add(const L2Counters& o) {
  for (int k = 0; k < kAccessKinds; ++k) kind[static_cast<size_t>(k)].add(o.kind[static_cast<size_t>(k)]);
  if (tensor.size() < o.tensor.size()) tensor.resize(o.tensor.size());
  for (size_t t = 0; t < o.tensor.size(); ++t) {
    auto& a = tensor[t];
    const auto& b = o.tensor[t];
    a.read_bytes += b.read_bytes;
    a.write_bytes += b.write_bytes;
    a.hit_sectors += b.hit_sectors;
    a.miss_sectors += b.miss_sectors;
    a.fetch_sectors += b.fetch_sectors;
    a.writeback_sectors += b.writeback_sectors;
  }
  fetch_sectors += o.fetch_sectors;
  writeback_sectors += o.writeback_sectors;
  early_writeback_sectors += o.early_writeback_sectors;
  line_visits += o.line_visits;
  fast_path_requests += o.fast_path_requests;
  dirty_mark_visits += o.dirty_mark_visits;
  unsampled_requests += o.unsampled_requests;
}

// ---------------------------------------------------------------------------
struct L2Cache::TileRecord {
  u64 addr = 0;
  i64 row_bytes = 0, rows = 0, stride = 0;
  double last_read_lookup = kNever;
  double data_ready = 0;  // when the last read lookup's data arrived
  double fill_ready = 0;  // latest fill-ready time over owned lines
  i64 sectors = 0;        // requested sectors of one access
  i64 sampled_sectors = 0;  // ... in sampled sets (set sampling; else = sectors)
  u32 lookups = 0;        // non-merged lookups so far
  u32 owner_id = 0;        // its id as an owner of lines (0 = owns none)
  std::uint8_t partition_mask = 0;
  std::uint8_t idle_owns = 0;  // line-by-line visits in a row whose ownership no shortcut used
  bool owner = false;      // took ownership of its lines at its last line-by-line visit
  bool used = false;       // ... and a shortcut (fast path, dirty bits only) used it since
  bool valid = false;      // owns all of them, all requested sectors valid
  bool all_dirty = false;  // ... and dirty
  trace::TensorIndex tensor = 0;
  // With copies, a read's record is its requester partition's (it owns that
  // partition's slots: the near lines' homes and the far lines' copies); a
  // write's or reduction's is view kWriteView (the homes). 0 without copies.
  std::uint8_t view = 0;
};

// Work of one access done line by line.
struct L2Cache::Visit {
  u32 stamp = 0;  // this lookup's recency stamp
  i64 hits = 0, misses = 0, fetch = 0, writeback = 0;
  double pending = 0;
  unsigned partition_mask = 0;
  bool evicted_own = false;
  bool all_dirty = true;
};

// Line-state storage: one zeroed allocation, on 2 MiB pages where the kernel
// offers them (a 40-60 MiB L2 needs 7-10 MB of state, touched at random).
struct L2Cache::Block {
  explicit Block(size_t bytes) {
    constexpr size_t kPage = size_t{2} << 20;
    size_ = (bytes + kPage - 1) / kPage * kPage;
    data_ = static_cast<std::byte*>(std::aligned_alloc(kPage, size_));
    if (data_ == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(data_, size_, MADV_HUGEPAGE);
#endif
    std::memset(data_, 0, size_);
  }
  ~Block() { std::free(data_); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

L2Cache::L2Cache(const L2Geometry& geometry, const L2Options& options)
    : geometry_(geometry), options_(options), policy_(make_replacement_policy(options.replacement)) {
  geometry_.validate();
  if (options_.merge_window_cycles < 0) throw InputError("L2 merge window must be >= 0 cycles");
  if (!(options_.dirty_limit_bytes >= 0))
    throw InputError("L2 dirty limit must be >= 0 bytes (or infinite: evictions only)");
  limited_ = options_.dirty_limit_bytes < std::numeric_limits<double>::infinity();
  if (options_.max_tile_records < 16 || options_.max_tile_records > (i64{1} << 30))
    throw InputError("L2 tile record limit must be between 16 and 2^30");
  if (options_.fill_tickets_held < 0) throw InputError("L2 fill tickets held must be >= 0 (0: all)");
  if (options_.copies && (geometry_.partitions != 2 || options_.set_sampling != 1))
    throw InputError("L2 copies need 2 partitions and no set sampling");
  min_fill_compaction_ = options_.fill_tickets_held == 0 ? std::numeric_limits<size_t>::max()
                                                         : static_cast<size_t>(options_.fill_tickets_held);
  fill_compaction_size_ = min_fill_compaction_;
  hit_refreshes_ = policy_->hit_refreshes();
  compact_ = geometry_.ways == 16 && options_.ordered_sets;
  partitions_pow2_ = is_pow2(geometry_.partitions);
  rule_ = replacement_rule(options_.replacement);
  sets_ = geometry_.sets();
  sampling_ = options_.set_sampling;
  if (!is_pow2(sampling_) || sampling_ > 256)
    throw InputError("L2 set sampling must be a power of two from 1 to 256 (got " + std::to_string(sampling_) + ")");
  if (sampling_ > 1) {
    if (!is_pow2(geometry_.partitions))
      throw InputError("L2 set sampling needs a power-of-two partition count (got " + std::to_string(geometry_.partitions) + ")");
    partition_bits_ = static_cast<unsigned>(std::countr_zero(static_cast<u64>(geometry_.partitions)));
    if (sets_ % (sampling_ << partition_bits_) != 0)
      throw InputError("L2 set sampling 1/" + std::to_string(sampling_) + ": the " + std::to_string(sets_) +
                       " sets are not a multiple of " + std::to_string(sampling_ << partition_bits_) +
                       " (sampling x partitions); use a smaller sampling factor");
  }
  stored_sets_ = sets_ / sampling_;
  if (sampling_ > 1) choose_sampled_sets();
  ways_ = static_cast<int>(geometry_.ways);
  line_shift_ = static_cast<unsigned>(std::countr_zero(static_cast<u64>(geometry_.line_bytes)));
  sector_shift_ = static_cast<unsigned>(std::countr_zero(static_cast<u64>(geometry_.sector_bytes)));
  set_mod_magic_ = mod_magic(static_cast<u64>(sets_));
  all_ways_ = ways_ == 64 ? ~u64{0} : (u64{1} << ways_) - 1;
  const size_t w = static_cast<size_t>(ways_);
  meta_bytes_ = (2 * sizeof(u64) + 3 * w + 63) / 64 * 64;
  set_stride_ = meta_bytes_ + (4 * sizeof(u32) * w + 63) / 64 * 64;
  prefetch_bytes_ = meta_bytes_ + 3 * sizeof(u32) * w;
  if (compact_ && set_stride_ != kCompactStride) throw std::logic_error("16-way set layout");
  block_ = std::make_unique<Block>(set_stride_ * static_cast<size_t>(stored_sets_));
  if (limited_)  // the sampled sets hold 1 / sampling_ of the dirty lines
    dirty_limit_sectors_ = static_cast<i64>(options_.dirty_limit_bytes / static_cast<double>(geometry_.sector_bytes) /
                                            static_cast<double>(sampling_));
  records_.reserve(static_cast<size_t>(options_.max_tile_records) + 2);
  records_.emplace_back();
  release_all_owners();
  record_slots_.assign(std::bit_ceil(static_cast<u64>(options_.max_tile_records) * 2), 0);
}

L2Cache::~L2Cache() = default;

// Per set: a 16-byte header, valid[W], dirty[W], tensor[W] padded to 64 B,
// then tags, stamps, fill times and owners (W x 4 B each). A line's owner is
// meaningful only while its bit in owned_ways is set, so requests that
// involve no tile record never read the owners.
L2Cache::SetView L2Cache::set_view(u64 set) const { return set_view(block_->data_, set); }

L2Cache::SetView L2Cache::set_view(std::byte* block, u64 set) const {
  return compact_ ? set_view_of<16>(block, set) : set_view_of<0>(block, set);
}

template <int W>
L2Cache::SetView L2Cache::set_view_of(std::byte* block, u64 set) const {
  constexpr bool compact = W == 16;
  return {block + set * (compact ? kCompactStride : set_stride_), compact ? 16 : static_cast<size_t>(ways_),
          compact ? 64 : meta_bytes_, compact};
}

// XOR-fold of the line address (the real hash is unpublished), then modulo
// the set count, which need not be a power of two (A100: 20,480 sets).
u64 L2Cache::set_of(u64 line) const {
  return fast_mod(static_cast<std::uint32_t>(fold32(line)), set_mod_magic_, static_cast<u64>(sets_));
}

int L2Cache::partition_of(u64 addr) const { return static_cast<int>(partition_of_set(set_of(addr >> line_shift_))); }

// Sets alternate between partitions (so consecutive lines do too).
unsigned L2Cache::partition_of_set(u64 set) const {
  if (geometry_.partitions == 1) return 0;
  if (geometry_.partitions == 2) return static_cast<unsigned>(set & 1u);
  return static_cast<unsigned>(set % static_cast<u64>(geometry_.partitions));
}

// Picks sets_ / sampling_ sets: the groups (sets equal but for their
// partition bits) with the lowest values of a fixed 64-bit mix of their index.
void L2Cache::choose_sampled_sets() {
  const u64 groups = static_cast<u64>(sets_) >> partition_bits_;
  std::vector<std::pair<u64, u64>> keyed(groups);
  for (u64 g = 0; g < groups; ++g) {
    u64 h = (g + 1) * 0x9e3779b97f4a7c15ull;  // splitmix64 finaliser
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    keyed[g] = {h ^ (h >> 31), g};
  }
  const u64 kept = groups / static_cast<u64>(sampling_);
  std::nth_element(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(kept), keyed.end());
  std::sort(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(kept),
            [](const auto& x, const auto& y) { return x.second < y.second; });  // stored in set order
  stored_index_.assign(static_cast<size_t>(sets_), kUnsampled);
  sampled_bits_.assign(static_cast<size_t>(sets_ + 63) / 64, 0);
  const u64 per_group = u64{1} << partition_bits_;
  for (u64 k = 0; k < kept; ++k)
    for (u64 p = 0; p < per_group; ++p) {
      const u64 set = keyed[k].second * per_group + p;
      stored_index_[set] = static_cast<u32>(k * per_group + p);
      sampled_bits_[set >> 6] |= u64{1} << (set & 63);
    }
  block_offsets_.clear();
  block_first_.assign(1, 0);
  if (sets_ % 512 != 0) return;
  for (u64 chunk = 0; chunk < static_cast<u64>(sets_) / 512; ++chunk)
    for (u64 low = 0; low < 16; ++low) {
      for (u64 o = low; o < 512; o += 16)
        if (is_sampled_set(chunk * 512 + o)) block_offsets_.push_back(static_cast<std::uint16_t>(o));
      block_first_.push_back(static_cast<u32>(block_offsets_.size()));
    }
}

L2Counters L2Cache::counters() const {
  L2Counters c = counters_;
  if (sampling_ > 1)
    for (L2TensorCounts& t : c.tensor) t.writeback_sectors *= sampling_;
  return c;
}

bool L2Cache::sampled(u64 addr) const { return is_sampled_set(set_of(addr >> line_shift_)); }

bool L2Cache::holds(u64 addr) const {
  const u64 line = addr >> line_shift_;
  if ((line >> 32) != line_high_) return false;
  const u64 set = set_of(line);
  if (!is_sampled_set(set)) return false;
  const SetView s = set_view(stored_set(set));
  const unsigned sector = static_cast<unsigned>((addr & static_cast<u64>(geometry_.line_bytes - 1)) >> sector_shift_);
  for (int w = 0; w < ways_; ++w)
    if (((s.valid_ways() >> w) & 1u) != 0 && s.tag()[w] == static_cast<u32>(line)) return (s.valid()[w] >> sector) & 1u;
  return false;
}

i64 L2Cache::resident_sectors() const {
  i64 n = 0;
  for (i64 set = 0; set < stored_sets_; ++set) {
    const SetView s = set_view(static_cast<u64>(set));
    for (int w = 0; w < ways_; ++w) n += popc(s.valid()[w]);
  }
  return n * sampling_;
}

// Tags keep the low 32 bits of line indices: every address of a run must lie
// in one 512 GiB window (2^32 lines of 128 B), true of any single GPU's tensors.
void L2Cache::check_address_window(const trace::RangeAccess& a) {
  if (a.tensor >= trace::kMaxFileTensors)
    throw InputError("tensor index " + std::to_string(a.tensor) + " out of range (valid: 0.." +
                     std::to_string(trace::kMaxFileTensors - 1) + ")");
  if (a.rows < 1 || a.row_bytes < 0 || (a.rows > 1 && a.stride < 0))
    throw InputError("malformed tile request: rows must be >= 1, row bytes and stride >= 0");
  if (a.bytes() == 0) return;
  const u64 first = a.addr >> line_shift_;
  const u64 last = (a.addr + static_cast<u64>((a.rows - 1) * a.stride + a.row_bytes - 1)) >> line_shift_;
  if (line_high_ == ~u64{0}) line_high_ = first >> 32;
  if ((first >> 32) != line_high_ || (last >> 32) != line_high_)
    throw InputError("trace addresses span more than one " + std::to_string((u64{1} << 32) >> (30 - line_shift_)) +
                     " GiB window (the L2 model keeps 32-bit line tags); rebase the addresses");
}

u32 L2Cache::encode_ready(double t) const {
  const double rel = std::ceil(t - ready_base_);
  if (rel <= 0) return 0;
  if (rel >= 4294967295.0)
    throw InputError("a kernel runs longer than 2^32 cycles; the L2 model keeps 32-bit fill times");
  return static_cast<u32>(rel);
}

void L2Cache::begin_kernel(double now) {
  if (compact_) {  // tickets of earlier kernels mean no fill in flight
    first_ticket_ = clock_;
    fill_at_.clear();
    fill_compaction_size_ = min_fill_compaction_;
    fill_horizon_ = -std::numeric_limits<double>::infinity();
  } else {
    for (i64 set = 0; set < stored_sets_; ++set) {
      const SetView s = set_view(static_cast<u64>(set));
      std::fill(s.ready(), s.ready() + ways_, 0u);
    }
  }
  ready_base_ = now;
  for (auto& r : records_) r.fill_ready = std::min(r.fill_ready, now);
}

// ---------------------------------------------------------------------------
// Tile records.
// Slots hold (32-bit fingerprint of the key, record id); the record itself
// is read only when the fingerprints agree.
u32 L2Cache::find_or_create_record(const trace::RangeAccess& a, double now, unsigned view) {
  const u64 mask = record_slots_.size() - 1;
  const u64 h = hash_key(a.addr, a.row_bytes, a.rows, a.stride, view);
  const u64 fingerprint = h >> 32;
  for (u64 i = h & mask;; i = (i + 1) & mask) {
    const u64 slot = record_slots_[i];
    if (slot == 0) break;
    if ((slot >> 32) != fingerprint) continue;
    const u32 r = static_cast<u32>(slot);
    const TileRecord& t = records_[r];
    if (t.addr == a.addr && t.row_bytes == a.row_bytes && t.rows == a.rows && t.stride == a.stride && t.view == view)
      return r;
  }
  if (static_cast<i64>(records_.size()) > options_.max_tile_records) rebuild_records(now);
  const u32 id = static_cast<u32>(records_.size());
  TileRecord& t = records_.emplace_back();  // in place: a copy from the stack stalls on store forwarding
  t.addr = a.addr;
  t.row_bytes = a.row_bytes;
  t.rows = a.rows;
  t.stride = a.stride;
  t.view = static_cast<std::uint8_t>(view);
  insert_slot(h, id);
  return id;
}

// The record's hash slot, and the set blocks of the request's first lines
// (a small request's lines would otherwise all wait for host memory at once).
void L2Cache::prefetch(const trace::RangeAccess& a) const {
  const u64 h = hash_key(a.addr, a.row_bytes, a.rows, a.stride);
  __builtin_prefetch(record_slots_.data() + (h & (record_slots_.size() - 1)));
  // Sampled sets are few enough to stay in the host's caches.
  if (a.row_bytes <= 0 || a.rows < 1 || sampling_ > 1) return;
  constexpr i64 kLines = 4;
  const i64 per_row = std::min(kLines, static_cast<i64>(((a.addr + static_cast<u64>(a.row_bytes) - 1) >> line_shift_) -
                                                        (a.addr >> line_shift_) + 1));
  const i64 rows = std::min(a.rows, std::max<i64>(1, kLines / per_row));
  for (i64 r = 0; r < rows; ++r)
    for (i64 j = 0; j < per_row; ++j) {
      const u64 set = set_of(((a.addr + static_cast<u64>(r * a.stride)) >> line_shift_) + static_cast<u64>(j));
      if (!is_sampled_set(set)) continue;
      const std::byte* b = block_->data_ + stored_set(set) * set_stride_;
      for (size_t k = 0; k < prefetch_bytes_; k += 64) __builtin_prefetch(b + k, 1);
    }
}

void L2Cache::insert_slot(u64 h, u32 id) {
  const u64 mask = record_slots_.size() - 1;
  for (u64 i = h & mask;; i = (i + 1) & mask)
    if (record_slots_[i] == 0) {
      record_slots_[i] = ((h >> 32) << 32) | id;
      return;
    }
}

// Owner ids. Lines name their owning record by a small id that is recycled
// as soon as no line holds it, so the owners' stamps and records sit in
// short arrays that stay in the host's caches during victim choice.
u32 L2Cache::acquire_owner(u32 record) {
  u32 id;
  if (!free_owners_.empty()) {
    id = free_owners_.back();
    free_owners_.pop_back();
  } else {
    id = static_cast<u32>(owner_stamp_.size());
    owner_stamp_.push_back(0);
    owner_record_.push_back(0);
    owner_lines_.push_back(0);
  }
  owner_stamp_[id] = 0;
  owner_record_[id] = record;
  owner_lines_[id] = 0;
  return id;
}

// Returns the ids whose last line went (listed in released_) to the free list.
void L2Cache::recycle_owners() {
  for (const u32 id : released_) {
    if (owner_lines_[id] != 0 || owner_record_[id] == 0) continue;
    records_[owner_record_[id]].owner_id = 0;
    owner_record_[id] = 0;
    owner_stamp_[id] = 0;
    free_owners_.push_back(id);
  }
  released_.clear();
}

void L2Cache::release_all_owners() {
  owner_stamp_.assign(1, 0);  // id 0: no owner, stamp 0
  owner_record_.assign(1, 0);
  owner_lines_.assign(1, 0);
  free_owners_.clear();
  released_.clear();
}

// Drops records that can no longer merge. Ownership is given back to the
// lines first (each keeps max(own stamp, owner's stamp)), so replacement
// decisions do not change; only the fast path is lost until tiles repeat.
void L2Cache::rebuild_records(double now) {
  for (i64 set = 0; any_owner_ && set < stored_sets_; ++set) {
    const SetView s = set_view(static_cast<u64>(set));
    if (s.owned_ways() == 0) continue;
    fold_owner_stamps(s);
    s.set_owned_ways(0);
  }
  release_all_owners();
  size_t kept = 1;  // compacted in place: no allocation
  for (size_t r = 1; r < records_.size(); ++r) {
    TileRecord t = records_[r];
    if (!(now - t.last_read_lookup < options_.merge_window_cycles)) continue;
    t.owner = t.valid = t.all_dirty = false;
    t.fill_ready = 0;
    t.owner_id = 0;
    records_[kept++] = t;
  }
  records_.resize(kept);
  std::fill(record_slots_.begin(), record_slots_.end(), 0);
  for (u32 id = 1; id < records_.size(); ++id) {
    const TileRecord& t = records_[id];
    insert_slot(hash_key(t.addr, t.row_bytes, t.rows, t.stride, t.view), id);
  }
  last_record_ = 0;
  any_owner_ = false;
}

// ---------------------------------------------------------------------------
// Line by line. The per-line work is templated on the associativity (16 in
// every profile; 0 = any, at run time), the access kind and whether the tile
// takes ownership, so the hot loop has no per-line dispatch.
template <int W>
struct L2Cache::Ways {
  int n;
  int get() const { return W > 0 ? W : n; }
};

namespace {

// Bit per way whose 32-bit value equals `value` (W: ways at compile time, 0 = n).
template <int W>
u64 match_ways(const u32* v, u32 value, int runtime_ways) {
  const int n = W > 0 ? W : runtime_ways;
  u64 match = 0;
  int w = 0;
#if defined(__SSE2__)
  const __m128i wanted = _mm_set1_epi32(static_cast<int>(value));
  if constexpr (W == 16) {  // four compares packed to 16 bytes, one mask
    auto eq = [&](int k) { return _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + k)), wanted); };
    const __m128i bytes = _mm_packs_epi16(_mm_packs_epi32(eq(0), eq(4)), _mm_packs_epi32(eq(8), eq(12)));
    return static_cast<u64>(_mm_movemask_epi8(bytes));
  }
  for (; w + 4 <= n; w += 4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + w));
    match |= static_cast<u64>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, wanted)))) << w;
  }
#endif
  for (; w < n; ++w) match |= static_cast<u64>(v[w] == value) << w;
  return match;
}

// The smallest of n values (values stay below 2^31, so the signed SSE2
// compares order them correctly).
template <int W>
u32 lowest_value(const u32* v, int runtime_ways) {
  const int n = W > 0 ? W : runtime_ways;
  int w = 0;
  u32 lowest = ~u32{0};
#if defined(__SSE2__)
  if (n >= 4) {
    __m128i best = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v));
    for (w = 4; w + 4 <= n; w += 4) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + w));
      const __m128i greater = _mm_cmpgt_epi32(best, x);
      best = _mm_or_si128(_mm_and_si128(greater, x), _mm_andnot_si128(greater, best));
    }
    __m128i x = _mm_shuffle_epi32(best, 0x4e);  // swap halves, then neighbours
    __m128i greater = _mm_cmpgt_epi32(best, x);
    best = _mm_or_si128(_mm_and_si128(greater, x), _mm_andnot_si128(greater, best));
    x = _mm_shuffle_epi32(best, 0xb1);
    greater = _mm_cmpgt_epi32(best, x);
    best = _mm_or_si128(_mm_and_si128(greater, x), _mm_andnot_si128(greater, best));
    lowest = static_cast<u32>(_mm_cvtsi128_si32(best));
  }
#endif
  for (int r = w; r < n; ++r) lowest = std::min(lowest, v[r]);
  return lowest;
}

int popc16(u64 v) { return kPopcount[v & 0xffu] + kPopcount[(v >> 8) & 0xffu]; }

// A 16-way set's LRU order as 16 nibbles: nibble k (k < n, n = valid ways) is
// the way k-th from the least recently used end, sorted by (stamp, way), so the
// victim of a full set is nibble 0 unless a tile record has raised its stamp.
// Each function is a few shifts and masks.
namespace order16 {
constexpr u64 kOnes = 0x1111111111111111ull;
inline unsigned at(u64 order, unsigned p) { return static_cast<unsigned>(order >> (4 * p)) & 15u; }
inline u64 below(unsigned p) { return (u64{1} << (4 * p)) - 1; }  // p < 16
// Removes the entry at p (< 16); the freed top nibble becomes 0.
inline u64 remove_at(u64 order, unsigned p) { return (order & below(p)) | ((order >> 4) & ~below(p)); }
// Inserts way w at p (< 16) into a list of fewer than 16 entries.
inline u64 insert_at(u64 order, unsigned p, unsigned w) {
  return (order & below(p)) | ((order & ~below(p)) << 4) | (u64{w} << (4 * p));
}
// Position of way w, which must be listed: the lowest zero nibble of order ^ w
// (the borrow trick can only mark nibbles above the first zero).
inline unsigned find(u64 order, unsigned w) {
  const u64 x = order ^ (u64{w} * kOnes);
  return static_cast<unsigned>(std::countr_zero((x - kOnes) & ~x & (kOnes << 3))) / 4;
}
// Inserts way w with stamp s into an n-entry list (n < 16), after every
// (stamp, way) below (s, w): a binary search over the positions.
u64 insert_sorted(u64 order, unsigned n, unsigned w, u32 s, const u32* stamp) {
  unsigned lo = 0, hi = n;
  while (lo < hi) {
    const unsigned mid = (lo + hi) / 2;
    const unsigned e = at(order, mid);
    if (stamp[e] < s || (stamp[e] == s && e < w)) lo = mid + 1;
    else hi = mid;
  }
  return insert_at(order, lo, w);
}
// The same for the usual case, inline: s is at least every listed stamp, so
// w goes last unless the last entry has the same stamp and a higher way.
inline u64 insert_newest(u64 order, unsigned n, unsigned w, u32 s, const u32* stamp) {
  if (n != 0) {
    const unsigned e = at(order, n - 1);
    if (stamp[e] > s || (stamp[e] == s && e > w)) return insert_sorted(order, n, w, s, stamp);
  }
  return order | (u64{w} << (4 * n));  // nibbles from n up are 0
}
}  // namespace order16

// An empty way if there is one, else the first way with the lowest effective
// stamp. An owned line's effective stamp is max(own stamp, owner's stamp) >=
// its own stamp, so the lowest own stamp decides unless an owned way holding
// it has a higher effective stamp; only then are all owned ways resolved.
template <int W>
int choose_victim(u64 valid_ways, u64 owned, const u32* stamp, const u32* owner, u64 all_ways,
                  const u32* owner_stamp, int runtime_ways) {
  const int n = W > 0 ? W : runtime_ways;
  const u64 empty = ~valid_ways & all_ways;
  if (empty != 0) return std::countr_zero(empty);
  const u32 lowest = lowest_value<W>(stamp, n);
  const u64 at_lowest = match_ways<W>(stamp, lowest, n);
  bool raised = false;
  for (u64 m = at_lowest & owned; m != 0; m &= m - 1) raised |= owner_stamp[owner[std::countr_zero(m)]] > lowest;
  if (!raised) return std::countr_zero(at_lowest);
  std::array<u32, 64> effective;
  std::copy(stamp, stamp + n, effective.begin());
  for (u64 m = owned; m != 0; m &= m - 1) {
    const int w = std::countr_zero(m);
    effective[static_cast<size_t>(w)] = std::max(stamp[w], owner_stamp[owner[w]]);
  }
  return std::countr_zero(match_ways<W>(effective.data(), lowest_value<W>(effective.data(), n), n));
}

}  // namespace

// Gives way w the newest stamp and moves it to the most recently used end.
[[gnu::always_inline]] inline void L2Cache::make_newest(const SetView& s, int w, u32 now) {
  const u64 valid_ways = s.valid_ways();
  const unsigned n = valid_ways == 0xffffu ? 16u : static_cast<unsigned>(popc16(valid_ways));
  const u64 order = order16::remove_at(s.order(), order16::find(s.order(), static_cast<unsigned>(w)));
  s.order() = order16::insert_newest(order, n - 1, static_cast<unsigned>(w), now, s.stamp());
  s.stamp()[w] = now;
}

void L2Cache::reorder(const SetView& s, int w) {
  const unsigned n = static_cast<unsigned>(popc16(s.valid_ways()));
  const u64 order = order16::remove_at(s.order(), order16::find(s.order(), static_cast<unsigned>(w)));
  s.order() = order16::insert_sorted(order, n - 1, static_cast<unsigned>(w), s.stamp()[w], s.stamp());
}

bool L2Cache::lru_order_consistent() const {
  if (!compact_) return true;
  for (i64 set = 0; set < stored_sets_; ++set) {
    const SetView s = set_view(static_cast<u64>(set));
    const u64 valid = s.valid_ways();
    const unsigned n = static_cast<unsigned>(popc16(valid));
    u64 seen = 0;
    for (unsigned p = 0; p < n; ++p) {
      const unsigned w = order16::at(s.order(), p);
      seen |= u64{1} << w;
      if (p > 0) {
        const unsigned e = order16::at(s.order(), p - 1);
        if (s.stamp()[e] > s.stamp()[w] || (s.stamp()[e] == s.stamp()[w] && e >= w)) return false;
      }
    }
    if (seen != valid) return false;
  }
  return true;
}

// A present line passes to owner `me` (a tile taking ownership): it keeps
// its effective stamp, and the record that owned it is no longer valid.
[[gnu::always_inline]] inline void L2Cache::take_over(const SetView& s, int w, u32 me) {
  const u64 owned = s.owned_ways();
  if (((owned >> w) & 1u) == 0) {
    s.owner()[w] = me;
    ++owner_lines_[me];
    s.set_owned_ways(owned | (u64{1} << w));
    return;
  }
  const u32 o = s.owner()[w];
  s.stamp()[w] = std::max(s.stamp()[w], owner_stamp_[o]);
  if (o == me) return;
  records_[owner_record_[o]].valid = false;
  if (--owner_lines_[o] == 0) released_.push_back(o);
  s.owner()[w] = me;
  ++owner_lines_[me];
}

// The members the line loops use, as plain pointers and values.
L2Cache::LoopState L2Cache::loop_state(u32 rec, bool own) {
  if (fills_.size() < line_count_) fills_.resize(line_count_);
  return {lines_.data(),         line_count_,         fills_.data(),       records_.data(),
          owner_stamp_.data(),   owner_record_.data(), owner_lines_.data(), counters_.tensor.data(),
          own ? records_[rec].owner_id : 0};
}

// Visits lines_ in address order: per line a hit (missing sectors fetched for
// reads and reductions) or an allocation (write-allocate; the victim's dirty
// sectors are written back). Set blocks are prefetched a few lines ahead
// (where the host is latency-bound rather than bandwidth-bound, it then
// waits for many cache misses at once). Everything the loop updates
// lives in locals until the end: the sector bytes are char-typed and could
// otherwise alias any member.
template <int W, trace::AccessKind K, bool Own>
void L2Cache::visit_lines(const trace::RangeAccess& a, u32 rec, Visit& v, Ways<W> ways) {
  constexpr bool reads = K != trace::AccessKind::Write;  // reads and reductions need the old data
  constexpr bool writes = K != trace::AccessKind::Read;
  constexpr size_t kAhead = 16;
  const int n_ways = ways.get();
  const auto [lines, n, fills, records, owner_stamp, owner_record, owner_lines, tensor_counts, me] = loop_state(rec, Own);
  auto drop = [&](u32 o) {  // a line leaves owner o
    if (--owner_lines[o] == 0) released_.push_back(o);
  };
  const ReplacementRule rule = rule_;
  const u64 all_ways = all_ways_;
  const u64 line_high = line_high_ << 32;
  const std::uint8_t tensor = static_cast<std::uint8_t>(a.tensor);
  const u32 stamp = v.stamp;
  const unsigned partitions = static_cast<unsigned>(geometry_.partitions);
  const bool partitions_pow2 = (partitions & (partitions - 1)) == 0;
  i64 hits = 0, misses = 0, fetch = 0, writeback = 0, dirty_delta = 0;
  u32 pending = 0;  // encoded: the latest fill over hit lines
  unsigned partition_mask = 0;
  size_t filled = 0;
  bool evicted_own = false, all_dirty = true;

  std::byte* const block = block_->data_;
  const size_t set_stride = set_stride_;
  // Host lines of a set every lookup touches: meta, tags, stamps and fill
  // times. Owners are read only for owned lines; prefetching them for every
  // line costs more host memory bandwidth than it saves.
  const size_t prefetch_lines = (prefetch_bytes_ + 63) / 64;
  auto prefetch = [&](u64 set) {
    const std::byte* b = block + set * set_stride;
    for (size_t k = 0; k < prefetch_lines; ++k) __builtin_prefetch(b + 64 * k, 1);
  };
  // Owners: once a set's meta has arrived (half the distance later), its
  // owner line is fetched if it has owned ways.
  const bool owners = any_owner_;
  constexpr size_t kOwnersAhead = kAhead / 2;
  for (size_t i = 0; i < std::min(n, kAhead); ++i) prefetch(lines[i].set);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch(lines[i + kAhead].set);
    if (owners && i + kOwnersAhead < n) {
      const SetView ahead = set_view_of<W>(block, lines[i + kOwnersAhead].set);
      if (ahead.owned_ways() != 0) __builtin_prefetch(ahead.owner());
    }
    const LineRef l = lines[i];
    partition_mask |= 1u << (partitions_pow2 ? static_cast<unsigned>(l.set & (partitions - 1))
                                             : static_cast<unsigned>(l.set % partitions));
    const SetView s = set_view_of<W>(block, l.set);
    const unsigned mask = l.mask;
    const u64 valid_ways = s.valid_ways();
    const u64 found = match_ways<W>(s.tag(), l.tag, n_ways) & valid_ways;
    int w;
    if (found != 0) {
      // Line present: the sectors it lacks are misses.
      w = std::countr_zero(found);
      const u64 bit = u64{1} << w;
      if constexpr (Own) take_over(s, w, me);
      pending = std::max(pending, s.ready()[w]);
      const unsigned valid = s.valid()[w];
      const unsigned missing = mask & ~valid;
      hits += popc(mask & valid);
      misses += popc(missing);
      if (reads && missing != 0) {
        fetch += popc(missing);
        fills[filled++] = {l.set, w};
      }
      s.valid()[w] = static_cast<std::uint8_t>(valid | mask);
      if constexpr (writes) {
        dirty_delta += popc(mask & ~static_cast<unsigned>(s.dirty()[w]));
        if (s.dirty()[w] == 0) note_dirtied(l.set, l.tag, w);
        s.dirty()[w] = static_cast<std::uint8_t>(s.dirty()[w] | mask);
        if (s.tensor()[w] != tensor) {
          if ((s.owned_ways() & bit) != 0 && s.owner()[w] != me) records[owner_record[s.owner()[w]]].valid = false;
          s.tensor()[w] = tensor;
        }
      }
      if (rule.hit_refreshes) s.stamp()[w] = stamp;
    } else {
      // Line absent: allocate (write-allocate; reads and reductions fetch).
      w = choose_victim<W>(valid_ways, s.owned_ways(), s.stamp(), s.owner(), all_ways, owner_stamp, n_ways);
      const u64 bit = u64{1} << w;
      if ((valid_ways & bit) != 0) {
        if (const unsigned dirty = s.dirty()[w]; dirty != 0) {
          const int d = popc(dirty);
          writeback += d;
          dirty_delta -= d;
          tensor_counts[s.tensor()[w]].writeback_sectors += d;
        }
        if ((s.owned_ways() & bit) != 0) {
          const u32 o = s.owner()[w];
          records[owner_record[o]].valid = false;
          evicted_own |= o == me;
          drop(o);
        }
      }
      s.tag()[w] = l.tag;
      s.valid()[w] = static_cast<std::uint8_t>(mask);
      s.dirty()[w] = static_cast<std::uint8_t>(writes ? mask : 0u);
      if constexpr (writes) {
        dirty_delta += popc(mask);
        note_dirtied(l.set, l.tag, w);
      }
      s.stamp()[w] = static_cast<u32>(rule.fill_stamp(stamp, line_high | l.tag));
      s.set_valid_ways(valid_ways | bit);
      if constexpr (Own) {
        s.owner()[w] = me;
        ++owner_lines[me];
        s.set_owned_ways(s.owned_ways() | bit);
      } else {
        s.set_owned_ways(s.owned_ways() & ~bit);
      }
      s.tensor()[w] = tensor;
      s.ready()[w] = 0;
      misses += popc(mask);
      if constexpr (reads) {
        fetch += popc(mask);
        fills[filled++] = {l.set, w};
      }
    }
    if constexpr (Own) all_dirty = all_dirty && (static_cast<unsigned>(s.dirty()[w]) & mask) == mask;
  }
  v.hits += hits;
  v.misses += misses;
  v.fetch += fetch;
  v.writeback += writeback;
  v.pending = std::max(v.pending, decode_ready(pending));
  v.partition_mask |= partition_mask;
  v.evicted_own = v.evicted_own || evicted_own;
  v.all_dirty = v.all_dirty && all_dirty;
  dirty_sectors_ += dirty_delta;
  fill_count_ = filled;
  counters_.line_visits += static_cast<i64>(n);
}

// A full 16-way set's victim (victim16): the least recently used way by own
// stamp, unless a tile record has raised that way's stamp (a line's stamp is
// max(own, owner's)). Then that way takes its effective stamp as its own
// (exact: owner stamps only grow until they are folded into the lines) and
// moves to its place in the LRU order, until the way at the old end is not
// raised: its own stamp is then the lowest effective one.
int L2Cache::fold_raised_stamps(std::byte* head) {
  const SetView s{head, 16, 64, true};
  for (;;) {  // each way is folded at most once
    const int w = static_cast<int>(s.order() & 15u);
    if (((s.owned_ways() >> w) & 1u) == 0) return w;
    const u32 raised = owner_stamp_[s.owner()[w]];
    if (raised <= s.stamp()[w]) return w;
    s.stamp()[w] = raised;
    reorder(s, w);
  }
}

// Each owned line takes max(own stamp, owner's stamp) as its own stamp
// (effective stamps, and so every replacement decision, stay the same).
void L2Cache::fold_owner_stamps(const SetView& s) {
  for (u64 m = s.owned_ways(); m != 0; m &= m - 1) {
    const int w = std::countr_zero(m);
    const u32 raised = owner_stamp_[s.owner()[w]];
    if (raised > s.stamp()[w]) {
      s.stamp()[w] = raised;
      if (s.compact) reorder(s, w);
    }
  }
}

// visit_lines for 16-way sets that keep their LRU order (every profile's
// default): the same per-line work with the set layout known, the victim
// from the LRU order, and only the counts a visit can change kept live (for reads and reductions every missing sector is
// fetched, so fetches equal misses).
template <trace::AccessKind K, bool Own, bool Lru>
void L2Cache::visit16(const trace::RangeAccess& a, u32 rec, Visit& v) {
  constexpr bool reads = K != trace::AccessKind::Write;
  constexpr bool writes = K != trace::AccessKind::Read;
  constexpr size_t kAhead = 16, kStride = kCompactStride;
  const auto [lines, n, fills, records, owner_stamp, owner_record, owner_lines, tensor_counts, me] = loop_state(rec, Own);
  auto drop = [&](u32 o) {  // a line leaves owner o
    if (--owner_lines[o] == 0) released_.push_back(o);
  };
  std::byte* const block = block_->data_;
  const std::uint8_t tensor = static_cast<std::uint8_t>(a.tensor);
  const u32 now = v.stamp;  // also this request's fill ticket
  const u32* const fill_at = fill_at_.data();
  const u32 fill_tickets = static_cast<u32>(fill_at_.size()), first_ticket = first_ticket_;
  auto fill_of = [&](u32 ticket) {  // encoded fill time (0: none, or before this kernel)
    const u32 k = ticket - first_ticket;
    return k < fill_tickets ? fill_at[k] : 0u;
  };
  bool new_fills = false;
  const ReplacementRule rule = Lru ? ReplacementRule{true, false} : rule_;
  const u64 line_high = line_high_ << 32;
  const u64 partitions = static_cast<u64>(geometry_.partitions);
  const bool partitions_pow2 = Lru || (partitions & (partitions - 1)) == 0;  // (Lru: checked by the caller)
  const bool limited = limited_;
  i64 hits = 0, misses = 0, writeback = 0, dirty_delta = 0;
  u32 pending = 0;  // encoded: the latest fill over present lines
  unsigned partition_mask = 0;
  size_t filled = 0;
  bool evicted_own = false, all_dirty = true;
  // Meta, tags, stamps and fill tickets; the owners too when this tile takes
  // ownership, else only for sets with owned ways, decided once a set's header
  // has arrived (streamed lines then touch four host lines, not five).
  auto prefetch = [&](u64 set) {
    const std::byte* b = block + set * kStride;
    for (size_t k = 0; k < (Own ? kStride : kStride - 64); k += 64) __builtin_prefetch(b + k, 1);
  };
  constexpr size_t kOwnersAhead = kAhead / 2;
  for (size_t i = 0; i < std::min(n, kAhead); ++i) prefetch(lines[i].set);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch(lines[i + kAhead].set);
    if (!Own && i + kOwnersAhead < n) {
      const SetView ahead = set_view_of<16>(block, lines[i + kOwnersAhead].set);
      if (ahead.owned_ways() != 0) __builtin_prefetch(ahead.owner(), 1);
    }
    const LineRef l = lines[i];
    partition_mask |= 1u << (partitions_pow2 ? l.set & (partitions - 1) : l.set % partitions);
    const SetView s = set_view_of<16>(block, l.set);
    std::uint8_t* const valid = s.valid();
    std::uint8_t* const dirty = s.dirty();
    u32* const stamp = s.stamp();
    const unsigned mask = l.mask;
    const u64 valid_ways = s.valid_ways();
    const u64 found = match_ways<16>(s.tag(), l.tag, 16) & valid_ways;
    int w;
    if (found != 0) {
      // Line present: the sectors it lacks are misses.
      w = std::countr_zero(found);
      const u32 old_stamp = stamp[w];
      if constexpr (Own) take_over(s, w, me);
      pending = std::max(pending, fill_of(s.ready()[w]));
      const unsigned had = valid[w];
      const unsigned missing = mask & ~had;
      hits += popc(mask & had);
      if (missing != 0) {
        misses += popc(missing);
        if (reads) fills[filled++] = {l.set, w};
      }
      valid[w] = static_cast<std::uint8_t>(had | mask);
      if constexpr (writes) {
        const unsigned was = dirty[w];
        dirty_delta += popc(mask & ~was);
        if (was == 0 && limited) note_dirtied(l.set, l.tag, w);
        dirty[w] = static_cast<std::uint8_t>(was | mask);
        if (s.tensor()[w] != tensor) {  // (an owned line is this tile's by now when Own)
          if (!Own && ((s.owned_ways() >> w) & 1u) != 0) records[owner_record[s.owner()[w]]].valid = false;
          s.tensor()[w] = tensor;
        }
      }
      if (rule.hit_refreshes) {
        if (stamp[w] != now) make_newest(s, w, now);
      } else if (stamp[w] != old_stamp) {  // raised to its owner's
        reorder(s, w);
      }
    } else {
      // Line absent: allocate (write-allocate; reads and reductions fetch).
      unsigned listed;  // entries left in the LRU order
      if (valid_ways != 0xffffu) {
        w = std::countr_zero(~valid_ways);
        listed = static_cast<unsigned>(popc16(valid_ways));
      } else {
        w = victim16(s);
        const u64 order = s.order();
        s.order() = order >> 4;  // the victim is the least recently used way
        listed = 15;
        if (const unsigned d = dirty[w]; d != 0) {
          writeback += popc(d);
          tensor_counts[s.tensor()[w]].writeback_sectors += popc(d);
        }
        if (const u64 owned = s.owned_ways(); ((owned >> w) & 1u) != 0) {
          const u32 o = s.owner()[w];
          records[owner_record[o]].valid = false;
          evicted_own |= Own && o == me;
          drop(o);
          if (!Own) s.set_owned_ways(owned & ~(u64{1} << w));
        }
      }
      s.tag()[w] = l.tag;
      valid[w] = static_cast<std::uint8_t>(mask);
      if constexpr (writes) {
        dirty_delta += popc(mask);
        if (limited) note_dirtied(l.set, l.tag, w);
      }
      dirty[w] = static_cast<std::uint8_t>(writes ? mask : 0u);
      const u32 fill_stamp = static_cast<u32>(rule.fill_stamp(now, line_high | l.tag));
      s.order() = order16::insert_newest(s.order(), listed, static_cast<unsigned>(w), fill_stamp, stamp);
      stamp[w] = fill_stamp;
      s.set_valid_ways(valid_ways | (u64{1} << w));
      if constexpr (Own) {
        s.owner()[w] = me;
        ++owner_lines[me];
        s.set_owned_ways(s.owned_ways() | (u64{1} << w));
      }
      s.tensor()[w] = tensor;
      s.ready()[w] = reads ? now : 0u;  // a new line's data comes with this request's fill
      new_fills |= reads;
      misses += popc(mask);
    }
    if constexpr (Own) all_dirty = all_dirty && (static_cast<unsigned>(dirty[w]) & mask) == mask;
  }
  v.hits += hits;
  v.misses += misses;
  if (reads) v.fetch += misses;
  v.writeback += writeback;
  v.pending = std::max(v.pending, decode_ready(pending));
  v.partition_mask |= partition_mask;
  v.evicted_own = v.evicted_own || evicted_own;
  v.all_dirty = v.all_dirty && all_dirty;
  dirty_sectors_ += dirty_delta - writeback;
  fill_count_ = filled;  // lines that were present: complete() keeps the later fill of each
  ticket_fills_ = new_fills || filled != 0;
  ticket_owner_ = Own && new_fills ? rec : 0;  // its record owns the new lines
  counters_.line_visits += static_cast<i64>(n);
}

// Step 3 of access(): sets the dirty bits of a valid tile's lines (all present).
template <int W>
void L2Cache::mark_dirty(const trace::RangeAccess& a, u32 stamp, Ways<W> ways) {
  constexpr size_t kAhead = 8;
  const int n_ways = ways.get();
  const LineRef* const lines = lines_.data();
  const size_t n = line_count_;
  std::byte* const block = block_->data_;
  const size_t set_stride = set_stride_;
  const size_t prefetch_lines = (meta_bytes_ + 2 * sizeof(u32) * static_cast<size_t>(n_ways) + 63) / 64;
  const std::uint8_t tensor = static_cast<std::uint8_t>(a.tensor);
  auto prefetch = [&](u64 set) {
    const std::byte* b = block + set * set_stride;
    for (size_t k = 0; k < prefetch_lines; ++k) __builtin_prefetch(b + 64 * k, 1);  // meta, tags, stamps
  };
  const bool refresh = rule_.hit_refreshes;
  i64 dirty_delta = 0;
  for (size_t i = 0; i < std::min(n, kAhead); ++i) prefetch(lines[i].set);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch(lines[i + kAhead].set);
    const LineRef l = lines[i];
    const SetView s = set_view_of<W>(block, l.set);
    const int w = std::countr_zero(match_ways<W>(s.tag(), l.tag, n_ways) & s.valid_ways());
    dirty_delta += popc(l.mask & ~static_cast<unsigned>(s.dirty()[w]));
    if (s.dirty()[w] == 0) note_dirtied(l.set, l.tag, w);
    s.dirty()[w] = static_cast<std::uint8_t>(s.dirty()[w] | l.mask);
    s.tensor()[w] = tensor;
    if (refresh && s.stamp()[w] != stamp) {  // the newest stamp: max(own, owner's) is this
      if constexpr (W == 16) make_newest(s, w, stamp);
      else s.stamp()[w] = stamp;
    }
  }
  dirty_sectors_ += dirty_delta;
  counters_.dirty_mark_visits += static_cast<i64>(n);
}

template <int W>
void L2Cache::visit_lines(const trace::RangeAccess& a, u32 rec, bool own, Visit& v, Ways<W> ways) {
  using trace::AccessKind;
  switch (a.kind) {
    case AccessKind::Read:
      return own ? visit_lines<W, AccessKind::Read, true>(a, rec, v, ways)
                 : visit_lines<W, AccessKind::Read, false>(a, rec, v, ways);
    case AccessKind::Write:
      return own ? visit_lines<W, AccessKind::Write, true>(a, rec, v, ways)
                 : visit_lines<W, AccessKind::Write, false>(a, rec, v, ways);
    case AccessKind::ReduceAdd:
      return own ? visit_lines<W, AccessKind::ReduceAdd, true>(a, rec, v, ways)
                 : visit_lines<W, AccessKind::ReduceAdd, false>(a, rec, v, ways);
  }
}

// The (row, line) pairs of a request in address order, with their sector masks.
// Within an aligned block of 512 lines the XOR fold only flips the low 9
// bits (fold(B + k) = fold(B) ^ k), and when the set count is a multiple of
// 512 the modulo keeps the block together, so a set costs one XOR per line.
// With set sampling only lines of sampled sets are kept (under their stored
// set index); the request's sectors are counted over all its lines.
void L2Cache::gather_lines(const trace::RangeAccess& a) {
  if (sampling_ > 1) gather_lines<true>(a);
  else gather_lines<false>(a);
}

template <bool Sampled>
void L2Cache::gather_lines(const trace::RangeAccess& a) {
  line_count_ = 0;
  request_sectors_ = 0;
  request_partitions_ = 0;
  if (a.row_bytes <= 0) return;
  const u64 line_bytes = static_cast<u64>(geometry_.line_bytes);
  const u64 per_row = static_cast<u64>(a.row_bytes) / line_bytes + 2;
  const size_t bound = static_cast<size_t>(per_row * static_cast<u64>(a.rows));
  if (lines_.size() < bound) lines_.resize(bound);
  LineRef* out = lines_.data();
  const unsigned full = (1u << geometry_.sectors_per_line()) - 1u;
  const int full_sectors = popc(full);
  const u64 byte_in_line = line_bytes - 1;
  constexpr u64 kBlock = 512;
  const bool blocked = sets_ % static_cast<i64>(kBlock) == 0;
  const u32* const stored_index = stored_index_.data();
  const u64* const sampled_bits = sampled_bits_.data();
  u64 block = ~u64{0}, block_fold = 0, block_set = 0;
  auto emit = [&](u64 line, unsigned mask) {
    u64 set;
    if (blocked) {
      if ((line & ~(kBlock - 1)) != block) {
        block = line & ~(kBlock - 1);
        block_fold = fold32(block);
        block_set = fast_mod(static_cast<std::uint32_t>(block_fold & ~(kBlock - 1)), set_mod_magic_,
                             static_cast<u64>(sets_));
      }
      set = block_set + ((block_fold ^ line) & (kBlock - 1));
    } else {
      set = set_of(line);
    }
    if constexpr (Sampled) {
      if (((sampled_bits[set >> 6] >> (set & 63)) & 1u) == 0) return;
      set = stored_index[set];
    }
    *out++ = {set, static_cast<u32>(line), mask};
  };
  // Row r covers lines first + r * step ... + span; rows whose stride is a
  // whole number of lines all have the first row's sector masks.
  auto row_shape = [&](u64 begin, u64& first, u64& span, unsigned& head, unsigned& tail) {
    const u64 end = begin + static_cast<u64>(a.row_bytes);  // exclusive
    first = begin >> line_shift_;
    span = ((end - 1) >> line_shift_) - first;
    head = full & ~((1u << ((begin & byte_in_line) >> sector_shift_)) - 1u);
    tail = (2u << (((end - 1) & byte_in_line) >> sector_shift_)) - 1u;
    if (span == 0) head &= tail;
  };
  auto row_sectors = [&](u64 span, unsigned head, unsigned tail) {
    return span == 0 ? i64{popc(head)} : i64{popc(head)} + popc(tail) + static_cast<i64>(span - 1) * full_sectors;
  };
  auto emit_row = [&](u64 first, u64 span, unsigned head, unsigned tail) {
    emit(first, head);
    if (span == 0) return;
    for (u64 j = 1; j < span; ++j) emit(first + j, full);
    emit(first + span, tail);
  };
  u64 first, span;
  unsigned head, tail;
  row_shape(a.addr, first, span, head, tail);
  if constexpr (Sampled) {
    // Partitions of the first two lines and of the last row's first line,
    // exactly (sampled lines alone may miss a partition the request uses).
    const u64 last_first = (a.addr + static_cast<u64>((a.rows - 1) * a.stride)) >> line_shift_;
    request_partitions_ = (1u << partition_of_set(set_of(first))) | (1u << partition_of_set(set_of(last_first)));
    if (span > 0) request_partitions_ |= 1u << partition_of_set(set_of(first + 1));
  }
  if (a.rows == 1 || (a.stride >= 0 && (static_cast<u64>(a.stride) & byte_in_line) == 0)) {
    const u64 step = a.rows > 1 ? static_cast<u64>(a.stride) >> line_shift_ : 0;
    request_sectors_ = row_sectors(span, head, tail) * a.rows;
    if constexpr (Sampled) {
      if (blocked && options_.sampled_gather_by_block && gather_sampled_by_block(first, span, step, a.rows, head, tail))
        return;
    } else if (blocked) {
      // The same lines, a 512-line block's fold computed once per run of
      // lines within it.
      auto enter = [&](u64 line) {
        block = line & ~(kBlock - 1);
        block_fold = fold32(block);
        block_set = fast_mod(static_cast<std::uint32_t>(block_fold & ~(kBlock - 1)), set_mod_magic_,
                             static_cast<u64>(sets_));
      };
      if (span == 0) {  // a line per row
        for (i64 r = 0; r < a.rows; ++r, first += step) {
          if ((first & ~(kBlock - 1)) != block) enter(first);
          *out++ = {block_set + ((block_fold ^ first) & (kBlock - 1)), static_cast<u32>(first), head};
        }
        line_count_ = static_cast<size_t>(out - lines_.data());
        return;
      }
      for (i64 r = 0; r < a.rows; ++r, first += step) {
        LineRef* const row = out;
        for (u64 line = first, last = first + span; line <= last;) {
          if ((line & ~(kBlock - 1)) != block) enter(line);
          for (const u64 stop = std::min(last, block + kBlock - 1); line <= stop; ++line)
            *out++ = {block_set + ((block_fold ^ line) & (kBlock - 1)), static_cast<u32>(line), full};
        }
        row->mask = head;
        (out - 1)->mask = tail;
      }
      line_count_ = static_cast<size_t>(out - lines_.data());
      return;
    }
    for (i64 r = 0; r < a.rows; ++r, first += step) emit_row(first, span, head, tail);
  } else {
    for (i64 r = 0; r < a.rows; ++r) {
      row_shape(a.addr + static_cast<u64>(r * a.stride), first, span, head, tail);
      request_sectors_ += row_sectors(span, head, tail);
      emit_row(first, span, head, tail);
    }
  }
  line_count_ = static_cast<size_t>(out - lines_.data());
}

// Set sampling, rows of whole-line stride: walks the request's 512-line
// blocks and, in each, only the lines that land in sampled sets. In block B
// line B + k goes to set block_set + (fold(B) ^ k) mod 512, so the sampled
// offsets o of that chunk give the candidate lines k = o ^ fold(B) mod 512;
// a candidate is kept when it lies in a row. When the rows' lines have fewer
// than 16 residues mod 16 (a row of under 16 lines, rows 16k lines apart),
// only the offsets whose low 4 bits match one of them are candidates. Blocks
// are taken in address order, as the line-by-line gather takes them (rows do
// not overlap); within a block the lines come in another order, which changes
// nothing, since each goes to a different set. Returns false, doing nothing,
// where testing each line is cheaper (fewer lines than candidates) or rows
// overlap.
bool L2Cache::gather_sampled_by_block(u64 first, u64 span, u64 step, i64 rows, unsigned head, unsigned tail) {
  if (rows > 1 && step <= span) return false;
  const u64 last = first + static_cast<u64>(rows - 1) * step + span;
  const u64 lines = static_cast<u64>(rows) * (span + 1);
  const u64 blocks = (last >> 9) - (first >> 9) + 1;
  const u64 residues = (rows == 1 || step % 16 == 0) && span < 15 ? span + 1 : 16;
  if (blocks * residues * (512 / 16) / static_cast<u64>(sampling_) >= lines) return false;
  const unsigned full = (1u << geometry_.sectors_per_line()) - 1u;
  const bool pow2_step = step != 0 && (step & (step - 1)) == 0;  // (std::has_single_bit calls libgcc without popcnt)
  const unsigned step_shift = pow2_step ? static_cast<unsigned>(std::countr_zero(step)) : 0;
  LineRef* const begin = lines_.data();
  LineRef* out = begin;
  // Branch-free: a candidate is written and then kept or overwritten (most
  // are rejected, at random).
  auto take = [&](u64 block, u64 fold, u64 block_set, u32 from, u32 to) {
    for (u32 i = from; i < to; ++i) {
      const u64 o = block_offsets_[i];
      const u64 line = block | ((o ^ fold) & 511);
      const u64 d = line - first;  // wraps for lines before the request
      const u64 row = rows == 1 || !pow2_step ? (rows == 1 ? 0 : d / step) : d >> step_shift;
      const u64 at = d - row * step;  // position within its row
      const bool keep = (line >= first) & (line <= last) & (at <= span);
      const unsigned mask = at == 0 ? head : at == span ? tail : full;
      *out = {stored_index_[block_set + o], static_cast<u32>(line), mask};
      out += keep;
    }
  };
  for (u64 block = first & ~u64{511}; block <= last; block += 512) {
    const u64 fold = fold32(block);
    const u64 block_set = fast_mod(static_cast<std::uint32_t>(fold & ~u64{511}), set_mod_magic_, static_cast<u64>(sets_));
    const u32* const bucket = block_first_.data() + (block_set >> 9) * 16;
    if (residues == 16) {
      take(block, fold, block_set, bucket[0], bucket[16]);
      continue;
    }
    for (u64 p = 0; p < residues; ++p) {
      const u64 low = (fold ^ (first + p)) & 15;
      take(block, fold, block_set, bucket[low], bucket[low + 1]);
    }
  }
  line_count_ = static_cast<size_t>(out - begin);
  return true;
}

void L2Cache::record(const trace::RangeAccess& a, const Visit& v, const L2Access& out) {
  L2KindCounts& k = counters_.kind[static_cast<size_t>(a.kind)];
  ++k.requests;
  k.bytes += a.bytes();
  k.sectors += out.sectors;
  k.hit_sectors += v.hits;
  k.miss_sectors += v.misses;
  if (out.merged) {
    ++k.merged_requests;
  } else {
    k.lookup_sectors += out.sectors;
    k.lookup_hit_sectors += v.hits;
    k.lookup_miss_sectors += v.misses;
  }
  counters_.fetch_sectors += v.fetch;
  counters_.writeback_sectors += v.writeback;
  auto& tc = counters_.tensor;
  if (tc.size() <= a.tensor) tc.resize(static_cast<size_t>(a.tensor) + 1);
  L2TensorCounts& t = tc[a.tensor];
  (a.kind == trace::AccessKind::Read ? t.read_bytes : t.write_bytes) += a.bytes();
  t.hit_sectors += v.hits;
  t.miss_sectors += v.misses;
  t.fetch_sectors += v.fetch;
}

// A request its valid tile record answers: every sector hits, and its data
// is ready when the record's lines are.
void L2Cache::hit_every_sector(const trace::RangeAccess& a, const TileRecord& rec, unsigned other_partitions,
                               L2Access& out, Visit& v) {
  if (sampling_ > 1) note_sampled_hits(a, rec.sampled_sectors);
  out.sectors = rec.sectors;
  out.far = (rec.partition_mask & other_partitions) != 0;
  out.pending_ready = rec.fill_ready;
  v.hits = rec.sectors;
}

// Dirty data past the limit goes to DRAM with this request (it costs DRAM
// write bandwidth from now on); then the request is looked up.
L2Access L2Cache::access(const trace::RangeAccess& a, double now, int requester_partition) {
  const i64 early = limited_ ? write_back_excess() : 0;
  L2Access out = lookup(a, now, requester_partition);
  if (out.pending_ready <= now) out.pending_ready = 0;  // fills done by now delay nothing (see L2Access)
  if (limited_ && dirty_order_.size() > 2 * static_cast<size_t>(stored_sets_ * ways_) + 1024) compact_dirty_order();
  out.writeback_sectors += early;
  counters_.writeback_sectors += early;
  counters_.early_writeback_sectors += early;
  return out;
}

// Cleans the lines dirty the longest until the dirty sectors are within the
// limit; a queued line evicted or cleaned since is skipped. Records owning a
// cleaned line are no longer all dirty. Returns the sectors written back
// (scaled by the sampling factor).
i64 L2Cache::write_back_excess() {
  i64 sectors = 0;
  L2TensorCounts* const tensor_counts = counters_.tensor.data();
  while (dirty_sectors_ - sectors > dirty_limit_sectors_ && !dirty_order_.empty()) {
    const DirtyLine d = dirty_order_.front();
    dirty_order_.pop_front();
    const SetView s = set_view(d.set);
    if (((s.valid_ways() >> d.way) & 1u) == 0 || s.tag()[d.way] != d.tag || s.dirty()[d.way] == 0) continue;
    const int n = popc(s.dirty()[d.way]);
    sectors += n;
    tensor_counts[s.tensor()[d.way]].writeback_sectors += n;  // sampled counts, scaled in counters()
    s.dirty()[d.way] = 0;
    if (((s.owned_ways() >> d.way) & 1u) != 0) records_[owner_record_[s.owner()[d.way]]].all_dirty = false;
  }
  dirty_sectors_ -= sectors;
  return sectors * sampling_;
}

// Drops the queue entries of lines evicted or cleaned since they were queued
// (and any second entry of a line), keeping the order; the queue then holds at
// most one entry per line.
void L2Cache::compact_dirty_order() {
  std::vector<bool> kept(static_cast<size_t>(stored_sets_ * ways_), false);
  std::deque<DirtyLine> live;
  for (const DirtyLine& d : dirty_order_) {
    const SetView s = set_view(d.set);
    const size_t at = static_cast<size_t>(d.set) * static_cast<size_t>(ways_) + static_cast<size_t>(d.way);
    if (((s.valid_ways() >> d.way) & 1u) == 0 || s.tag()[d.way] != d.tag || s.dirty()[d.way] == 0 || kept[at]) continue;
    kept[at] = true;
    live.push_back(d);
  }
  dirty_order_ = std::move(live);
}

template <class RunVisit>
i64 L2Cache::look_up_homes_of_copies(int requester_partition, RunVisit& run_visit, Visit& v) {
  home_lines_.clear();
  i64 lacking_sectors = 0;
  for (size_t i = 0; i < line_count_; ++i) {
    LineRef& l = lines_[i];
    if (static_cast<int>(partition_of_set(l.set)) == requester_partition) continue;
    const u64 mirror = l.set ^ 1u;  // sets alternate partitions
    const SetView m = set_view(mirror);
    const u64 found = match_ways<0>(m.tag(), l.tag, ways_) & m.valid_ways();
    const unsigned have = found != 0 ? static_cast<unsigned>(m.valid()[std::countr_zero(found)]) : 0u;
    if (const unsigned lacking = l.mask & ~have; lacking != 0) {
      home_lines_.push_back({l.set, l.tag, lacking});
      lacking_sectors += std::popcount(lacking);
    }
    l.set = mirror;
  }
  if (home_lines_.empty()) return 0;
  std::swap(lines_, home_lines_);
  const size_t n = line_count_;
  line_count_ = lines_.size();
  if (fills_.size() < line_count_) fills_.resize(line_count_);
  run_visit(false, v);
  home_fills_.assign(fills_.begin(), fills_.begin() + static_cast<std::ptrdiff_t>(fill_count_));
  std::swap(lines_, home_lines_);
  line_count_ = n;
  return lacking_sectors;
}

// The line-by-line visit of the gathered lines_ for `a`: the 16-way sets'
// instances (LRU with a power-of-two partition count, every profile, has its
// own), or the general loop.
void L2Cache::visit_gathered(const trace::RangeAccess& a, u32 rec, bool owning, Visit& v) {
  if (!compact_) {
    visit_lines(a, rec, owning, v, Ways<0>{ways_});
    return;
  }
  using trace::AccessKind;
  const bool lru = hit_refreshes_ && !rule_.bimodal && partitions_pow2_;
  auto visit = [&]<AccessKind K>() {
    if (owning) lru ? visit16<K, true, true>(a, rec, v) : visit16<K, true, false>(a, rec, v);
    else lru ? visit16<K, false, true>(a, rec, v) : visit16<K, false, false>(a, rec, v);
  };
  switch (a.kind) {
    case AccessKind::Read: visit.template operator()<AccessKind::Read>(); break;
    case AccessKind::Write: visit.template operator()<AccessKind::Write>(); break;
    case AccessKind::ReduceAdd: visit.template operator()<AccessKind::ReduceAdd>(); break;
  }
}

// Copies of a write: the lines of `a` (gathered) homed in the other partition
// also take a clean slot in the writer's (the mirror set), or refresh the one
// they have; the write itself went to the homes (dirty there). No DRAM read
// (the data came with the write); the slots' victims are written back if
// dirty (returned). Why: a kernel that writes while it streams reads ends with
// less of its output dirty than an L2 with read copies alone keeps, and these
// slots account for it (experiments/results/2026-12-01-h200-dirty-mix).
i64 L2Cache::copy_far_writes(const trace::RangeAccess& a, int requester_partition, u32 stamp) {
  home_lines_.clear();
  for (size_t i = 0; i < line_count_; ++i) {
    const LineRef& l = lines_[i];
    if (static_cast<int>(partition_of_set(l.set)) != requester_partition) home_lines_.push_back({l.set ^ 1u, l.tag, l.mask});
  }
  if (home_lines_.empty()) return 0;
  trace::RangeAccess read = a;
  read.kind = trace::AccessKind::Read;
  Visit copy;
  copy.stamp = stamp;
  const size_t n = line_count_, fills = fill_count_;
  const auto saved_fills = std::vector(fills_.begin(), fills_.begin() + static_cast<std::ptrdiff_t>(fills));
  const bool ticket_fills = ticket_fills_;
  const u32 ticket_owner = ticket_owner_;
  std::swap(lines_, home_lines_);
  line_count_ = lines_.size();
  if (fills_.size() < line_count_) fills_.resize(line_count_);
  visit_gathered(read, 0, false, copy);
  // New copies hold their data now: no fill to wait for.
  for (size_t i = 0; i < line_count_; ++i) {
    const SetView m = set_view(lines_[i].set);
    const u64 found = match_ways<0>(m.tag(), lines_[i].tag, ways_) & m.valid_ways();
    if (found != 0) m.ready()[std::countr_zero(found)] = 0;
  }
  std::swap(lines_, home_lines_);
  line_count_ = n;
  std::copy(saved_fills.begin(), saved_fills.end(), fills_.begin());
  fill_count_ = fills;
  ticket_fills_ = ticket_fills;
  ticket_owner_ = ticket_owner;
  return copy.writeback;
}

L2Access L2Cache::lookup(const trace::RangeAccess& a, double now, int requester_partition) {
  fill_count_ = 0;
  check_address_window(a);
  L2Access out;
  Visit v;
  const bool is_read = a.kind == trace::AccessKind::Read;
  const unsigned view = !options_.copies ? 0u : is_read ? static_cast<unsigned>(requester_partition) : kWriteView;
  const u32 rid = find_or_create_record(a, now, view);
  TileRecord* rec = &records_[rid];
  last_record_ = rid;
  const unsigned other_partitions = ~(1u << requester_partition);
  last_was_read_lookup_ = false;

  // 1. Merge into a recent identical read.
  if (is_read && now - rec->last_read_lookup < options_.merge_window_cycles) {
    out.merged = true;
    out.sectors = rec->sectors;
    out.far = (rec->partition_mask & other_partitions) != 0;
    out.merged_ready = rec->data_ready;
    v.hits = rec->sectors;
    record(a, v, out);
    return out;
  }
  if (now < fill_horizon_) throw std::logic_error("L2 requests must arrive in nondecreasing simulated time");
  if (compact_ && fill_at_.size() >= fill_compaction_size_) drop_done_fills(now);
  if (clock_ >= (u32{1} << 31)) throw InputError("more than 2^31 L2 lookups in one simulation (31-bit recency stamps)");
  v.stamp = clock_++;
  last_stamp_ = v.stamp;

  // 2. Fast path: the tile record proves every sector is present (and dirty,
  //    for a write or reduction of the same tensor).
  if (options_.tile_fast_path && rec->valid && (is_read || (rec->all_dirty && rec->tensor == a.tensor))) {
    ++counters_.fast_path_requests;
    rec->used = true;
    if (hit_refreshes_ && rec->owner_id != 0) owner_stamp_[rec->owner_id] = v.stamp;
    hit_every_sector(a, *rec, other_partitions, out, v);
    if (is_read) {
      rec->last_read_lookup = now;
      last_was_read_lookup_ = true;
    }
    ++rec->lookups;
    if (options_.copies && a.kind == trace::AccessKind::Write) {
      gather_lines(a);
      v.writeback += copy_far_writes(a, requester_partition, v.stamp);
      out.writeback_sectors = v.writeback;
    }
    record(a, v, out);
    return out;
  }

  // The line loops index the per-tensor counts by the tensors of the lines
  // they evict, which may include this request's own.
  if (counters_.tensor.size() <= a.tensor) counters_.tensor.resize(static_cast<size_t>(a.tensor) + 1);
  gather_lines(a);

  // 3. A write or reduction to a valid tile: every sector is present and its
  //    lines are all owned by the record, so nothing is fetched or evicted
  //    and no owner changes; only the dirty bits, tensor and (when hits
  //    refresh) stamp of each line change.
  if (options_.tile_fast_path && rec->valid) {
    if (compact_) mark_dirty(a, v.stamp, Ways<16>{16});
    else mark_dirty(a, v.stamp, Ways<0>{ways_});
    rec->all_dirty = true;
    rec->tensor = a.tensor;
    rec->used = true;
    ++rec->lookups;
    hit_every_sector(a, *rec, other_partitions, out, v);
    if (options_.copies && a.kind == trace::AccessKind::Write) {
      v.writeback += copy_far_writes(a, requester_partition, v.stamp);
      out.writeback_sectors = v.writeback;
    }
    record(a, v, out);
    return out;
  }

  // 4. Line by line. A tile seen before takes ownership of its lines, unless
  //    its last kIdleOwns ownerships went unused (its lines were gone by the
  //    time it came back): then only every kOwnRetry-th time, to notice when
  //    that changes. Ownership only decides which shortcuts apply later, not
  //    any result.
  if (rec->owner) rec->idle_owns = rec->used ? 0 : static_cast<std::uint8_t>(std::min(rec->idle_owns + 1, 255));
  const bool own = options_.tile_fast_path && rec->lookups >= 1 &&
                   (rec->idle_owns < kIdleOwns || rec->lookups % kOwnRetry == 0);
  rec->owner = own;
  rec->used = false;
  if (own) {
    rec->valid = false;
    any_owner_ = true;
    if (rec->owner_id == 0) rec->owner_id = acquire_owner(rid);
  }
  auto run_visit = [&](bool owning, Visit& vv) { visit_gathered(a, rid, owning, vv); };
  // Copies: the far lines' sectors their copies lack are looked up at home
  // first (far hits or DRAM fills, owned by no record); then the request runs
  // on its own partition's slots, the far lines' copies in place of their
  // homes, and the copies it allocates there were counted at home already.
  Visit home;  // the copies' home look-ups: counted with the request, but their pending
  home.stamp = v.stamp;  // fills are not the record's (it owns the copies, filled with this request)
  const i64 copied = options_.copies && is_read ? look_up_homes_of_copies(requester_partition, run_visit, home) : 0;
  v.hits += home.hits;
  v.misses += home.misses;
  v.fetch += home.fetch;
  v.writeback += home.writeback;
  const unsigned home_partitions = home.partition_mask;
  const bool home_fills = copied > 0 && ticket_fills_;
  if (copied == 0) home_fills_.clear();
  run_visit(own, v);
  ticket_fills_ = ticket_fills_ || home_fills;  // the homes' new lines share the request's fill ticket
  if (copied > 0 && !home_fills_.empty()) {  // and their fills complete with the request's
    if (fills_.size() < fill_count_ + home_fills_.size()) fills_.resize(fill_count_ + home_fills_.size());
    std::copy(home_fills_.begin(), home_fills_.end(), fills_.begin() + static_cast<std::ptrdiff_t>(fill_count_));
    fill_count_ += home_fills_.size();
  }
  v.misses -= copied;
  v.fetch -= copied;
  if (options_.copies && a.kind == trace::AccessKind::Write) v.writeback += copy_far_writes(a, requester_partition, v.stamp);
  const unsigned record_partitions = v.partition_mask;  // the slots the record owns
  v.partition_mask |= home_partitions;
  const i64 sampled_sectors = v.hits + v.misses;
  if (sampling_ > 1) estimate_from_sample(a, v, sampled_sectors);
  rec = &records_[rid];
  rec->sectors = v.hits + v.misses;
  rec->sampled_sectors = sampled_sectors;
  rec->partition_mask = static_cast<std::uint8_t>(record_partitions);
  if (own) {
    // A tile with no line in a sampled set proves nothing about its lines.
    rec->valid = !v.evicted_own && sampled_sectors > 0;
    rec->all_dirty = v.all_dirty;
    rec->tensor = a.tensor;
    rec->fill_ready = v.pending;  // the latest fill time over its lines, as they are all hit or new
    owner_stamp_[rec->owner_id] = 0;  // folded into each line above
    if (owner_lines_[rec->owner_id] == 0) released_.push_back(rec->owner_id);
  }
  recycle_owners();
  rec = &records_[rid];
  if (is_read) {
    rec->last_read_lookup = now;
    last_was_read_lookup_ = true;
  }
  ++rec->lookups;
  out.sectors = rec->sectors;
  out.far = (v.partition_mask & other_partitions) != 0;
  out.fetch_sectors = v.fetch;
  out.writeback_sectors = v.writeback;
  out.pending_ready = std::max(v.pending, home.pending);
  record(a, v, out);
  return out;
}

void L2Cache::SampleStats::add(i64 sectors, i64 misses, i64 fetch) {
  if (sectors <= 0) return;
  const double n = static_cast<double>(sectors);
  const double w = seen ? std::min(1.0, n / kSampleWindow) : 1.0;
  miss_ratio += w * (static_cast<double>(misses) / n - miss_ratio);
  fetch_ratio += w * (static_cast<double>(fetch) / n - fetch_ratio);
  seen = true;
}

L2Cache::SampleStats& L2Cache::sample_stats(const trace::RangeAccess& a) {
  const size_t key = static_cast<size_t>(a.tensor) * kAccessKinds + static_cast<size_t>(a.kind);
  if (sample_stats_.size() <= key) sample_stats_.resize(key + 1);
  return sample_stats_[key];
}

// Set sampling: a request answered by its tile record hit on all its sampled sectors.
void L2Cache::note_sampled_hits(const trace::RangeAccess& a, i64 sampled_sectors) {
  sample_stats(a).add(sampled_sectors, 0, 0);
}

// Set sampling: turns the counts of a request's sampled lines into estimates
// for the whole request. Misses and fetches scale by the request's sectors
// over its sampled sectors (a ratio estimate, so they stay within the
// request); a request with no sampled line takes the recent ratios of its
// tensor and access kind. Write-backs are evictions from the sampled sets,
// each standing for `sampling_` sets, so they scale by the sampling factor,
// as the dirty and resident totals do. Fractions are carried to the next
// request, so totals are not biased by rounding.
void L2Cache::estimate_from_sample(const trace::RangeAccess& a, Visit& v, i64 sampled_sectors) {
  const i64 total = request_sectors_;
  SampleStats& st = sample_stats(a);
  double misses, fetch;
  if (sampled_sectors > 0) {
    st.add(sampled_sectors, v.misses, v.fetch);
    const double scale = static_cast<double>(total) / static_cast<double>(sampled_sectors);
    misses = static_cast<double>(v.misses) * scale;
    fetch = static_cast<double>(v.fetch) * scale;
  } else {
    ++counters_.unsampled_requests;
    const bool fetches = a.kind != trace::AccessKind::Write;  // before any sample: all miss
    misses = static_cast<double>(total) * st.miss_ratio;
    fetch = static_cast<double>(total) * (st.seen || fetches ? st.fetch_ratio : 0.0);
  }
  auto take = [](double x, double& carry) {
    const double whole = std::floor(x + carry);
    carry += x - whole;
    return static_cast<i64>(whole);
  };
  const i64 m = std::clamp<i64>(take(misses, miss_carry_), 0, total);
  v.misses = m;
  v.hits = total - m;
  v.fetch = std::clamp<i64>(take(fetch, fetch_carry_), 0, m);
  v.writeback *= sampling_;  // the per-tensor counts are scaled in counters()
  v.partition_mask |= request_partitions_;
}

// The lines the last access filled: their data is ready when their last
// outstanding fill is (a new line starts at 0), and so is a tile record's
// that owns one.
void L2Cache::complete_fills(u32 encoded) {
  std::byte* const block = block_->data_;
  const u32* const owner_record = owner_record_.data();
  const double ready = decode_ready(encoded);
  for (size_t i = 0; i < fill_count_; ++i) {
    const Fill f = fills_[i];
    const SetView s = set_view_of<0>(block, f.set);
    s.ready()[f.way] = std::max(s.ready()[f.way], encoded);
    if (((s.owned_ways() >> f.way) & 1u) != 0) {
      TileRecord& r = records_[owner_record[s.owner()[f.way]]];
      r.fill_ready = std::max(r.fill_ready, ready);
    }
  }
}

// The same for 16-way sets, whose lines hold the ticket (lookup stamp) of
// their last fill: the request's ticket gets its fill time, once for all the
// lines it brought in; a line that was present keeps the later of its two
// fills (a caller may complete out of order); records owning filled lines
// are ready no earlier.
void L2Cache::complete_tickets(u32 encoded) {
  const u32 k = last_stamp_ - first_ticket_;
  if (fill_at_.size() <= k) fill_at_.resize(static_cast<size_t>(k) + 1, 0u);
  fill_at_[k] = encoded;
  const double ready = decode_ready(encoded);
  if (ticket_owner_ != 0) records_[ticket_owner_].fill_ready = std::max(records_[ticket_owner_].fill_ready, ready);
  std::byte* const block = block_->data_;
  for (size_t i = 0; i < fill_count_; ++i) {
    const Fill f = fills_[i];
    const SetView s = set_view_of<16>(block, f.set);
    const u32 earlier = s.ready()[f.way] - first_ticket_;
    if (encoded >= (earlier < fill_at_.size() ? fill_at_[earlier] : 0u)) s.ready()[f.way] = last_stamp_;
    if (((s.owned_ways() >> f.way) & 1u) != 0) {
      TileRecord& r = records_[owner_record_[s.owner()[f.way]]];
      r.fill_ready = std::max(r.fill_ready, ready);
    }
  }
}

// Drops the leading tickets whose fills were done by `now` (or that filled
// nothing), so fill_at_ holds only the recent ones rather than one per lookup
// of the kernel (134 M for standard attention's softmax at N = 16384). Exact:
// a later request arrives no earlier than `now`, when its data is ready no
// earlier either, so a fill done by then changes no result, whether it is read
// as its time or as 0. DRAM fills complete in issue order, so the dropped
// prefix reaches nearly to the present; runs at geometrically growing sizes
// (amortised O(1) per lookup) when one fill stays pending long.
void L2Cache::drop_done_fills(double now) {
  fill_horizon_ = now;  // lookup() refuses earlier requests from now on
  const double done = std::floor(now - ready_base_);  // encoded fill times up to this are done by now
  size_t n = 0;
  while (n < fill_at_.size() && static_cast<double>(fill_at_[n]) <= done) ++n;
  fill_at_.erase(fill_at_.begin(), fill_at_.begin() + static_cast<std::ptrdiff_t>(n));
  first_ticket_ += static_cast<u32>(n);
  fill_compaction_size_ = std::max(min_fill_compaction_, 2 * fill_at_.size());
}

void L2Cache::complete(double fill_ready, double data_ready) {
  if (compact_ && ticket_fills_) complete_tickets(encode_ready(fill_ready));
  else if (!compact_ && fill_count_ != 0) complete_fills(encode_ready(fill_ready));
  fill_count_ = 0;
  ticket_fills_ = false;
  ticket_owner_ = 0;
  if (last_was_read_lookup_ && last_record_ != 0) records_[last_record_].data_ready = data_ready;
  last_was_read_lookup_ = false;
}

i64 L2Cache::flush() {
  const i64 dropped = dirty_sectors();
  std::memset(block_->data_, 0, block_->size_);
  for (auto& r : records_) {
    r.owner = r.valid = r.all_dirty = false;
    r.fill_ready = 0;
    r.last_read_lookup = kNever;
  }
  for (auto& r : records_) r.owner_id = 0;
  release_all_owners();
  dirty_order_.clear();
  dirty_sectors_ = 0;
  fill_count_ = 0;
  return dropped;
}

}  // namespace iosim::memory
