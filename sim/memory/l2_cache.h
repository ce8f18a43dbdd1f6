// The GPU's L2: sectored (32 B sectors in 128 B lines), set-associative with
// an XOR-folded set index, write-back and write-allocate with per-sector
// valid and dirty bits, split into partitions (a set lives in one partition;
// a request from an SM of another partition is a far hit), fp32 reductions
// performed at the L2, and merging of concurrent identical read requests
// before the tag lookup (Hopper's L2 request coalescing).
//
// Units of work. The engine sends whole tiles (strided byte ranges). A tile
// is looked up line by line, except when a *tile record* proves the answer:
// a tile requested a second time takes ownership of its lines; while no line
// of it has been evicted or taken over by another tile, a repeated read hits
// on every sector, and the recency refresh is kept once in the record instead
// of per line (a line's effective stamp is max(own stamp, owner's stamp)).
// A write or reduction to such a valid tile needs no lookup of victims,
// fills or owners either: only its lines' dirty bits, tensor and stamps
// change. These fast paths give exactly the counters, replacement decisions
// and timing of the line-by-line path (`tile_fast_path = false`; the tests
// hold both to a plainly written reference model); they are what makes
// re-read K/V tiles and FA1's read-modify-write of O cheap.
//
// Host performance. A 40-60 MB L2 needs 5-10 MB of line state, touched at
// random; set blocks are prefetched ahead, so the per-line work is mostly
// instructions. 16-way sets (every profile's) keep their ways' LRU order, so
// an allocation takes its victim without comparing stamps, and run a per-line
// loop specialised for them (`ordered_sets`; the general loop is the
// reference). The loops are templated on the access kind, keep their
// counters in locals, touch a line's owner only when the line has one, and
// name owners by small recycled ids so their stamps stay in the host's caches.
//
// Set sampling (optional, approximate). With `set_sampling` = S > 1 only one
// set group in S is simulated (a group is the sets that differ only in their
// partition bits, so both partitions are sampled alike; the groups are picked
// by a fixed pseudo-random permutation, not by index bits, so that strided
// tiles, whose lines share low set-index bits, are sampled line by line
// rather than all or nothing); a request's
// counts are estimated from its lines in sampled sets, scaled by its total
// sectors over its sampled sectors (a request with no sampled line takes
// its tensor's running miss ratio), and state totals (dirty, resident) are
// scaled by S. Because the set index is a hash of the address, each set sees
// an unbiased share of the lines (Kessler, Hill and Wood, "A comparison of
// trace-sampling techniques for multi-megabyte caches", IEEE TC 1994).
// Requested bytes and sectors stay exact; docs/engine.md gives the measured
// error. S = 1 is the exact model.
//
// Dirty limit (optional, `dirty_limit_bytes`). Nsight Compute counts more
// DRAM writes during a kernel than evictions explain: on the H200 a streaming
// copy of any size from 32 MB to 1 GB ends with 25-27 MB of its writes still
// dirty in the 60 MB L2 (experiments/results/2026-11-23-h200-copy-writeback),
// so the hardware writes dirty data back before it needs the ways. Modelled
// as a limit on dirty bytes: past it, the lines dirty the longest are written
// to DRAM and stay resident, clean. Checked when a request arrives, so the
// write-back costs DRAM bandwidth from then on.
//
// Merging. A read of the identical tile (same address range) that arrives
// less than `merge_window_cycles` after a read lookup of it is merged into
// that lookup: it changes no cache state, costs no lookup, counts its sectors
// as requested and as hits, and receives its data when the earlier request
// does. Requests for different tiles that share lines are not merged.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/memory/replacement.h"
#include "sim/profile/hardware_profile.h"
#include "sim/trace/range_trace.h"

