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

u64 hash_key(u64 addr, i64 row_bytes, i64 rows, i64 stride) {
  u64 h = addr * 0x9e3779b97f4a7c15ull;
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
  L2Geometry g{p.l2_bytes, p.l2_line_bytes, p.l2_sector_bytes, p.l2_associativity, p.l2_partitions};
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
  d.line_visits = line_visits - o.line_visits;
  d.fast_path_requests = fast_path_requests - o.fast_path_requests;
  return d;
}

// ---------------------------------------------------------------------------
struct L2Cache::TileRecord {
  u64 addr = 0;
  i64 row_bytes = 0, rows = 0, stride = 0;
  double last_read_lookup = kNever;
  double data_ready = 0;  // when the last read lookup's data arrived
  double fill_ready = 0;  // latest fill-ready time over owned lines
  i64 sectors = 0;        // requested sectors of one access
  u32 lookups = 0;        // non-merged lookups so far
  std::uint8_t partition_mask = 0;
  bool owner = false;      // owns its lines
  bool valid = false;      // owns all of them, all requested sectors valid
  bool all_dirty = false;  // ... and dirty
  trace::TensorIndex tensor = 0;
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
  if (options_.max_tile_records < 16 || options_.max_tile_records > (i64{1} << 30))
    throw InputError("L2 tile record limit must be between 16 and 2^30");
  hit_refreshes_ = policy_->hit_refreshes();
  sets_ = geometry_.sets();
  ways_ = static_cast<int>(geometry_.ways);
  line_shift_ = static_cast<unsigned>(std::countr_zero(static_cast<u64>(geometry_.line_bytes)));
  sector_shift_ = static_cast<unsigned>(std::countr_zero(static_cast<u64>(geometry_.sector_bytes)));
  set_mod_magic_ = mod_magic(static_cast<u64>(sets_));
  all_ways_ = ways_ == 64 ? ~u64{0} : (u64{1} << ways_) - 1;
  const size_t w = static_cast<size_t>(ways_);
  meta_bytes_ = (2 * sizeof(u64) + 3 * w + 63) / 64 * 64;
  set_stride_ = meta_bytes_ + (4 * sizeof(u32) * w + 63) / 64 * 64;
  block_ = std::make_unique<Block>(set_stride_ * static_cast<size_t>(sets_));
  records_.reserve(static_cast<size_t>(options_.max_tile_records) + 2);
  records_.emplace_back();
  record_stamp_.reserve(records_.capacity());
  record_stamp_.push_back(0);
  record_slots_.assign(std::bit_ceil(static_cast<u64>(options_.max_tile_records) * 2), 0);
}

L2Cache::~L2Cache() = default;

// Per set: [valid_ways, owned_ways, valid[W], dirty[W], tensor[W]] padded to
// 64 B, then tags, stamps, owners and fill times (W x 4 B each). A miss of a
// streaming request touches the first, tag, stamp and fill-time lines only.
L2Cache::SetView L2Cache::set_view(u64 set) const {
  std::byte* b = block_->data_ + set * set_stride_;
  const size_t w = static_cast<size_t>(ways_);
  SetView v;
  v.valid_ways = reinterpret_cast<u64*>(b);
  v.owned_ways = v.valid_ways + 1;
  v.valid = reinterpret_cast<std::uint8_t*>(v.owned_ways + 1);
  v.dirty = v.valid + w;
  v.tensor = v.dirty + w;
  v.tag = reinterpret_cast<u32*>(b + meta_bytes_);
  v.stamp = v.tag + w;
  v.owner = v.stamp + w;
  v.ready = v.owner + w;
  return v;
}

// XOR-fold of the line address (the real hash is unpublished), then modulo
// the set count, which need not be a power of two (A100: 20,480 sets).
u64 L2Cache::set_of(u64 line) const {
  const u64 h = line ^ (line >> 9) ^ (line >> 18) ^ (line >> 27) ^ (line >> 36) ^ (line >> 45);
  return fast_mod(static_cast<std::uint32_t>(h ^ (h >> 32)), set_mod_magic_, static_cast<u64>(sets_));
}

int L2Cache::partition_of(u64 addr) const { return static_cast<int>(partition_of_set(set_of(addr >> line_shift_))); }