namespace iosim::memory {

using u32 = std::uint32_t;

struct L2Geometry {
  i64 capacity_bytes = 0;
  i64 line_bytes = 128;
  i64 sector_bytes = 32;
  i64 ways = 16;
  i64 partitions = 1;
  i64 lines() const { return capacity_bytes / line_bytes; }
  i64 sets() const { return lines() / ways; }
  i64 sectors_per_line() const { return line_bytes / sector_bytes; }
  // Throws InputError unless sizes are powers of two where needed, a line
  // holds at most 8 sectors and capacity = sets x ways x line.
  void validate() const;
  static L2Geometry from_profile(const profile::HardwareProfile& p);
};

struct L2Options {
  std::string replacement = "lru";
  // Identical reads within this many cycles of a read lookup merge into it
  // (0 disables merging).
  double merge_window_cycles = 0;
  // Answer repeated tiles from tile records (exact; false = line by line).
  bool tile_fast_path = true;
  // Tile records kept before old ones are dropped (memory bound; 2^14 keeps the
  // record hash table in the host's L2: faster than 2^16 on every bench case).
  i64 max_tile_records = i64{1} << 14;
  // Simulate one set group in this many (a power of two, 1..256; 1 = exact).
  int set_sampling = 1;
  // At most this many bytes dirty: past it the lines dirty the longest are
  // written to DRAM and stay resident, clean (infinity = only evictions write back).
  double dirty_limit_bytes = std::numeric_limits<double>::infinity();
  // 16-way sets (every profile's) keep their ways' LRU order, so an
  // allocation finds its victim without searching the stamps, and lookups run
  // a per-line loop specialised for 16 ways (exact: same results; false = the
  // general loop that searches the stamps, the reference the tests compare with).
  bool ordered_sets = true;
  // Set sampling: find a request's sampled lines from each 512-line block's
  // sampled sets rather than by testing every line (same lines and results;
  // false = line by line, the reference the tests compare with).
  bool sampled_gather_by_block = true;
  // 16-way sets: fill tickets (one per lookup) held before those whose fills
  // are done are dropped (exact: same results; 0 = hold every ticket of a
  // kernel, the reference the tests compare with).
  i64 fill_tickets_held = i64{1} << 16;
  // Copies (2 partitions): a read of a line homed in the other partition also
  // allocates it in the requester's partition (the mirror set: the set index
  // with its partition bit flipped), a clean second slot with its own
  // recency, which the requester's later reads hit near without touching
  // the home (the H200's home-half sweeps:
  // experiments/results/2026-11-28-h200-l2-home-sweep). A write goes to the
  // home (dirty there) and leaves the same clean slot in the writer's
  // partition (the dirty-mix probe: experiments/results/2026-12-01-h200-dirty-mix).
  // Needs 2 partitions, no set sampling, and the L2's physical capacity in
  // the geometry; exact with the tile fast path and ordered sets.
  bool copies = false;
};

// Indexed by AccessKind: Read, Write, ReduceAdd.
inline constexpr int kAccessKinds = 3;

struct L2KindCounts {
  i64 requests = 0;         // tile requests from SMs
  i64 merged_requests = 0;  // ... merged into an earlier identical read
  i64 bytes = 0;            // requested bytes (SM <-> L2; equals the trace's count)
  i64 sectors = 0;          // requested sectors (a partly used sector counts whole)
  // Requested-sector view: every requested sector is a hit or a miss; a merged
  // request's sectors are hits (they cause no DRAM traffic of their own).
  i64 hit_sectors = 0;
  i64 miss_sectors = 0;
  // Lookup view, after merging (compare with lts__t_sectors_srcunit_tex_op_*).
  i64 lookup_sectors = 0;
  i64 lookup_hit_sectors = 0;
  i64 lookup_miss_sectors = 0;
  void add(const L2KindCounts& o);
  L2KindCounts minus(const L2KindCounts& o) const;
};

struct L2TensorCounts {
  i64 read_bytes = 0;
  i64 write_bytes = 0;  // writes and reductions
  i64 hit_sectors = 0;
  i64 miss_sectors = 0;
  i64 fetch_sectors = 0;      // sectors this tensor's requests filled from DRAM
  i64 writeback_sectors = 0;  // dirty sectors of this tensor evicted to DRAM
};

struct L2Counters {
  std::array<L2KindCounts, kAccessKinds> kind{};
  std::vector<L2TensorCounts> tensor;  // by tensor index
  i64 fetch_sectors = 0;               // sectors filled from DRAM
  i64 writeback_sectors = 0;           // dirty sectors written back (on eviction, or early)
  i64 early_writeback_sectors = 0;     // ... of them, written back early by the dirty limit
  i64 line_visits = 0;                 // (row, line) pairs looked up one by one
  i64 fast_path_requests = 0;          // requests answered by a tile record
  i64 dirty_mark_visits = 0;           // lines of writes to valid tiles: only their dirty bits change
  i64 unsampled_requests = 0;          // set sampling: requests with no line in a sampled set
  L2KindCounts total() const;
  L2Counters minus(const L2Counters& o) const;
  void add(const L2Counters& o);  // the host-work counters too
};

// Outcome of one request, for the timing model.
struct L2Access {
  bool merged = false;
  bool far = false;           // some line lives in another partition than the requester
  i64 sectors = 0;            // requested sectors
  i64 fetch_sectors = 0;      // to read from DRAM now
  i64 writeback_sectors = 0;  // dirty sectors evicted by this request, or written early (dirty limit)
  double pending_ready = 0;   // hit lines still being filled by earlier misses until then (0: none after now)
  double merged_ready = 0;    // merged: when the earlier request's data arrived
};

class L2Cache {
 public:
  L2Cache(const L2Geometry& geometry, const L2Options& options);
  ~L2Cache();
  L2Cache(const L2Cache&) = delete;
  L2Cache& operator=(const L2Cache&) = delete;

  // Looks the request up at simulated time `now` (cycles) from an SM in
  // `requester_partition`, updating state and counters.
  L2Access access(const trace::RangeAccess& a, double now, int requester_partition);
  // Completes the last access: `fill_ready` is when the sectors it fetched
  // reach an SM, `data_ready` when its own data did (kept for later merges).
  void complete(double fill_ready, double data_ready);

  // A hint, changing nothing: starts loading the host memory that access(a)
  // will read first (its tile record's hash slot), so that a caller with
  // several requests at hand overlaps their cache misses.
  void prefetch(const trace::RangeAccess& a) const;

  // Empties the cache (dirty data is dropped: it is written back outside the
  // measured kernel, as `ncu --cache-control all` does). Returns the dirty
  // sectors dropped.
  i64 flush();

  // Called at each kernel start (no fill is in flight across kernels: a
  // kernel ends after its last load arrived). Fill times are stored as 32-bit
  // cycle offsets from here; a kernel longer than 2^32 cycles is rejected.
  void begin_kernel(double now);

  // Dirty and resident sectors (estimates, scaled by the sampling factor,
  // when sets are sampled).
  i64 dirty_sectors() const { return dirty_sectors_ * sampling_; }
  // The end of the 512 GiB address window every request must lie in (line
  // tags keep 32 bits): set by the first request; 2^39 before any.
  u64 address_window_end() const {
    const u64 high = line_high_ == ~u64{0} ? 0 : line_high_;
    return ((high + 1) << 32) << line_shift_;
  }
  i64 resident_sectors() const;
  // The sector holding addr is valid. With set sampling, false for an
  // address whose set is not simulated (see sampled()).
  bool holds(u64 addr) const;
  bool sampled(u64 addr) const;  // its set is simulated
  int set_sampling() const { return static_cast<int>(sampling_); }
  int partition_of(u64 addr) const;
  // With set sampling, per-tensor write-backs are kept as sampled counts and
  // scaled here.
  L2Counters counters() const;
  const L2Geometry& geometry() const { return geometry_; }
  // For tests: every 16-way set's LRU order lists exactly its valid ways,
  // sorted by (stamp, way).
  bool lru_order_consistent() const;
  std::string_view policy_name() const { return policy_->name(); }