// Sets alternate between partitions (so consecutive lines do too).
unsigned L2Cache::partition_of_set(u64 set) const {
  if (geometry_.partitions == 1) return 0;
  if (geometry_.partitions == 2) return static_cast<unsigned>(set & 1u);
  return static_cast<unsigned>(set % static_cast<u64>(geometry_.partitions));
}

bool L2Cache::holds(u64 addr) const {
  const u64 line = addr >> line_shift_;
  if ((line >> 32) != line_high_) return false;
  const SetView s = set_view(set_of(line));
  const unsigned sector = static_cast<unsigned>((addr & static_cast<u64>(geometry_.line_bytes - 1)) >> sector_shift_);
  for (int w = 0; w < ways_; ++w)
    if (((*s.valid_ways >> w) & 1u) != 0 && s.tag[w] == static_cast<u32>(line)) return (s.valid[w] >> sector) & 1u;
  return false;
}

i64 L2Cache::resident_sectors() const {
  i64 n = 0;
  for (i64 set = 0; set < sets_; ++set) {
    const SetView s = set_view(static_cast<u64>(set));
    for (int w = 0; w < ways_; ++w) n += popc(s.valid[w]);
  }
  return n;
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
  for (i64 set = 0; set < sets_; ++set) {
    const SetView s = set_view(static_cast<u64>(set));
    std::fill(s.ready, s.ready + ways_, 0u);
  }
  ready_base_ = now;
  for (auto& r : records_) r.fill_ready = std::min(r.fill_ready, now);
}

// ---------------------------------------------------------------------------
// Tile records.
// Slots hold (32-bit fingerprint of the key, record id); the record itself
// is read only when the fingerprints agree.
u32 L2Cache::find_or_create_record(const trace::RangeAccess& a, double now) {
  const u64 mask = record_slots_.size() - 1;
  const u64 h = hash_key(a.addr, a.row_bytes, a.rows, a.stride);
  const u64 fingerprint = h >> 32;
  for (u64 i = h & mask;; i = (i + 1) & mask) {
    const u64 slot = record_slots_[i];
    if (slot == 0) break;
    if ((slot >> 32) != fingerprint) continue;
    const u32 r = static_cast<u32>(slot);
    const TileRecord& t = records_[r];
    if (t.addr == a.addr && t.row_bytes == a.row_bytes && t.rows == a.rows && t.stride == a.stride) return r;
  }
  if (static_cast<i64>(records_.size()) > options_.max_tile_records) rebuild_records(now);
  TileRecord t;
  t.addr = a.addr;
  t.row_bytes = a.row_bytes;
  t.rows = a.rows;
  t.stride = a.stride;
  const u32 id = static_cast<u32>(records_.size());
  records_.push_back(t);
  record_stamp_.push_back(0);
  insert_slot(h, id);
  return id;
}

void L2Cache::insert_slot(u64 h, u32 id) {
  const u64 mask = record_slots_.size() - 1;
  for (u64 i = h & mask;; i = (i + 1) & mask)
    if (record_slots_[i] == 0) {
      record_slots_[i] = ((h >> 32) << 32) | id;
      return;
    }
}

// Drops records that can no longer merge. Ownership is given back to the
// lines first (each keeps max(own stamp, owner's stamp)), so replacement
// decisions do not change; only the fast path is lost until tiles repeat.
void L2Cache::rebuild_records(double now) {
  for (i64 set = 0; any_owner_ && set < sets_; ++set) {
    const SetView s = set_view(static_cast<u64>(set));
    for (int w = 0; w < ways_; ++w)
      if (s.owner[w] != 0) {
        s.stamp[w] = std::max(s.stamp[w], record_stamp_[s.owner[w]]);
        s.owner[w] = 0;
      }
    *s.owned_ways = 0;
  }
  std::vector<TileRecord> kept;
  kept.reserve(records_.capacity());
  kept.emplace_back();
  for (size_t r = 1; r < records_.size(); ++r) {
    TileRecord t = records_[r];
    if (!(now - t.last_read_lookup < options_.merge_window_cycles)) continue;
    t.owner = t.valid = t.all_dirty = false;
    t.fill_ready = 0;
    kept.push_back(t);
  }
  records_ = std::move(kept);
  record_stamp_.assign(records_.size(), 0);
  std::fill(record_slots_.begin(), record_slots_.end(), 0);
  for (u32 id = 1; id < records_.size(); ++id) {
    const TileRecord& t = records_[id];
    insert_slot(hash_key(t.addr, t.row_bytes, t.rows, t.stride), id);
  }
  last_record_ = 0;
  any_owner_ = false;
}