 private:
  struct TileRecord;
  struct Fill;
  static constexpr int kIdleOwns = 2, kOwnRetry = 8;  // see lookup(), step 4
  struct Visit;
  template <int W>
  struct Ways;  // associativity, at compile time where known
  // One set's line state. Each set's fields sit together in one block (a
  // 16-byte header, sector bits and tensors, then tags, stamps, fill times and
  // owners), so a lookup touches a few adjacent host cache lines instead of one
  // page per field. With ordered_sets (the default) the header of a 16-way
  // set (every profile's) holds the ways' LRU order (see order16 in
  // l2_cache.cpp), then 16-bit valid and owned masks; otherwise two 64-bit masks.
  struct SetView {
    std::byte* head;
    size_t ways;   // 16 when compact
    size_t meta;   // bytes before the tags (64 when compact)
    bool compact;  // 16-way header
    std::uint8_t* valid() const { return reinterpret_cast<std::uint8_t*>(head + 16); }
    std::uint8_t* dirty() const { return valid() + ways; }
    std::uint8_t* tensor() const { return dirty() + ways; }  // of the last filler or writer (file tensors are < 256)
    u32* tag() const { return reinterpret_cast<u32*>(head + meta); }  // low 32 bits of the line index
    u32* stamp() const { return tag() + ways; }                       // recency
    // Fill completion, cycles after ready_base_ (0 = none pending); in a
    // compact set the ticket of the line's last fill instead (see fill_at_).
    u32* ready() const { return stamp() + ways; }
    u32* owner() const { return ready() + ways; }  // owner id of the record owning the line (where owned_ways says so)
    // Bit per way holding a line, and per way whose line a tile record owns.
    u64 valid_ways() const {
      return compact ? *reinterpret_cast<const std::uint16_t*>(head + 8) : *reinterpret_cast<const u64*>(head);
    }
    u64 owned_ways() const {
      return compact ? *reinterpret_cast<const std::uint16_t*>(head + 10) : *reinterpret_cast<const u64*>(head + 8);
    }
    void set_valid_ways(u64 m) const {
      if (compact) *reinterpret_cast<std::uint16_t*>(head + 8) = static_cast<std::uint16_t>(m);
      else *reinterpret_cast<u64*>(head) = m;
    }
    void set_owned_ways(u64 m) const {
      if (compact) *reinterpret_cast<std::uint16_t*>(head + 10) = static_cast<std::uint16_t>(m);
      else *reinterpret_cast<u64*>(head + 8) = m;
    }
    // 16 ways only: nibble k is the valid way k-th from the least recently
    // used end, sorted by (stamp, way); popcount(valid_ways) entries.
    u64& order() const { return *reinterpret_cast<u64*>(head); }
  };
  // A (row, line) pair of a request: its set, tag and requested sectors.
  struct LineRef {
    u64 set;
    u32 tag;
    u32 mask;
  };
  SetView set_view(u64 set) const;
  SetView set_view(std::byte* block, u64 set) const;
  // The same, with the layout known at compile time (W = 16: compact; 0: any other).
  template <int W>
  SetView set_view_of(std::byte* block, u64 set) const;
  // Repositions way w in a compact set's LRU order after its stamp changed.
  static void reorder(const SetView& s, int w);
  static void make_newest(const SetView& s, int w, u32 now);
  u64 set_of(u64 line) const;
  // Set sampling: whether a (full) set index is simulated, and its index in
  // the stored sets (the partition bits stay the low bits).
  static constexpr u32 kUnsampled = ~u32{0};
  bool is_sampled_set(u64 set) const { return sampling_ == 1 || stored_index_[set] != kUnsampled; }
  u64 stored_set(u64 set) const { return sampling_ == 1 ? set : stored_index_[set]; }
  void choose_sampled_sets();
  void estimate_from_sample(const trace::RangeAccess& a, Visit& v, i64 sampled_sectors);
  void note_sampled_hits(const trace::RangeAccess& a, i64 sampled_sectors);
  void hit_every_sector(const trace::RangeAccess& a, const TileRecord& rec, unsigned other_partitions, L2Access& out,
                        Visit& v);
  void check_address_window(const trace::RangeAccess& a);
  L2Access lookup(const trace::RangeAccess& a, double now, int requester_partition);
  // Dirty limit: lines that became dirty (0 -> some dirty sector), in that
  // order; write_back_excess cleans the oldest while the limit is exceeded.
  struct DirtyLine {
    u64 set;
    u32 tag;
    int way;
  };
  void note_dirtied(u64 set, u32 tag, int way) {
    if (limited_) dirty_order_.push_back({set, tag, way});
  }
  i64 write_back_excess();
  void compact_dirty_order();
  static constexpr unsigned kWriteView = 2;  // copies: the record view of writes and reductions (the homes)
  u32 find_or_create_record(const trace::RangeAccess& a, double now, unsigned view);
  void rebuild_records(double now);
  void insert_slot(u64 hash, u32 id);
  u32 acquire_owner(u32 record);
  void recycle_owners();
  void release_all_owners();
  unsigned partition_of_set(u64 set) const;
  i64 copy_far_writes(const trace::RangeAccess& a, int requester_partition, u32 stamp);
  void visit_gathered(const trace::RangeAccess& a, u32 rec, bool owning, Visit& v);
  void gather_lines(const trace::RangeAccess& a);
  // Copies: points this read's far lines at their copies in the requester's
  // partition (the mirror sets), after looking up at home (run_visit, owning
  // nothing) the sectors those copies lack; returns how many (the request's
  // own visit then allocates them in the copies: not misses of their own).
  template <class RunVisit>
  i64 look_up_homes_of_copies(int requester_partition, RunVisit& run_visit, Visit& v);
  std::vector<LineRef> home_lines_;
  std::vector<Fill> home_fills_;  // the lines that look-up filled
  template <bool Sampled>
  void gather_lines(const trace::RangeAccess& a);
  bool gather_sampled_by_block(u64 first, u64 span, u64 step, i64 rows, unsigned head, unsigned tail);
  template <int W>
  void mark_dirty(const trace::RangeAccess& a, u32 stamp, Ways<W> ways);
  // What the line loops need of the cache, copied into locals: they store
  // through char-typed sector bytes, which could otherwise alias any member.
  struct LoopState {
    const LineRef* lines;
    size_t n;  // lines_'s lines
    Fill* fills;
    TileRecord* records;
    const u32* owner_stamp;
    const u32* owner_record;
    u32* owner_lines;
    L2TensorCounts* tensor_counts;  // sized past every line's tensor
    u32 me;                         // the tile's owner id when it takes ownership, else 0
  };
  LoopState loop_state(u32 rec, bool own);
  void take_over(const SetView& s, int w, u32 me);
  template <int W>
  void visit_lines(const trace::RangeAccess& a, u32 rec, bool own, Visit& v, Ways<W> ways);
  template <int W, trace::AccessKind K, bool Own>
  void visit_lines(const trace::RangeAccess& a, u32 rec, Visit& v, Ways<W> ways);
  // visit_lines for 16-way sets with their LRU order (compact_: every
  // profile's default).
  template <trace::AccessKind K, bool Own, bool Lru>
  void visit16(const trace::RangeAccess& a, u32 rec, Visit& v);
  int victim16(const SetView& s) {
    const int w = static_cast<int>(s.order() & 15u);
    const bool raised = ((s.owned_ways() >> w) & 1u) != 0 && owner_stamp_[s.owner()[w]] > s.stamp()[w];
    return raised ? fold_raised_stamps(s.head) : w;
  }
  int fold_raised_stamps(std::byte* head);  // of a 16-way set (by its first byte: no view in memory)
  void fold_owner_stamps(const SetView& s);
  void record(const trace::RangeAccess& a, const Visit& v, const L2Access& out);
  void complete_fills(u32 encoded);
  void complete_tickets(u32 encoded);
  void drop_done_fills(double now);
  double decode_ready(u32 r) const { return r == 0 ? 0.0 : ready_base_ + static_cast<double>(r); }
  u32 encode_ready(double t) const;

  L2Geometry geometry_;
  L2Options options_;
  std::unique_ptr<ReplacementPolicy> policy_;
  ReplacementRule rule_;  // the policy as data, for the per-line path
  bool hit_refreshes_ = true;
  bool compact_ = false;  // 16-way sets with an LRU order and visit16 (options_.ordered_sets)
  bool partitions_pow2_ = false;
  i64 sets_ = 0;         // sets of the modelled L2 (the hash's range)
  i64 stored_sets_ = 0;  // sets simulated: sets_ / sampling_
  i64 sampling_ = 1;
  unsigned partition_bits_ = 0;
  std::vector<u32> stored_index_;  // set sampling: per set, its stored index or kUnsampled
  std::vector<u64> sampled_bits_;  // ... and a bit per set (sampled), small enough for the host's L1
  // ... and per chunk of 512 sets (sets_ a multiple of 512), its sampled
  // offsets grouped by their low 4 bits: chunk c's offsets o with o mod 16 = b
  // are block_offsets_[block_first_[16c + b] .. block_first_[16c + b + 1]).
  std::vector<std::uint16_t> block_offsets_;
  std::vector<u32> block_first_;
  int ways_ = 0;
  u64 all_ways_ = 0;
  unsigned line_shift_ = 7, sector_shift_ = 5;
  u64 set_mod_magic_ = 0;