// ---------------------------------------------------------------------------
// An empty way if there is one, else the way with the lowest effective stamp
// (ties to the lower way).
int L2Cache::choose_victim(const SetView& s) const {
  const u64 empty = ~*s.valid_ways & all_ways_;
  if (empty != 0) return std::countr_zero(empty);
  if (*s.owned_ways == 0) return lowest_stamp_way(s.stamp);
  std::array<u32, 64> effective;
  for (int w = 0; w < ways_; ++w) effective[static_cast<size_t>(w)] = std::max(s.stamp[w], record_stamp_[s.owner[w]]);
  return lowest_stamp_way(effective.data());  // record 0 has stamp 0
}

// The first way holding the smallest stamp (stamps stay below 2^31, so the
// signed SSE2 compares order them correctly).
int L2Cache::lowest_stamp_way(const u32* stamp) const {
  int w = 0;
  u32 lowest = ~u32{0};
#if defined(__SSE2__)
  if (ways_ >= 4) {
    __m128i best = _mm_loadu_si128(reinterpret_cast<const __m128i*>(stamp));
    for (w = 4; w + 4 <= ways_; w += 4) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(stamp + w));
      const __m128i greater = _mm_cmpgt_epi32(best, v);
      best = _mm_or_si128(_mm_and_si128(greater, v), _mm_andnot_si128(greater, best));
    }
    for (const int order : {0x4e, 0xb1}) {  // swap halves, then neighbours
      const __m128i v = order == 0x4e ? _mm_shuffle_epi32(best, 0x4e) : _mm_shuffle_epi32(best, 0xb1);
      const __m128i greater = _mm_cmpgt_epi32(best, v);
      best = _mm_or_si128(_mm_and_si128(greater, v), _mm_andnot_si128(greater, best));
    }
    lowest = static_cast<u32>(_mm_cvtsi128_si32(best));
  }
#endif
  for (int r = w; r < ways_; ++r) lowest = std::min(lowest, stamp[r]);
  u64 match = 0;
  int v = 0;
#if defined(__SSE2__)
  const __m128i wanted = _mm_set1_epi32(static_cast<int>(lowest));
  for (; v + 4 <= ways_; v += 4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(stamp + v));
    match |= static_cast<u64>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, wanted)))) << v;
  }
#endif
  for (; v < ways_; ++v) match |= static_cast<u64>(stamp[v] == lowest) << v;
  return std::countr_zero(match);
}

int L2Cache::find_way(const SetView& s, u32 tag) const {
  u64 match = 0;
  int w = 0;
#if defined(__SSE2__)
  const __m128i wanted = _mm_set1_epi32(static_cast<int>(tag));
  for (; w + 4 <= ways_; w += 4) {
    const __m128i tags = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.tag + w));
    match |= static_cast<u64>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(tags, wanted)))) << w;
  }
#endif
  for (; w < ways_; ++w) match |= static_cast<u64>(s.tag[w] == tag) << w;
  match &= *s.valid_ways;
  return match != 0 ? std::countr_zero(match) : -1;
}

void L2Cache::evict(const SetView& s, int way, u32 rec, Visit& v) {
  const unsigned dirty = s.dirty[way];
  if (dirty != 0) {
    const int n = popc(dirty);
    v.writeback += n;
    dirty_sectors_ -= n;
    auto& tc = counters_.tensor;
    if (tc.size() <= s.tensor[way]) tc.resize(static_cast<size_t>(s.tensor[way]) + 1);
    tc[s.tensor[way]].writeback_sectors += n;
  }
  if (const u32 o = s.owner[way]; o != 0) {
    records_[o].valid = false;
    if (o == rec) v.evicted_own = true;
  }
}