  struct Block;
  std::unique_ptr<Block> block_;  // all sets' line state
  static constexpr size_t kCompactStride = 320;  // bytes per 16-way set
  size_t set_stride_ = 0;         // bytes per set
  size_t meta_bytes_ = 0;         // bytes before the tags
  size_t prefetch_bytes_ = 0;     // bytes of a set a lookup touches (all but the owners)
  u64 line_high_ = ~u64{0};       // high 32 bits of every line index (set on first use)
  double ready_base_ = 0;

  std::vector<TileRecord> records_;  // [0] unused
  // Owner ids (see acquire_owner), index 0 = none: the recency refresh that
  // fast-path hits gave the owner's lines, its record, how many lines it owns.
  std::vector<u32> owner_stamp_, owner_record_, owner_lines_;
  std::vector<u32> free_owners_;
  std::vector<u32> released_;  // ids that lost their last line during this access
  std::vector<u64> record_slots_;    // open addressing: fingerprint << 32 | id, 0 = empty
  bool any_owner_ = false;           // some line has had an owner since the last rebuild
  struct Fill {
    u64 set;
    int way;
  };
  std::vector<Fill> fills_;      // lines filled by the last access: the first fill_count_
  size_t fill_count_ = 0;        // (16-way sets: only the lines that were present)
  // 16-way sets: a line's fill time is its fill ticket's, the stamp of the
  // lookup that last filled it: fill_at_[ticket - first_ticket_] (encoded as
  // ready()), so complete() sets it once for all the lines a request brought in.
  std::vector<u32> fill_at_;
  // The first ticket fill_at_ holds: earlier tickets (of earlier kernels, or
  // dropped by drop_done_fills) mean no fill in flight.
  u32 first_ticket_ = 1;
  // drop_done_fills runs when fill_at_ reaches this size; requests must not
  // arrive before the time it last ran at (the engine's order: time never goes back).
  size_t min_fill_compaction_ = 0;  // options_.fill_tickets_held (0: never)
  size_t fill_compaction_size_ = 0;
  double fill_horizon_ = -std::numeric_limits<double>::infinity();
  u32 last_stamp_ = 0;        // the last lookup's stamp
  bool ticket_fills_ = false;  // the last lookup filled lines of 16-way sets
  u32 ticket_owner_ = 0;       // ... and this record owns the new ones
  std::vector<LineRef> lines_;  // lines of the current access: the first line_count_
  size_t line_count_ = 0;
  i64 request_sectors_ = 0;     // sectors of the current access (all lines, sampled or not)
  unsigned request_partitions_ = 0;  // set sampling: partitions of a few of its lines, computed exactly
  // Set sampling: per (tensor, kind), the recent miss and fetch ratios of
  // sampled sectors (moving averages over about kSampleWindow sectors), for
  // requests with no sampled line; and rounding carries of the scaled counts.
  static constexpr double kSampleWindow = 64;
  struct SampleStats {
    bool seen = false;
    double miss_ratio = 1, fetch_ratio = 1;
    void add(i64 sectors, i64 misses, i64 fetch);
  };
  std::vector<SampleStats> sample_stats_;  // by tensor x access kind
  SampleStats& sample_stats(const trace::RangeAccess& a);
  double miss_carry_ = 0, fetch_carry_ = 0;
  u32 last_record_ = 0;
  bool last_was_read_lookup_ = false;

  bool limited_ = false;                 // dirty_limit_bytes is finite
  i64 dirty_limit_sectors_ = 0;          // ... in stored (sampled) sectors
  std::deque<DirtyLine> dirty_order_;    // dirty limit: lines in the order they became dirty
  u32 clock_ = 1;  // recency clock: one tick per looked-up request (kept below 2^31)
  i64 dirty_sectors_ = 0;
  L2Counters counters_;
};

}  // namespace iosim::memory