void L2Cache::visit_line(u64 line, u64 set, unsigned mask, const trace::RangeAccess& a, u32 rec, bool own,
                         Visit& v) {
  ++counters_.line_visits;
  v.partition_mask |= 1u << partition_of_set(set);
  const SetView s = set_view(set);
  const u32 tag = static_cast<u32>(line);
  int w = find_way(s, tag);
  const bool reads = a.kind != trace::AccessKind::Write;  // reads and reductions need the old data
  const bool writes = a.kind != trace::AccessKind::Read;
  if (w >= 0) {
    // Line present: the sectors it lacks are misses.
    const u32 o = s.owner[w];
    if (own) {
      if (o != 0) s.stamp[w] = std::max(s.stamp[w], record_stamp_[o]);  // keep its effective stamp
      if (o != rec) {
        if (o != 0) records_[o].valid = false;
        s.owner[w] = rec;
        *s.owned_ways |= u64{1} << w;
      }
      records_[rec].fill_ready = std::max(records_[rec].fill_ready, decode_ready(s.ready[w]));
    }
    v.pending = std::max(v.pending, decode_ready(s.ready[w]));
    const unsigned valid = s.valid[w];
    const unsigned missing = mask & ~valid;
    v.hits += popc(mask & valid);
    v.misses += popc(missing);
    if (missing != 0 && reads) {
      v.fetch += popc(missing);
      fills_.push_back({set, w});
    }
    s.valid[w] = static_cast<std::uint8_t>(valid | mask);
    if (writes) {
      dirty_sectors_ += popc(mask & ~static_cast<unsigned>(s.dirty[w]));
      s.dirty[w] = static_cast<std::uint8_t>(s.dirty[w] | mask);
      if (s.tensor[w] != a.tensor) {
        if (s.owner[w] != 0 && s.owner[w] != rec) records_[s.owner[w]].valid = false;
        s.tensor[w] = static_cast<std::uint8_t>(a.tensor);
      }
    }
    if (hit_refreshes_) s.stamp[w] = v.stamp;
  } else {
    // Line absent: allocate (write-allocate; reads and reductions fetch).
    w = choose_victim(s);
    if (((*s.valid_ways >> w) & 1u) != 0) evict(s, w, rec, v);
    s.tag[w] = tag;
    s.valid[w] = static_cast<std::uint8_t>(mask);
    s.dirty[w] = static_cast<std::uint8_t>(writes ? mask : 0u);
    dirty_sectors_ += writes ? popc(mask) : 0;
    s.stamp[w] = static_cast<u32>(policy_->fill_stamp(v.stamp, line));
    s.owner[w] = own ? rec : 0;
    const u64 bit = u64{1} << w;
    *s.valid_ways |= bit;
    *s.owned_ways = own ? (*s.owned_ways | bit) : (*s.owned_ways & ~bit);
    s.tensor[w] = static_cast<std::uint8_t>(a.tensor);
    s.ready[w] = 0;
    v.misses += popc(mask);
    if (reads) {
      v.fetch += popc(mask);
      fills_.push_back({set, w});
    }
  }
  if (own) v.all_dirty = v.all_dirty && (static_cast<unsigned>(s.dirty[w]) & mask) == mask;
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

L2Access L2Cache::access(const trace::RangeAccess& a, double now, int requester_partition) {
  fills_.clear();
  check_address_window(a);
  L2Access out;
  Visit v;
  const u32 rid = find_or_create_record(a, now);
  TileRecord* rec = &records_[rid];
  last_record_ = rid;
  const bool is_read = a.kind == trace::AccessKind::Read;
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
  if (clock_ >= (u32{1} << 31)) throw InputError("more than 2^31 L2 lookups in one simulation (31-bit recency stamps)");
  v.stamp = clock_++;

  // 2. Fast path: the tile record proves every sector is present (and dirty,
  //    for a write or reduction of the same tensor).
  if (options_.tile_fast_path && rec->valid && (is_read || (rec->all_dirty && rec->tensor == a.tensor))) {
    ++counters_.fast_path_requests;
    if (hit_refreshes_) record_stamp_[rid] = v.stamp;
    out.sectors = rec->sectors;
    out.far = (rec->partition_mask & other_partitions) != 0;
    out.pending_ready = rec->fill_ready;
    v.hits = rec->sectors;
    if (is_read) {
      rec->last_read_lookup = now;
      last_was_read_lookup_ = true;
    }
    ++rec->lookups;
    record(a, v, out);
    return out;
  }

  // 3. Line by line. A tile seen before takes ownership of its lines.
  const bool own = options_.tile_fast_path && rec->lookups >= 1;
  if (own) {
    rec->valid = false;
    rec->fill_ready = 0;
    any_owner_ = true;
  }
  // Lines are visited in address order, in batches whose set blocks are
  // prefetched first: the host then waits for many cache misses at once.
  struct Pending {
    u64 line, set;
    unsigned mask;
  };
  constexpr int kBatch = 16;
  std::array<Pending, kBatch> batch;
  int pending = 0;
  auto run_batch = [&] {
    for (int i = 0; i < pending; ++i) visit_line(batch[i].line, batch[i].set, batch[i].mask, a, rid, own, v);
    pending = 0;
  };
  const u64 line_bytes = static_cast<u64>(geometry_.line_bytes);
  for (i64 r = 0; r < a.rows; ++r) {
    const u64 begin = a.addr + static_cast<u64>(r * a.stride);
    const u64 end = begin + static_cast<u64>(a.row_bytes);
    for (u64 line_addr = begin & ~(line_bytes - 1); line_addr < end; line_addr += line_bytes) {
      const u64 lo = std::max(begin, line_addr) - line_addr;
      const u64 hi = std::min(end, line_addr + line_bytes) - line_addr;  // exclusive
      const unsigned first = static_cast<unsigned>(lo >> sector_shift_);
      const unsigned last = static_cast<unsigned>((hi - 1) >> sector_shift_);
      Pending& p = batch[pending++];
      p.line = line_addr >> line_shift_;
      p.set = set_of(p.line);
      p.mask = ((2u << last) - 1u) & ~((1u << first) - 1u);
      const SetView sv = set_view(p.set);  // lines a miss touches (owners only when owned)
      __builtin_prefetch(sv.valid_ways, 1);
      __builtin_prefetch(sv.tag, 1);
      __builtin_prefetch(sv.stamp, 1);
      __builtin_prefetch(sv.ready, 1);
      if (pending == kBatch) run_batch();
    }
  }
  run_batch();
  rec = &records_[rid];
  rec->sectors = v.hits + v.misses;
  rec->partition_mask = static_cast<std::uint8_t>(v.partition_mask);
  if (own) {
    rec->owner = true;
    rec->valid = !v.evicted_own;
    rec->all_dirty = v.all_dirty;
    rec->tensor = a.tensor;
    record_stamp_[rid] = 0;  // folded into each line above
  }
  if (is_read) {
    rec->last_read_lookup = now;
    last_was_read_lookup_ = true;
  }
  ++rec->lookups;
  out.sectors = rec->sectors;
  out.far = (v.partition_mask & other_partitions) != 0;
  out.fetch_sectors = v.fetch;
  out.writeback_sectors = v.writeback;
  out.pending_ready = v.pending;
  record(a, v, out);
  return out;
}

void L2Cache::complete(double fill_ready, double data_ready) {
  if (!fills_.empty()) {
    const u32 encoded = encode_ready(fill_ready);
    for (const Fill& f : fills_) {
      const SetView s = set_view(f.set);
      // A line's data is ready when its last outstanding fill is (a new line starts at 0).
      s.ready[f.way] = std::max(s.ready[f.way], encoded);
      if (s.owner[f.way] != 0) {
        TileRecord& r = records_[s.owner[f.way]];
        r.fill_ready = std::max(r.fill_ready, decode_ready(encoded));
      }
    }
  }
  fills_.clear();
  if (last_was_read_lookup_ && last_record_ != 0) records_[last_record_].data_ready = data_ready;
  last_was_read_lookup_ = false;
}

i64 L2Cache::flush() {
  const i64 dropped = dirty_sectors_;
  std::memset(block_->data_, 0, block_->size_);
  for (auto& r : records_) {
    r.owner = r.valid = r.all_dirty = false;
    r.fill_ready = 0;
    r.last_read_lookup = kNever;
  }
  std::fill(record_stamp_.begin(), record_stamp_.end(), 0);
  dirty_sectors_ = 0;
  fills_.clear();
  return dropped;
}

}  // namespace iosim::memory
