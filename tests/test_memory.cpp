// The L2 and DRAM models on their own: hits and misses of sectored lines,
// replacement, write-back counting, reductions, request merging, partitions,
// bandwidth, and the tile fast path against the line-by-line reference.
#define BOOST_TEST_MODULE memory
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <random>

#include "sim/common/error.h"
#include "sim/memory/memory_system.h"

using namespace iosim;
using memory::L2Cache;
using memory::u32;
using memory::L2Geometry;
using memory::L2Options;
using trace::AccessKind;
using trace::RangeAccess;

namespace {

constexpr u64 kBase = u64{1} << 30;

L2Geometry small_l2(i64 bytes = 64 * 1024, i64 partitions = 1) { return {bytes, 128, 32, 16, partitions}; }

L2Options options(const std::string& policy = "lru", double merge_window = 0, bool fast_path = true) {
  L2Options o;
  o.replacement = policy;
  o.merge_window_cycles = merge_window;
  o.tile_fast_path = fast_path;
  return o;
}

RangeAccess range(AccessKind kind, u64 addr, i64 bytes, trace::TensorIndex tensor = 0) {
  RangeAccess a;
  a.kind = kind;
  a.addr = addr;
  a.row_bytes = bytes;
  a.tensor = tensor;
  return a;
}

// `count` random tiles in [kBase, kBase + span): contiguous ranges of up to
// max_bytes, every other one instead up to max_rows rows of up to
// max_row_bytes, one of `strides` apart.
std::vector<RangeAccess> random_tiles(std::mt19937_64& rng, u64 span, int count, i64 max_bytes, i64 max_rows,
                                      i64 max_row_bytes, const std::array<i64, 5>& strides) {
  std::vector<RangeAccess> pool;
  for (int i = 0; i < count; ++i) {
    RangeAccess a = range(AccessKind::Read, kBase + rng() % span, 1 + static_cast<i64>(rng() % static_cast<u64>(max_bytes)));
    if (i % 2 == 0) {
      a.rows = 1 + static_cast<i64>(rng() % static_cast<u64>(max_rows));
      a.stride = strides[rng() % strides.size()];
      a.row_bytes = 1 + static_cast<i64>(rng() % static_cast<u64>(max_row_bytes));
    }
    pool.push_back(a);
  }
  return pool;
}

// A random kind: a read `reads` times in 10, a write up to 9 in 10, else a reduction.
AccessKind random_kind(std::mt19937_64& rng, unsigned reads) {
  const unsigned k = static_cast<unsigned>(rng() % 10);
  return k < reads ? AccessKind::Read : k < 9 ? AccessKind::Write : AccessKind::ReduceAdd;
}

// A tile of the pool with a random kind (random_kind) and one of 3 tensors.
RangeAccess random_request(std::mt19937_64& rng, const std::vector<RangeAccess>& pool, unsigned reads) {
  RangeAccess a = pool[rng() % pool.size()];
  a.kind = random_kind(rng, reads);
  a.tensor = static_cast<trace::TensorIndex>(rng() % 3);
  return a;
}

// Two caches answered one request alike.
void require_same(const memory::L2Access& x, const memory::L2Access& y) {
  BOOST_REQUIRE_EQUAL(x.merged, y.merged);
  BOOST_REQUIRE_EQUAL(x.far, y.far);
  BOOST_REQUIRE_EQUAL(x.sectors, y.sectors);
  BOOST_REQUIRE_EQUAL(x.fetch_sectors, y.fetch_sectors);
  BOOST_REQUIRE_EQUAL(x.writeback_sectors, y.writeback_sectors);
  BOOST_REQUIRE_EQUAL(x.pending_ready, y.pending_ready);
  BOOST_REQUIRE_EQUAL(x.merged_ready, y.merged_ready);
}

// Reads [base, base + bytes) in tiles of `tile` bytes, one request per time step.
void sweep(L2Cache& l2, u64 base, i64 bytes, i64 tile, double& now, AccessKind kind = AccessKind::Read) {
  for (i64 off = 0; off < bytes; off += tile) {
    l2.access(range(kind, base + static_cast<u64>(off), tile), now, 0);
    l2.complete(now, now);
    now += 1000;  // far apart: no merging, no fill in flight
  }
}

memory::L2KindCounts reads(const L2Cache& l2) { return l2.counters().kind[0]; }

// A profile with round numbers for timing checks.
profile::HardwareProfile test_profile() {
  profile::HardwareProfile p;
  p.name = "test";
  p.compute_capability = "8.0";
  p.sm_count = 4;
  p.sm_clock_hz = 1e9;
  p.l2_bytes = 1 << 20;
  p.l2_line_bytes = 128;
  p.l2_sector_bytes = 32;
  p.l2_partitions = 2;
  p.l2_associativity = 16;
  p.l2_bandwidth_bytes_per_s = 1024e9;  // 1024 B/cycle
  p.dram_peak_bandwidth_bytes_per_s = 128e9;
  p.dram_achievable_fraction = 0.5;     // 64 B/cycle
  p.l2_near_latency_cycles = 200;
  p.l2_far_latency_cycles = 350;
  p.dram_latency_cycles = 600;
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(first_read_misses_every_sector_and_rereading_hits) {
  L2Cache l2(small_l2(), options());
  double now = 0;
  sweep(l2, kBase, 32 * 1024, 1024, now);
  BOOST_TEST(reads(l2).miss_sectors == 1024);
  BOOST_TEST(reads(l2).hit_sectors == 0);
  BOOST_TEST(l2.counters().fetch_sectors == 1024);
  sweep(l2, kBase, 32 * 1024, 1024, now);
  BOOST_TEST(reads(l2).hit_sectors == 1024);
  BOOST_TEST(l2.counters().fetch_sectors == 1024);  // nothing more from DRAM
}

BOOST_AUTO_TEST_CASE(working_set_smaller_than_l2_hits_on_every_reread) {
  L2Cache l2(small_l2(), options("lru"));
  double now = 0;
  const i64 set_bytes = 32 * 1024;  // half the cache
  sweep(l2, kBase, set_bytes, 2048, now);
  const auto first = reads(l2);
  for (int pass = 0; pass < 3; ++pass) sweep(l2, kBase, set_bytes, 2048, now);
  BOOST_TEST(reads(l2).hit_sectors - first.hit_sectors == 3 * set_bytes / 32);
  BOOST_TEST(reads(l2).miss_sectors == first.miss_sectors);
}

BOOST_AUTO_TEST_CASE(working_set_twice_l2_misses_on_every_reread_under_lru) {
  L2Cache l2(small_l2(), options("lru"));
  double now = 0;
  const i64 set_bytes = 2 * 64 * 1024;
  sweep(l2, kBase, set_bytes, 2048, now);
  const auto first = reads(l2);
  sweep(l2, kBase, set_bytes, 2048, now);
  BOOST_TEST(reads(l2).hit_sectors == first.hit_sectors);  // a cyclic sweep over 2x the cache never hits under LRU
  BOOST_TEST(reads(l2).miss_sectors == 2 * first.miss_sectors);
}

BOOST_AUTO_TEST_CASE(bimodal_insertion_keeps_part_of_a_sweep_larger_than_l2) {
  // The H200 hits often on a cyclic sweep over 1.6x its L2 (hardware-and-anchors.md);
  // plain LRU never does, the thrash-resistant bip policy does.
  const i64 set_bytes = 64 * 1024 * 8 / 5;
  for (const std::string policy : {"lru", "bip"}) {
    L2Cache l2(small_l2(), options(policy));
    double now = 0;
    for (int pass = 0; pass < 4; ++pass) sweep(l2, kBase, set_bytes, 2048, now);
    const double hit_rate = static_cast<double>(reads(l2).hit_sectors) / static_cast<double>(reads(l2).sectors);
    if (policy == "lru") BOOST_TEST(hit_rate == 0.0);
    else BOOST_TEST(hit_rate > 0.2);
  }
}

// One set (capacity = ways x 128 B): fill every way, touch line 0 again, then
// bring in one more line. LRU evicts line 1, FIFO line 0.
BOOST_AUTO_TEST_CASE(lru_evicts_the_least_recently_used_line_and_fifo_the_oldest) {
  for (const i64 ways : {16, 6, 3}) {
    for (const std::string policy : {"lru", "fifo"}) {
      L2Cache l2(L2Geometry{ways * 128, 128, 32, ways, 1}, options(policy));
      double now = 0;
      for (i64 i = 0; i < ways; ++i) sweep(l2, kBase + static_cast<u64>(i) * 128, 128, 128, now);
      sweep(l2, kBase, 128, 128, now);  // hit on line 0
      BOOST_TEST(reads(l2).hit_sectors == 4);
      sweep(l2, kBase + static_cast<u64>(ways) * 128, 128, 128, now);  // one line too many
      const bool lru = policy == "lru";
      BOOST_TEST(l2.holds(kBase) == lru);
      BOOST_TEST(l2.holds(kBase + 128) == !lru);
      for (i64 i = 2; i <= ways; ++i) BOOST_TEST(l2.holds(kBase + static_cast<u64>(i) * 128));
    }
  }
}

BOOST_AUTO_TEST_CASE(dirty_line_evicted_once_counts_one_dram_write) {
  L2Cache l2(small_l2(), options());
  double now = 0;
  l2.access(range(AccessKind::Write, kBase, 128), now, 0);
  l2.complete(now, now);
  BOOST_TEST(l2.dirty_sectors() == 4);
  BOOST_TEST(l2.counters().fetch_sectors == 0);  // a write allocates without reading DRAM
  sweep(l2, kBase + (1 << 20), 4 * 64 * 1024, 4096, now);  // streams 4x the cache through
  BOOST_TEST(l2.counters().writeback_sectors == 4);
  BOOST_TEST(l2.dirty_sectors() == 0);
  sweep(l2, kBase + (1 << 21), 4 * 64 * 1024, 4096, now);
  BOOST_TEST(l2.counters().writeback_sectors == 4);  // once, not again
}

BOOST_AUTO_TEST_CASE(partial_line_write_dirties_and_writes_back_only_its_sectors) {
  L2Cache l2(small_l2(), options());
  double now = 0;
  l2.access(range(AccessKind::Write, kBase + 40, 30), now, 0);  // bytes 40..69: sectors 1 and 2
  l2.complete(now, now);
  BOOST_TEST(l2.dirty_sectors() == 2);
  BOOST_TEST(l2.counters().kind[1].sectors == 2);
  BOOST_TEST(l2.counters().kind[1].bytes == 30);
  sweep(l2, kBase + (1 << 20), 4 * 64 * 1024, 4096, now);
  BOOST_TEST(l2.counters().writeback_sectors == 2);
}

BOOST_AUTO_TEST_CASE(reduction_reads_missing_sectors_at_l2_and_leaves_them_dirty) {
  L2Cache l2(small_l2(), options());
  double now = 0;
  const auto first = l2.access(range(AccessKind::ReduceAdd, kBase, 256), now, 0);
  l2.complete(now + 600, now + 600);
  BOOST_TEST(first.fetch_sectors == 8);  // read-modify-write needs the old values
  BOOST_TEST(l2.dirty_sectors() == 8);
  now += 1000;
  const auto second = l2.access(range(AccessKind::ReduceAdd, kBase, 256), now, 0);
  l2.complete(now, now);
  BOOST_TEST(second.fetch_sectors == 0);
  BOOST_TEST(l2.counters().kind[2].hit_sectors == 8);
  BOOST_TEST(l2.counters().kind[2].bytes == 512);  // the SM sends operands only
}

BOOST_AUTO_TEST_CASE(identical_reads_within_the_merge_window_share_one_lookup) {
  L2Cache l2(small_l2(), options("lru", 100));
  const auto tile = range(AccessKind::Read, kBase, 4096);
  l2.access(tile, 0, 0);
  l2.complete(600, 600);
  const auto merged = l2.access(tile, 50, 0);
  l2.complete(0, 650);
  BOOST_TEST(merged.merged);
  BOOST_TEST(merged.merged_ready == 600);
  const auto later = l2.access(tile, 150, 0);  // 150 cycles after the lookup: a new lookup
  l2.complete(0, 400);
  BOOST_TEST(!later.merged);
  const auto k = reads(l2);
  BOOST_TEST(k.requests == 3);
  BOOST_TEST(k.merged_requests == 1);
  BOOST_TEST(k.sectors == 3 * 128);         // requested: every request counts
  BOOST_TEST(k.lookup_sectors == 2 * 128);  // looked up: the merged one does not
  BOOST_TEST(k.lookup_miss_sectors == 128);
  BOOST_TEST(k.hit_sectors == 2 * 128);
  // A different tile over the same lines does not merge.
  const auto overlapping = l2.access(range(AccessKind::Read, kBase, 2048), 160, 0);
  l2.complete(0, 400);
  BOOST_TEST(!overlapping.merged);
}

BOOST_AUTO_TEST_CASE(writes_never_merge) {
  L2Cache l2(small_l2(), options("lru", 100));
  const auto tile = range(AccessKind::Write, kBase, 1024);
  l2.access(tile, 0, 0);
  l2.complete(0, 0);
  BOOST_TEST(!l2.access(tile, 1, 0).merged);
}

BOOST_AUTO_TEST_CASE(flush_empties_the_cache_and_drops_dirty_data) {
  L2Cache l2(small_l2(), options());
  double now = 0;
  sweep(l2, kBase, 8192, 1024, now, AccessKind::Write);
  BOOST_TEST(l2.resident_sectors() == 256);
  BOOST_TEST(l2.flush() == 256);
  BOOST_TEST(l2.resident_sectors() == 0);
  BOOST_TEST(l2.dirty_sectors() == 0);
  BOOST_TEST(!l2.holds(kBase));
  sweep(l2, kBase, 8192, 1024, now);
  BOOST_TEST(reads(l2).miss_sectors == 256);
}

BOOST_AUTO_TEST_CASE(strided_tile_touches_only_its_rows) {
  L2Cache l2(small_l2(), options());
  RangeAccess a = range(AccessKind::Read, kBase, 64);
  a.rows = 8;
  a.stride = 1024;
  l2.access(a, 0, 0);
  l2.complete(0, 0);
  BOOST_TEST(reads(l2).sectors == 16);
  BOOST_TEST(l2.holds(kBase + 7 * 1024 + 32));
  BOOST_TEST(!l2.holds(kBase + 64));
  BOOST_TEST(!l2.holds(kBase + 512));
}

// The tile fast path must change nothing: random tiles (overlapping, strided,
// partial sectors, all three kinds) replayed through both paths give the same
// counters, request by request.
BOOST_AUTO_TEST_CASE(tile_fast_path_gives_the_line_by_line_results) {
  for (const std::string policy : {"lru", "fifo", "bip"}) {
    L2Cache fast(small_l2(32 * 1024, 2), options(policy, 40, true));
    L2Cache slow(small_l2(32 * 1024, 2), options(policy, 40, false));
    std::mt19937_64 rng(7);
    // A pool of tiles that repeat, so records form, and overlap, so they are invalidated.
    std::vector<RangeAccess> pool;
    for (int i = 0; i < 48; ++i) {
      RangeAccess a = range(AccessKind::Read, kBase + (rng() % 96) * 512 + (rng() % 4) * 16, 256 + (rng() % 6) * 192);
      if (i % 3 == 0) {
        a.rows = 1 + static_cast<i64>(rng() % 6);
        a.stride = 2048;
        a.row_bytes = 128 + static_cast<i64>(rng() % 3) * 64;
      }
      a.tensor = static_cast<trace::TensorIndex>(rng() % 3);
      pool.push_back(a);
    }
    double now = 0;
    for (int step = 0; step < 20000; ++step) {
      RangeAccess a = pool[rng() % pool.size()];
      a.kind = random_kind(rng, 6);
      now += static_cast<double>(rng() % 60);
      const int part = static_cast<int>(rng() % 2);
      require_same(fast.access(a, now, part), slow.access(a, now, part));
      const double fill = now + 300 + static_cast<double>(rng() % 500);
      fast.complete(fill, fill);
      slow.complete(fill, fill);
    }
    const auto f = fast.counters().total(), s = slow.counters().total();
    BOOST_TEST(f.hit_sectors == s.hit_sectors);
    BOOST_TEST(f.lookup_hit_sectors == s.lookup_hit_sectors);
    BOOST_TEST(fast.dirty_sectors() == slow.dirty_sectors());
    BOOST_TEST(fast.resident_sectors() == slow.resident_sectors());
    BOOST_TEST(fast.lru_order_consistent());
    BOOST_TEST(slow.lru_order_consistent());
    BOOST_TEST(fast.counters().fast_path_requests > 1000);  // the fast path was exercised
    BOOST_TEST(slow.counters().fast_path_requests == 0);
  }
}

// A plainly written model of the L2 as docs/engine.md describes it (one
// slot per way, searched linearly; no tile records, no merging), to hold the
// optimised cache to: XOR-folded set index modulo the set count, victim = an
// empty way, else the lowest stamp (ties to the lower way), sectored lines,
// write-allocate, write-back, reductions that fetch, per-request stamps.
class ReferenceL2 {
 public:
  ReferenceL2(const L2Geometry& g, const std::string& policy)
      : g_(g), sets_(g.sets()), rule_(memory::replacement_rule(policy)), ways_(static_cast<size_t>(g.sets() * g.ways)) {}

  struct Result {
    i64 sectors = 0, hits = 0, misses = 0, fetch = 0, writeback = 0;
    double pending = 0;
    bool far = false;
  };
  Result access(const RangeAccess& a, int requester) {
    Result r;
    const u32 stamp = clock_++;
    fills_.clear();
    const bool reads = a.kind != AccessKind::Write, writes = a.kind != AccessKind::Read;
    for (i64 row = 0; row < a.rows; ++row) {
      const u64 begin = a.addr + static_cast<u64>(row * a.stride), end = begin + static_cast<u64>(a.row_bytes);
      for (u64 byte = begin; byte < end;) {
        const u64 line = byte / 128, line_end = std::min(end, (line + 1) * 128);
        unsigned mask = 0;
        for (u64 sector = byte / 32; sector * 32 < line_end; ++sector) mask |= 1u << (sector % 4);
        byte = line_end;
        const u64 set = set_of(line);
        if (static_cast<int>(set % static_cast<u64>(g_.partitions)) != requester) r.far = true;
        Way* ways = &ways_[set * static_cast<u64>(g_.ways)];
        Way* w = nullptr;
        for (i64 k = 0; k < g_.ways; ++k)
          if (ways[k].valid && ways[k].line == line) w = &ways[k];
        r.sectors += std::popcount(mask);
        if (w != nullptr) {
          r.pending = std::max(r.pending, w->ready);
          r.hits += std::popcount(mask & w->sectors);
          r.misses += std::popcount(mask & ~w->sectors);
          if (reads && (mask & ~w->sectors) != 0) {
            r.fetch += std::popcount(mask & ~w->sectors);
            fills_.push_back(w);
          }
          w->sectors |= mask;
          if (writes) {
            dirty_ += std::popcount(mask & ~w->dirty);
            w->dirty |= mask;
            w->tensor = a.tensor;
          }
          if (rule_.hit_refreshes) w->stamp = stamp;
        } else {
          w = &ways[0];
          for (i64 k = 0; k < g_.ways; ++k) {
            if (!ways[k].valid) {
              w = &ways[k];
              break;
            }
            if (ways[k].stamp < w->stamp) w = &ways[k];
          }
          if (w->valid) {
            r.writeback += std::popcount(w->dirty);
            dirty_ -= std::popcount(w->dirty);
          }
          *w = Way{true, line, static_cast<u32>(rule_.fill_stamp(stamp, line)), mask, writes ? mask : 0u, a.tensor, 0};
          dirty_ += writes ? std::popcount(mask) : 0;
          r.misses += std::popcount(mask);
          if (reads) {
            r.fetch += std::popcount(mask);
            fills_.push_back(w);
          }
        }
      }
    }
    return r;
  }
  void complete(double fill_ready) {
    for (Way* w : fills_) w->ready = std::max(w->ready, fill_ready);
  }
  i64 dirty_sectors() const { return dirty_; }
  i64 resident_sectors() const {
    i64 n = 0;
    for (const Way& w : ways_) n += w.valid ? std::popcount(w.sectors) : 0;
    return n;
  }

 private:
  struct Way {
    bool valid = false;
    u64 line = 0;
    u32 stamp = 0;
    unsigned sectors = 0, dirty = 0;
    trace::TensorIndex tensor = 0;
    double ready = 0;
  };
  u64 set_of(u64 line) const {
    u64 h = 0;
    for (int shift = 0; shift < 64; shift += 9) h ^= line >> shift;
    return ((h ^ (h >> 32)) & 0xffffffffu) % static_cast<u64>(sets_);
  }
  L2Geometry g_;
  i64 sets_;
  memory::ReplacementRule rule_;
  std::vector<Way> ways_;
  std::vector<Way*> fills_;
  u32 clock_ = 1;
  i64 dirty_ = 0;
};

// Random requests (tiles that repeat, so tile records form and are broken;
// odd offsets, strides and row lengths; all three kinds; 3 tensors) through
// the cache, with and without the tile fast path, against the reference:
// every request's counts, write-backs, wait for fills in flight and
// partition, and the final dirty and resident sectors. Geometries cover 16
// ways (the profiles'), other associativities, and a set count that is a
// multiple of 512 (where lines are hashed a 512-line block at a time).
BOOST_AUTO_TEST_CASE(the_cache_matches_a_plain_reference_model_request_by_request) {
  const std::vector<L2Geometry> geometries = {
      small_l2(32 * 1024, 2), L2Geometry{48 * 1024, 128, 32, 12, 2}, L2Geometry{1 << 20, 128, 32, 16, 2},
      L2Geometry{64 * 1024, 128, 32, 32, 1}};
  for (const L2Geometry& g : geometries) {
    for (const std::string policy : {"lru", "fifo", "bip"}) {
      for (const bool fast_path : {true, false}) {
        L2Cache l2(g, options(policy, 0, fast_path));
        ReferenceL2 ref(g, policy);
        std::mt19937_64 rng(11);
        const u64 span = static_cast<u64>(g.capacity_bytes) * 3;  // 3x the cache: hits and misses
        const std::vector<RangeAccess> pool = random_tiles(rng, span, 64, 1500, 40, 300, {2048, 4096, 200, 96, 0});
        double now = 0;
        i64 fast_requests = 0;
        for (int step = 0; step < 6000; ++step) {
          RangeAccess a = pool[rng() % pool.size()];
          if (rng() % 8 == 0) a.addr = kBase + rng() % span;  // now and then a tile seen once
          a.kind = random_kind(rng, 6);
          a.tensor = static_cast<trace::TensorIndex>(rng() % 3);
          now += static_cast<double>(rng() % 50);
          const int part = static_cast<int>(rng() % static_cast<u64>(g.partitions));
          const auto before = l2.counters().total();
          const auto x = l2.access(a, now, part);
          const auto y = ref.access(a, part);
          const auto after = l2.counters().total();
          BOOST_REQUIRE_EQUAL(x.sectors, y.sectors);
          BOOST_REQUIRE_EQUAL(after.hit_sectors - before.hit_sectors, y.hits);
          BOOST_REQUIRE_EQUAL(after.miss_sectors - before.miss_sectors, y.misses);
          BOOST_REQUIRE_EQUAL(x.fetch_sectors, y.fetch);
          BOOST_REQUIRE_EQUAL(x.writeback_sectors, y.writeback);
          BOOST_REQUIRE_EQUAL(x.far, y.far);
          BOOST_REQUIRE_EQUAL(x.pending_ready, y.pending > now ? y.pending : 0.0);  // fills done by now: none
          const double fill = now + 100 + static_cast<double>(rng() % 900);  // whole cycles
          l2.complete(fill, fill);
          ref.complete(fill);
          BOOST_REQUIRE_EQUAL(l2.dirty_sectors(), ref.dirty_sectors());
        }
        BOOST_TEST(l2.resident_sectors() == ref.resident_sectors());
        BOOST_TEST(l2.lru_order_consistent());
        fast_requests = l2.counters().fast_path_requests + l2.counters().dirty_mark_visits;
        BOOST_TEST((fast_requests > 0) == fast_path);  // the shortcuts were taken
      }
    }
  }
}

// The 16-way sets' LRU order and the specialised line loop against the
// general loop that searches the stamps (ordered_sets = false): random
// requests (tiles that repeat, so tile records form, take lines over and are
// raised by fast-path hits; odd offsets and strides; all kinds; 3 tensors)
// under each policy, with and without the tile fast path and a dirty limit,
// 1, 2 and 4 partitions, and now and then a flush: every request's outcome
// and every counter agree after every request.
BOOST_AUTO_TEST_CASE(ordered_sets_give_the_reference_loop_results) {
  for (const std::string policy : {"lru", "fifo", "bip"})
    for (const i64 partitions : {1, 2, 4})
      for (const bool fast_path : {true, false})
        for (const bool limited : {false, true}) {
          L2Options ordered = options(policy, 30, fast_path), plain = ordered;
          plain.ordered_sets = false;
          if (limited) ordered.dirty_limit_bytes = plain.dirty_limit_bytes = 24 * 1024;
          const L2Geometry g = small_l2(128 * 1024, partitions);
          L2Cache x(g, ordered), y(g, plain);
          std::mt19937_64 rng(static_cast<u64>(partitions) * 7 + fast_path * 3 + limited);
          const u64 span = static_cast<u64>(g.capacity_bytes) * 3;
          const std::vector<RangeAccess> pool = random_tiles(rng, span, 80, 2000, 64, 256, {2048, 4096, 128, 200, 0});
          double now = 0;
          for (int step = 0; step < 5000; ++step) {
            RangeAccess a = pool[rng() % pool.size()];
            if (rng() % 8 == 0) a.addr = kBase + rng() % span;
            a.kind = random_kind(rng, 6);
            a.tensor = static_cast<trace::TensorIndex>(rng() % 3);
            now += static_cast<double>(rng() % 40);
            const int part = static_cast<int>(rng() % static_cast<u64>(partitions));
            if (rng() % 1000 == 0) BOOST_REQUIRE_EQUAL(x.flush(), y.flush());
            require_same(x.access(a, now, part), y.access(a, now, part));
            const double fill = now + 100 + static_cast<double>(rng() % 900);
            x.complete(fill, fill + 10);
            y.complete(fill, fill + 10);
            const auto cx = x.counters(), cy = y.counters();
            for (int kind = 0; kind < memory::kAccessKinds; ++kind) {
              const auto &kx = cx.kind[static_cast<size_t>(kind)], &ky = cy.kind[static_cast<size_t>(kind)];
              BOOST_REQUIRE_EQUAL(kx.hit_sectors, ky.hit_sectors);
              BOOST_REQUIRE_EQUAL(kx.miss_sectors, ky.miss_sectors);
              BOOST_REQUIRE_EQUAL(kx.lookup_hit_sectors, ky.lookup_hit_sectors);
              BOOST_REQUIRE_EQUAL(kx.lookup_miss_sectors, ky.lookup_miss_sectors);
              BOOST_REQUIRE_EQUAL(kx.merged_requests, ky.merged_requests);
            }
            BOOST_REQUIRE_EQUAL(cx.tensor.size(), cy.tensor.size());
            for (size_t t = 0; t < cx.tensor.size(); ++t) {
              BOOST_REQUIRE_EQUAL(cx.tensor[t].hit_sectors, cy.tensor[t].hit_sectors);
              BOOST_REQUIRE_EQUAL(cx.tensor[t].fetch_sectors, cy.tensor[t].fetch_sectors);
              BOOST_REQUIRE_EQUAL(cx.tensor[t].writeback_sectors, cy.tensor[t].writeback_sectors);
            }
            BOOST_REQUIRE_EQUAL(cx.fetch_sectors, cy.fetch_sectors);
            BOOST_REQUIRE_EQUAL(cx.writeback_sectors, cy.writeback_sectors);
            BOOST_REQUIRE_EQUAL(cx.early_writeback_sectors, cy.early_writeback_sectors);
            BOOST_REQUIRE_EQUAL(cx.fast_path_requests, cy.fast_path_requests);
            BOOST_REQUIRE_EQUAL(x.dirty_sectors(), y.dirty_sectors());
          }
          BOOST_TEST(x.resident_sectors() == y.resident_sectors());
          BOOST_TEST(x.lru_order_consistent());
          if (fast_path) BOOST_TEST(x.counters().fast_path_requests > 0);  // records formed
        }
}

// 16-way sets drop the fill tickets of fills done by the time of the request
// being looked up. Against a cache that holds every ticket: random requests at
// irregular times, fills that end soon, late (long past later requests) or not
// at all (nothing fetched), as MemorySystem completes them, with kernel starts;
// the prefetch hint is given to one cache only.
BOOST_AUTO_TEST_CASE(dropping_done_fill_tickets_gives_the_same_results) {
  for (const std::string policy : {"lru", "fifo", "bip"})
    for (const i64 partitions : {1, 2})
      for (const bool fast_path : {true, false}) {
        L2Options dropping = options(policy, 30, fast_path), holding = dropping;
        dropping.fill_tickets_held = 1;  // drop at every lookup
        holding.fill_tickets_held = 0;
        const L2Geometry g = small_l2(64 * 1024, partitions);
        L2Cache x(g, dropping), y(g, holding);
        std::mt19937_64 rng(static_cast<u64>(partitions) * 5 + fast_path);
        const u64 span = static_cast<u64>(g.capacity_bytes) * 2;
        const std::vector<RangeAccess> pool = random_tiles(rng, span, 60, 1500, 32, 256, {2048, 4096, 128, 200, 0});
        double now = 0;
        for (int step = 0; step < 6000; ++step) {
          const RangeAccess a = random_request(rng, pool, 6);
          now += static_cast<double>(rng() % 50) + (rng() % 3 == 0 ? 0.5 : 0.0);
          if (rng() % 2000 == 0) {
            x.begin_kernel(now);
            y.begin_kernel(now);
          }
          const int part = static_cast<int>(rng() % static_cast<u64>(partitions));
          x.prefetch(a);
          const memory::L2Access ax = x.access(a, now, part), ay = y.access(a, now, part);
          require_same(ax, ay);
          const double late = rng() % 10 == 0 ? 5000.0 : 0.0;  // a fill that stays pending long
          const double fill = ax.fetch_sectors > 0 ? now + 100 + late + static_cast<double>(rng() % 700) : 0;
          const double ready = std::max({now + 40, fill, ax.pending_ready});
          x.complete(fill, ready);
          y.complete(fill, ready);
          BOOST_REQUIRE_EQUAL(x.dirty_sectors(), y.dirty_sectors());
        }
        const auto cx = x.counters(), cy = y.counters();
        BOOST_TEST(cx.fetch_sectors == cy.fetch_sectors);
        BOOST_TEST(cx.writeback_sectors == cy.writeback_sectors);
        BOOST_TEST(cx.total().hit_sectors == cy.total().hit_sectors);
        BOOST_TEST(cx.total().lookup_sectors == cy.total().lookup_sectors);
        BOOST_TEST(x.resident_sectors() == y.resident_sectors());
      }
}

// Dropping done fills relies on time never going back within a kernel (the
// engine's order); a caller that breaks it is told so.
BOOST_AUTO_TEST_CASE(a_request_earlier_than_dropped_fills_is_refused) {
  L2Options o = options();
  o.fill_tickets_held = 1;
  L2Cache l2(small_l2(), o);
  l2.access(range(AccessKind::Read, kBase, 1024), 100, 0);
  l2.complete(300, 300);
  l2.access(range(AccessKind::Read, kBase + 4096, 1024), 400, 0);  // drops the first fill (done at 300)
  l2.complete(600, 600);
  BOOST_CHECK_THROW(l2.access(range(AccessKind::Read, kBase + 8192, 1024), 350, 0), std::logic_error);
  l2.begin_kernel(1000);  // a new kernel starts its own clock
  BOOST_CHECK_NO_THROW(l2.access(range(AccessKind::Read, kBase + 8192, 1024), 1000, 0));
}

// Lines are hashed to sets a 512-line block at a time when the set count
// allows it; they must land where a later lookup of any of their sectors
// looks (contiguous, unaligned ranges across several blocks, and strided).
BOOST_AUTO_TEST_CASE(every_sector_written_is_found_again_across_hash_blocks) {
  L2Cache l2(L2Geometry{8 << 20, 128, 32, 16, 2}, options());  // 4096 sets
  const u64 base = kBase + 12345 * 32;
  l2.access(range(AccessKind::Write, base, 200 * 1024), 0, 0);  // 1600 lines, 4 blocks
  l2.complete(0, 0);
  RangeAccess strided = range(AccessKind::Write, kBase + (u64{64} << 20) + 96, 64);
  strided.rows = 300;
  strided.stride = 128 * 37;
  l2.access(strided, 0, 0);
  l2.complete(0, 0);
  for (u64 off = 0; off < 200 * 1024; off += 32) BOOST_REQUIRE(l2.holds(base + off));
  for (i64 r = 0; r < strided.rows; ++r) {
    BOOST_REQUIRE(l2.holds(strided.addr + static_cast<u64>(r * strided.stride)));
    BOOST_REQUIRE(l2.holds(strided.addr + static_cast<u64>(r * strided.stride) + 32));
  }
  BOOST_TEST(l2.resident_sectors() == 200 * 1024 / 32 + 300 * 2);  // sector-aligned, not line-aligned
  BOOST_TEST(!l2.holds(base + 200 * 1024 + 64));
}

BOOST_AUTO_TEST_CASE(bad_set_sampling_is_an_input_error) {
  for (const int s : {0, 3, 512}) {
    L2Options o = options();
    o.set_sampling = s;
    BOOST_CHECK_THROW(L2Cache(small_l2(1 << 20), o), InputError);
  }
  L2Options o = options();
  o.set_sampling = 256;
  BOOST_CHECK_THROW(L2Cache(small_l2(64 * 1024), o), InputError);  // 32 sets: not a multiple of 256
}

BOOST_AUTO_TEST_CASE(unknown_policy_and_bad_geometry_are_input_errors) {
  BOOST_CHECK_THROW(L2Cache(small_l2(), options("plru")), InputError);
  BOOST_CHECK_THROW(L2Cache(L2Geometry{100000, 128, 32, 16, 1}, options()), InputError);
  BOOST_CHECK_THROW(L2Cache(L2Geometry{65536, 96, 32, 16, 1}, options()), InputError);
  BOOST_CHECK_THROW(L2Cache(L2Geometry{65536, 128, 32, 16, 1}, options("lru", -1)), InputError);
}

// ---------------------------------------------------------------------------
// Timing.

// Set sampling: a sampled cache simulates its sets exactly, so a working set
// below the L2 still hits on (nearly) every re-read and one twice the L2 misses,
// requested sectors stay exact, and it keeps 1 / S of the sets.
BOOST_AUTO_TEST_CASE(set_sampled_cache_keeps_exact_requests_and_lru_behaviour) {
  for (const int s : {4, 16}) {
    for (const double factor : {0.5, 2.0}) {
      L2Options o = options();
      o.set_sampling = s;
      L2Cache l2(small_l2(1 << 20, 2), o);
      const i64 bytes = static_cast<i64>(factor * (1 << 20));
      double now = 0;
      sweep(l2, kBase, bytes, 4096, now);
      const auto first = reads(l2);
      sweep(l2, kBase, bytes, 4096, now);
      const auto second = reads(l2).minus(first);
      BOOST_TEST(second.sectors == bytes / 32);
      BOOST_TEST(second.bytes == bytes);
      // Tiles with no sampled line take their tensor's recent ratio: the
      // first of them after the switch from misses to hits is off.
      const double hit_share = static_cast<double>(second.hit_sectors) / static_cast<double>(second.sectors);
      if (factor < 1) BOOST_TEST(hit_share > 0.97);
      else BOOST_TEST(second.miss_sectors == second.sectors);
      BOOST_TEST(first.miss_sectors == first.sectors);
      BOOST_TEST(l2.set_sampling() == s);
    }
  }
  // Exactly 1 in S set groups is simulated, in both partitions alike.
  L2Options o = options();
  o.set_sampling = 16;
  const L2Cache l2(small_l2(4 << 20, 2), o);
  i64 sampled[2] = {0, 0};
  for (u64 line = 0; line < (u64{16} << 15); ++line)
    if (l2.sampled(kBase + line * 128)) ++sampled[l2.partition_of(kBase + line * 128)];
  const double expect = static_cast<double>(u64{16} << 15) / 16 / 2;
  for (const i64 n : sampled) BOOST_TEST(std::abs(static_cast<double>(n) / expect - 1) < 0.05);
}

// A random mix of strided tiles through a sampled and an exact cache: the
// estimated misses, fetches and write-backs stay within a few percent.
BOOST_AUTO_TEST_CASE(set_sampled_cache_estimates_the_exact_counts) {
  L2Options exact_o = options(), sampled_o = options();
  sampled_o.set_sampling = 8;
  L2Cache exact(small_l2(1 << 20, 2), exact_o), sampled(small_l2(1 << 20, 2), sampled_o);
  std::mt19937_64 rng(7);
  double now = 0;
  for (int i = 0; i < 20000; ++i) {
    RangeAccess a;
    const int tensor = static_cast<int>(rng() % 4);
    a.kind = rng() % 4 == 0 ? AccessKind::Write : AccessKind::Read;
    a.tensor = static_cast<trace::TensorIndex>(tensor);
    a.rows = 64;
    a.row_bytes = 128;
    a.stride = 2048;
    // Tensors 0 and 1 fit in the L2 together, 2 and 3 are three times its size.
    const u64 region = tensor < 2 ? u64{256} << 10 : u64{3} << 20;
    a.addr = kBase + static_cast<u64>(tensor) * (u64{4} << 20) + (rng() % (region / 2048 - 64)) * 2048 + (rng() % 16) * 128;
    for (L2Cache* c : {&exact, &sampled}) {
      c->access(a, now, 0);
      c->complete(now, now);
    }
    now += 1000;
  }
  const auto x = exact.counters(), y = sampled.counters();
  BOOST_TEST(y.total().sectors == x.total().sectors);
  auto near = [](i64 a, i64 b) { return std::abs(static_cast<double>(a) / static_cast<double>(b) - 1) < 0.05; };
  BOOST_TEST_MESSAGE("sampled/exact: misses " << y.total().miss_sectors << "/" << x.total().miss_sectors << ", fetch "
                     << y.fetch_sectors << "/" << x.fetch_sectors << ", write-back " << y.writeback_sectors << "/"
                     << x.writeback_sectors << ", dirty " << sampled.dirty_sectors() << "/" << exact.dirty_sectors());
  BOOST_TEST(near(y.total().miss_sectors, x.total().miss_sectors));
  BOOST_TEST(near(y.fetch_sectors, x.fetch_sectors));
  BOOST_TEST(near(y.writeback_sectors, x.writeback_sectors));
  BOOST_TEST(near(sampled.dirty_sectors(), exact.dirty_sectors()));
  BOOST_TEST(y.line_visits < x.line_visits / 4);
}

// The search for sampled lines by 512-line block finds exactly the lines
// that testing every line finds: every counter agrees after every request,
// for rows of 1 to 3000 lines, odd offsets, strides that are and are not
// whole lines (16k lines apart, for the residue filter; rows overlapping or
// not), all access kinds, and set counts that are and are not a multiple of 512.
BOOST_AUTO_TEST_CASE(sampled_gather_by_block_equals_line_by_line) {
  const L2Geometry geometries[] = {small_l2(4 << 20, 2), L2Geometry{384 * 16 * 128, 128, 32, 16, 2}};
  for (const L2Geometry& g : geometries)
    for (const int s : {2, 16, 64, 256}) {
      if (g.sets() % (2 * s) != 0) continue;
      L2Options by_block = options(), by_line = options();
      by_block.set_sampling = by_line.set_sampling = s;
      by_line.sampled_gather_by_block = false;
      L2Cache x(g, by_block), y(g, by_line);
      std::mt19937_64 rng(static_cast<u64>(s) * 131 + static_cast<u64>(g.sets()));
      double now = 0;
      for (int i = 0; i < 2000; ++i) {
        RangeAccess a;
        a.kind = static_cast<AccessKind>(rng() % 3);
        a.tensor = static_cast<trace::TensorIndex>(rng() % 3);
        const u64 shape = rng() % 6;
        if (shape < 2) {  // short rows, many of them
          a.row_bytes = 1 + static_cast<i64>(rng() % 1024);
          a.rows = 1 + static_cast<i64>(rng() % 200);
        } else if (shape < 5) {  // rows of up to 600 lines
          a.row_bytes = 128 * (1 + static_cast<i64>(rng() % 600)) - static_cast<i64>(rng() % 2) * 48;
          a.rows = 1 + static_cast<i64>(rng() % 16);
        } else {  // rows of up to 3000 lines
          a.row_bytes = 128 * (1 + static_cast<i64>(rng() % 3000));
          a.rows = 1 + static_cast<i64>(rng() % 3);
        }
        const i64 line_stride = (a.row_bytes + 127) / 128 + static_cast<i64>(rng() % 40);
        const u64 stride_kind = rng() % 5;
        a.stride = stride_kind == 0   ? a.row_bytes + static_cast<i64>(rng() % 300)                    // not whole lines
                   : stride_kind == 1 ? static_cast<i64>(rng() % static_cast<u64>(a.row_bytes + 1))  // rows overlap
                   : stride_kind == 2 ? 2048 * (1 + static_cast<i64>(rng() % 4))                      // 16k lines
                                      : 128 * line_stride;
        a.addr = kBase + (rng() % (u64{24} << 20)) / 32 * 32 + (rng() % 2) * 16;
        const int partition = static_cast<int>(rng() % 2);
        const memory::L2Access ax = x.access(a, now, partition);
        const memory::L2Access ay = y.access(a, now, partition);
        x.complete(now + 500, now + 600);
        y.complete(now + 500, now + 600);
        const auto cx = x.counters(), cy = y.counters();
        BOOST_TEST_CONTEXT("S=" << s << " sets=" << g.sets() << " request " << i) {
          BOOST_TEST(ax.sectors == ay.sectors);
          BOOST_TEST(ax.far == ay.far);
          BOOST_TEST(ax.fetch_sectors == ay.fetch_sectors);
          BOOST_TEST(ax.writeback_sectors == ay.writeback_sectors);
          BOOST_TEST(ax.pending_ready == ay.pending_ready);
          BOOST_TEST(cx.total().hit_sectors == cy.total().hit_sectors);
          BOOST_TEST(cx.total().miss_sectors == cy.total().miss_sectors);
          BOOST_TEST(cx.fetch_sectors == cy.fetch_sectors);
          BOOST_TEST(cx.line_visits == cy.line_visits);
          BOOST_TEST(cx.dirty_mark_visits == cy.dirty_mark_visits);
          BOOST_TEST(cx.unsampled_requests == cy.unsampled_requests);
          BOOST_TEST(cx.writeback_sectors == cy.writeback_sectors);
          BOOST_TEST(x.dirty_sectors() == y.dirty_sectors());
          BOOST_TEST(x.resident_sectors() == y.resident_sectors());
        }
        if (cx.line_visits != cy.line_visits || cx.total().miss_sectors != cy.total().miss_sectors) break;
        now += 100;
      }
    }
}

// Dirty limit: past it, the lines dirty the longest are written to DRAM with
// the next request and stay resident and clean; a written-back line that is
// written again is dirty again (and queued again).
BOOST_AUTO_TEST_CASE(a_dirty_limit_writes_the_oldest_dirty_lines_back_early) {
  L2Options o = options();
  o.dirty_limit_bytes = 64 * 128;  // 64 lines
  L2Cache l2(small_l2(1 << 20), o);
  const auto first = range(AccessKind::Write, kBase, 64 * 128);
  const auto second = range(AccessKind::Write, kBase + (1 << 18), 32 * 128);
  const auto other = range(AccessKind::Read, kBase + (1 << 19), 128, 1);
  auto at = [&](const RangeAccess& a, double t) {
    const auto r = l2.access(a, t, 0);
    l2.complete(t, t);
    return r;
  };
  BOOST_TEST(at(first, 0).writeback_sectors == 0);
  BOOST_TEST(at(other, 10).writeback_sectors == 0);  // at the limit, not past it
  BOOST_TEST(at(second, 20).writeback_sectors == 0);
  BOOST_TEST(l2.dirty_sectors() == 96 * 4);
  BOOST_TEST(at(other, 30).writeback_sectors == 32 * 4);  // the first tile's first 32 lines
  BOOST_TEST(l2.dirty_sectors() == 64 * 4);
  BOOST_TEST(l2.counters().early_writeback_sectors == 32 * 4);
  BOOST_TEST(at(range(AccessKind::Read, kBase, 64 * 128), 40).fetch_sectors == 0);  // still resident
  for (int round = 0; round < 2; ++round) {  // the second write goes through the tile record
    BOOST_TEST(at(first, 50 + 20 * round).writeback_sectors == 0);
    BOOST_TEST(at(other, 60 + 20 * round).writeback_sectors == 32 * 4);  // the rest of the oldest
  }
  BOOST_TEST(l2.dirty_sectors() == 64 * 4);
  // A flush drops what is queued: nothing is written back after it.
  l2.flush();
  BOOST_TEST(at(second, 200).writeback_sectors == 0);
  BOOST_TEST(at(other, 210).writeback_sectors == 0);
  L2Options bad = options();
  bad.dirty_limit_bytes = -1;
  BOOST_CHECK_THROW(L2Cache(small_l2(), bad), InputError);
}

// The tile records' fast paths stay exact with a dirty limit: a record whose
// lines were written back early is no longer all dirty. Random writes, reads and
// reductions through a cache with and without the fast path agree on every
// counter after every request.
BOOST_AUTO_TEST_CASE(a_dirty_limit_keeps_the_fast_path_exact) {
  L2Options fast = options(), slow = options("lru", 0, false);
  fast.dirty_limit_bytes = slow.dirty_limit_bytes = 48 * 1024;
  L2Cache x(small_l2(1 << 18, 2), fast), y(small_l2(1 << 18, 2), slow);
  std::mt19937_64 rng(11);
  double now = 0;
  for (int i = 0; i < 20000; ++i) {
    // A few tiles, re-requested often, so that records become valid and are written back;
    // neighbours overlap, so lines pass from one record to another.
    const u64 tile = rng() % 24;
    RangeAccess a = range(static_cast<AccessKind>(rng() % 3), kBase + tile * 6144, 8192,
                          static_cast<trace::TensorIndex>(tile % 3));
    if (tile % 4 == 0) {  // strided ones too
      a.rows = 8;
      a.row_bytes = 256;
      a.stride = 1024;
    }
    const auto rx = x.access(a, now, 0), ry = y.access(a, now, 0);
    x.complete(now + 400, now + 500);
    y.complete(now + 400, now + 500);
    BOOST_TEST_CONTEXT("request " << i) {
      BOOST_TEST(rx.writeback_sectors == ry.writeback_sectors);
      BOOST_TEST(rx.fetch_sectors == ry.fetch_sectors);
      BOOST_TEST(x.dirty_sectors() == y.dirty_sectors());
    }
    if (rx.writeback_sectors != ry.writeback_sectors || x.dirty_sectors() != y.dirty_sectors()) break;
    now += static_cast<double>(rng() % 200);
  }
  BOOST_TEST(x.counters().early_writeback_sectors == y.counters().early_writeback_sectors);
  BOOST_TEST(x.counters().early_writeback_sectors > 0);
  BOOST_TEST(x.counters().fast_path_requests > 1000);
}

BOOST_AUTO_TEST_CASE(far_partition_hits_cost_the_far_latency) {
  const auto p = test_profile();
  memory::MemorySystem mem(p, options());
  const auto line = range(AccessKind::Read, kBase, 128);
  const int home = mem.l2().partition_of(kBase);
  mem.load(line, 0, home);  // miss: brings the line in
  const double near = mem.load(line, 10000, home) - 10000;
  const double far = mem.load(line, 20000, 1 - home) - 20000;
  const double transfer = 128.0 / 1024.0;
  BOOST_TEST(near == p.l2_near_latency_cycles + transfer);
  BOOST_TEST(far == p.l2_far_latency_cycles + transfer);
}

BOOST_AUTO_TEST_CASE(miss_waits_for_dram_and_concurrent_fills_share_its_bandwidth) {
  const auto p = test_profile();
  memory::MemorySystem mem(p, options());
  const i64 tile = 64 * 1024;  // 1024 cycles at 64 B/cycle
  const double a = mem.load(range(AccessKind::Read, kBase, tile), 0, 0);
  const double b = mem.load(range(AccessKind::Read, kBase + (1 << 20), tile), 0, 0);
  BOOST_TEST(a == 1024 + p.dram_latency_cycles);
  BOOST_TEST(b == 2048 + p.dram_latency_cycles);  // queued behind the first
  BOOST_TEST(mem.dram().counters().read_bytes == 2 * tile);
}

// The L2's intake (l2.write_bandwidth): stores into lines the L2 holds take
// their sectors at its rate, not the slices' read rate, and the fills of read
// misses queue at the same intake: a store stream beside a read stream adds up.
BOOST_AUTO_TEST_CASE(stores_and_fills_share_the_l2_intake) {
  auto p = test_profile();
  p.l2_write_bandwidth_bytes_per_s = 32e9;  // 32 B/cycle, a 32nd of the slices' read rate
  p.l2_partitions = 1;                      // every hit near
  const i64 tile = 64 * 1024;               // 2048 cycles at the intake, 64 at the read rate
  {
    memory::MemorySystem mem(p, options());
    const double first = mem.store(range(AccessKind::Write, kBase, tile), 0, 0);
    const double second = mem.store(range(AccessKind::Write, kBase, tile), 0, 0);  // lines present: hits
    BOOST_TEST(first == 2048 + p.l2_near_latency_cycles);
    BOOST_TEST(second == 4096 + p.l2_near_latency_cycles);
  }
  {
    memory::MemorySystem mem(p, options());
    mem.store(range(AccessKind::Write, kBase, 2 * tile), 0, 0);  // the intake busy for 4096 cycles
    // The fill's data is in once DRAM delivered it (1024 cycles + latency) and the intake took it.
    const double read = mem.load(range(AccessKind::Read, kBase + (4 << 20), tile), 0, 0);
    BOOST_TEST(read == 4096 + 2048);
    BOOST_TEST(mem.dram().counters().read_bytes == tile);
  }
  {
    p.l2_write_bandwidth_bytes_per_s = 0;  // absent: stores cost the slices' transfer only
    memory::MemorySystem mem(p, options());
    BOOST_TEST(mem.store(range(AccessKind::Write, kBase, tile), 0, 0) == 64 + p.l2_near_latency_cycles);
  }
}

// A reduction holds the L2 slices as long as all SMs' reductions together
// take per byte (sm_pipes.red_per_sm x SMs), not a read's transfer time, and
// reads behind it wait for it.
BOOST_AUTO_TEST_CASE(reductions_hold_the_l2_slices_at_the_reduction_rate) {
  auto p = test_profile();
  p.l2_partitions = 1;
  p.sm_pipes.red_bytes_per_cycle = 64;  // x 4 SMs: 256 B/cycle, a quarter of the slices' 1024
  const i64 tile = 64 * 1024;
  memory::MemorySystem mem(p, options());
  mem.load(range(AccessKind::Read, kBase, tile), 0, 0);  // the lines in L2
  const double reduced = mem.store(range(AccessKind::ReduceAdd, kBase, tile), 10000, 0);
  BOOST_TEST(reduced == 10000 + 256 + p.l2_near_latency_cycles);  // 64 KiB at 256 B/cycle
  const double read = mem.load(range(AccessKind::Read, kBase, tile), 10000, 0);
  BOOST_TEST(read == 10000 + 256 + 64 + p.l2_near_latency_cycles);  // behind it, at 1024 B/cycle
  p.sm_pipes.red_bytes_per_cycle = 0;  // no rate: a reduction costs what a read does
  memory::MemorySystem plain(p, options());
  plain.load(range(AccessKind::Read, kBase, tile), 0, 0);
  BOOST_TEST(plain.store(range(AccessKind::ReduceAdd, kBase, tile), 10000, 0) == 10000 + 64 + p.l2_near_latency_cycles);
}

BOOST_AUTO_TEST_CASE(a_hit_on_a_line_still_being_filled_waits_for_the_fill) {
  const auto p = test_profile();
  memory::MemorySystem mem(p, options());
  const auto tile = range(AccessKind::Read, kBase, 4096);
  const double first = mem.load(tile, 0, 0);
  const double second = mem.load(tile, 100, 0);  // not merged (window 0), lines present but in flight
  BOOST_TEST(second >= first);
  BOOST_TEST(mem.l2().counters().kind[0].hit_sectors == 128);
}

BOOST_AUTO_TEST_CASE(write_backs_use_dram_bandwidth_but_nobody_waits_for_them) {
  auto p = test_profile();
  p.l2_bytes = 64 * 1024;
  memory::MemorySystem mem(p, options());
  for (int i = 0; i < 64; ++i) mem.store(range(AccessKind::Write, kBase + static_cast<u64>(i) * 1024, 1024), 0, 0);
  BOOST_TEST(mem.dram().counters().write_bytes == 0);  // all still in L2
  const double done = mem.store(range(AccessKind::Write, kBase + (1 << 20), 64 * 1024), 0, 0);
  BOOST_TEST(mem.dram().counters().write_bytes == 64 * 1024);  // evicted every earlier line
  BOOST_TEST(done < 1024);  // the store itself did not wait for the write-backs
  const double read = mem.load(range(AccessKind::Read, kBase + (2 << 20), 128), 0, 0);
  BOOST_TEST(read >= 1024 + p.dram_latency_cycles);  // but a later fill queues behind them
}

// The L2 holds l2.effective_size distinct bytes where the profile gives it
// (Hopper's near copies take slots): data that fits l2.size but not the
// effective size is evicted.
BOOST_AUTO_TEST_CASE(the_l2_holds_the_effective_size_where_the_profile_gives_one) {
  auto p = test_profile();
  p.l2_bytes = 64 * 1024;
  const i64 tile = 48 * 1024;
  {
    memory::MemorySystem mem(p, options());
    mem.load(range(AccessKind::Read, kBase, tile), 0, 0);
    mem.load(range(AccessKind::Read, kBase, tile), 1e6, 0);
    BOOST_TEST(mem.dram().counters().read_bytes == tile);  // 48 KiB fit 64 KiB: the second read hits
  }
  p.l2_effective_bytes = 32 * 1024;
  memory::MemorySystem mem(p, options());
  mem.load(range(AccessKind::Read, kBase, tile), 0, 0);
  mem.load(range(AccessKind::Read, kBase, tile), 1e6, 0);
  BOOST_TEST(mem.dram().counters().read_bytes > tile);  // not in 32 KiB of distinct lines
}

// Copies (L2Options::copies, the H200's home-half sweeps): a far read leaves
// a copy in the reader's partition, so the reader's next read is a near hit
// that needs neither the home nor DRAM; and a line read from both partitions
// takes two slots, so such a working set is half-kept at half the L2, where
// one read only in its home partition uses all of it.
L2Options copy_options() {
  L2Options o = options("lru", 0, false);
  o.ordered_sets = false;
  o.copies = true;
  return o;
}

BOOST_AUTO_TEST_CASE(a_far_read_leaves_a_copy_that_the_next_read_hits_near) {
  auto p = test_profile();
  memory::MemorySystem mem(p, copy_options());
  const auto line = range(AccessKind::Read, kBase, 128);
  const int home = mem.l2().partition_of(kBase);
  const double transfer = 128.0 / 1024.0;
  mem.load(line, 0, 1 - home);  // miss: the home and a copy
  BOOST_TEST(mem.dram().counters().read_bytes == 128);
  BOOST_TEST(mem.load(line, 10000, 1 - home) - 10000 == p.l2_near_latency_cycles + transfer);  // the copy
  BOOST_TEST(mem.load(line, 20000, home) - 20000 == p.l2_near_latency_cycles + transfer);      // the home
  BOOST_TEST(mem.dram().counters().read_bytes == 128);
  BOOST_TEST(mem.l2().counters().kind[0].hit_sectors == 8);
  // Without copies the far reader keeps paying the far latency.
  memory::MemorySystem plain(p, options("lru", 0, false));
  plain.load(line, 0, 1 - home);
  BOOST_TEST(plain.load(line, 10000, 1 - home) - 10000 == p.l2_far_latency_cycles + transfer);
}

// A write from the far half goes to the home, dirty, and leaves a clean slot
// in the writer's half: the writer's next read hits there, near, and only the
// home is written back.
BOOST_AUTO_TEST_CASE(a_far_write_leaves_a_clean_copy_in_the_writers_half) {
  const L2Geometry g = small_l2(64 * 1024, 2);
  for (const bool fast : {false, true}) {
    L2Options o = copy_options();
    o.tile_fast_path = o.ordered_sets = fast;
    L2Cache l2(g, o);
    const int home = l2.partition_of(kBase), far = 1 - home;
    l2.access(range(AccessKind::Write, kBase, 128), 0, far);
    BOOST_TEST(l2.resident_sectors() == 8);   // the home and the copy, 4 sectors each
    BOOST_TEST(l2.dirty_sectors() == 4);      // the home only
    const auto r = l2.access(range(AccessKind::Read, kBase, 128), 1000, far);
    BOOST_TEST(!r.far);
    BOOST_TEST(r.fetch_sectors == 0);
    BOOST_TEST(l2.flush() == 4);              // one line written back
    // A write from the home's own half takes no second slot.
    L2Cache near(g, o);
    near.access(range(AccessKind::Write, kBase, 128), 0, home);
    BOOST_TEST(near.resident_sectors() == 4);
  }
}

BOOST_AUTO_TEST_CASE(a_line_read_from_both_partitions_takes_two_slots) {
  const L2Geometry g = small_l2(64 * 1024, 2);
  // Re-read hit share of a cyclic working set of `bytes`, each line read by
  // its home partition alone or by both partitions in turn.
  auto kept = [&](i64 bytes, bool both) {
    L2Cache l2(g, copy_options());
    double now = 0;
    i64 hits = 0, sectors = 0;
    for (int pass = 0; pass < 4; ++pass)
      for (u64 addr = kBase; addr < kBase + static_cast<u64>(bytes); addr += 128)
        for (int k = 0; k < (both ? 2 : 1); ++k) {
          const int part = k == 0 ? l2.partition_of(addr) : 1 - l2.partition_of(addr);
          const auto r = l2.access(range(AccessKind::Read, addr, 128), now, part);
          l2.complete(now, now);
          now += 1000;
          if (pass > 0) hits += r.sectors - r.fetch_sectors, sectors += r.sectors;
        }
    return static_cast<double>(hits) / static_cast<double>(sectors);
  };
  BOOST_TEST(kept(48 * 1024, false) == 1.0);  // one slot each: 48 KiB of 64 stay
  BOOST_TEST(kept(24 * 1024, true) == 1.0);   // two slots each: 48 KiB of slots
  BOOST_TEST(kept(48 * 1024, true) < 0.6);    // 96 KiB of slots: they thrash
}

BOOST_AUTO_TEST_CASE(copies_need_two_partitions_and_no_set_sampling) {
  BOOST_CHECK_THROW(L2Cache(small_l2(64 * 1024, 1), copy_options()), iosim::InputError);
  L2Options sampled = copy_options();
  sampled.set_sampling = 2;
  BOOST_CHECK_THROW(L2Cache(small_l2(64 * 1024, 2), sampled), iosim::InputError);
}

// With copies, a read's tile record is its partition's (it owns the near
// lines' homes and the far lines' copies): the fast path and the ordered sets
// still give the line-by-line results, request by request.
BOOST_AUTO_TEST_CASE(copies_keep_the_fast_path_exact) {
  for (const std::string policy : {"lru", "fifo"})
    for (const bool limited : {false, true})
      for (const bool ordered : {true, false}) {
        L2Options fast = options(policy, 30, true);
        fast.copies = true;
        fast.ordered_sets = ordered;
        L2Options slow = copy_options();
        slow.replacement = policy;
        slow.merge_window_cycles = 30;
        if (limited) fast.dirty_limit_bytes = slow.dirty_limit_bytes = 24 * 1024;
        const L2Geometry g = small_l2(128 * 1024, 2);
        L2Cache x(g, fast), y(g, slow);
        std::mt19937_64 rng(11 + limited);
        const u64 span = static_cast<u64>(g.capacity_bytes) * 2;
        const std::vector<RangeAccess> pool = random_tiles(rng, span, 80, 2000, 64, 256, {2048, 4096, 128, 200, 0});
        double now = 0;
        for (int step = 0; step < 8000; ++step) {
          const RangeAccess a = random_request(rng, pool, 7);
          now += static_cast<double>(rng() % 40);
          const int part = static_cast<int>(rng() % 2);
          require_same(x.access(a, now, part), y.access(a, now, part));
          const double fill = now + 100 + static_cast<double>(rng() % 900);
          x.complete(fill, fill + 10);
          y.complete(fill, fill + 10);
          const auto cx = x.counters().total(), cy = y.counters().total();
          BOOST_REQUIRE_EQUAL(cx.hit_sectors, cy.hit_sectors);
          BOOST_REQUIRE_EQUAL(cx.lookup_hit_sectors, cy.lookup_hit_sectors);
          BOOST_REQUIRE_EQUAL(x.counters().fetch_sectors, y.counters().fetch_sectors);
          BOOST_REQUIRE_EQUAL(x.counters().writeback_sectors, y.counters().writeback_sectors);
          BOOST_REQUIRE_EQUAL(x.dirty_sectors(), y.dirty_sectors());
        }
        BOOST_TEST(x.resident_sectors() == y.resident_sectors());
        BOOST_TEST(x.lru_order_consistent());
        BOOST_TEST(x.counters().fast_path_requests > 50);  // records formed and were used
      }
}

// With a measured copy rate C beside the read rate R (both fractions of the
// peak), an equal mix of reads and writes must run at C, so a written byte
// costs 2/C - 1/R of a read byte's channel time.
BOOST_AUTO_TEST_CASE(an_equal_read_write_mix_runs_at_the_measured_copy_rate) {
  auto p = test_profile();
  p.dram_copy_fraction = 0.75 * p.dram_achievable_fraction;
  auto dram = memory::DramModel::from_profile(p);
  const i64 bytes = 1 << 20;
  const double read_end = dram.read(bytes, 0) - p.dram_latency_cycles;
  const double mix_end = dram.write_back(bytes, 0);
  const double copy_cycles = 2.0 * static_cast<double>(bytes) / (0.75 * dram.bytes_per_cycle());
  BOOST_TEST(read_end == static_cast<double>(bytes) / dram.bytes_per_cycle(), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(mix_end == copy_cycles, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(dram.counters().write_bytes == bytes);  // the cost is channel time, not bytes
}

BOOST_AUTO_TEST_CASE(without_a_copy_rate_writes_cost_what_reads_cost) {
  const auto p = test_profile();
  auto dram = memory::DramModel::from_profile(p);
  const i64 bytes = 1 << 20;
  BOOST_TEST(dram.write_back(bytes, 0) == static_cast<double>(bytes) / dram.bytes_per_cycle(),
             boost::test_tools::tolerance(1e-9));
}

// DRAM serves short pieces far apart slower than a stream (the pieces probe,
// experiments/results/2026-11-28-h200-dram-pieces): an L2 fill for a tile of
// short strided rows holds the channel bytes / (rate x fraction of its row
// length); contiguous tiles, and rows of 512 bytes and more, stream.
BOOST_AUTO_TEST_CASE(short_strided_rows_read_dram_at_their_measured_share_of_the_rate) {
  auto p = test_profile();
  p.dram_read_fraction_32b = 0.25;
  p.dram_read_fraction_64b = 0.5;
  p.dram_read_fraction_128b = 0.9;
  p.dram_read_fraction_256b = 0.96;
  const auto dram = memory::DramModel::from_profile(p);
  BOOST_TEST(dram.read_fraction(32) == 0.25);
  BOOST_TEST(dram.read_fraction(64) == 0.5);
  BOOST_TEST(dram.read_fraction(96) == 0.5 + (std::log2(96.0) - 6) * 0.4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(dram.read_fraction(256) == 0.96);
  BOOST_TEST(dram.read_fraction(384) > 0.96);
  BOOST_TEST(dram.read_fraction(512) == 1.0);
  BOOST_TEST(dram.read_fraction(i64{1} << 20) == 1.0);
  // Through the memory system: 64 rows of 64 bytes 10 KiB apart against the same bytes contiguous.
  auto channel_cycles = [&](const trace::RangeAccess& a) {
    memory::MemorySystem mem(p, memory::L2Options{});
    const double ready = mem.load(a, 0, 0);
    (void)ready;
    return mem.counters().dram.busy_cycles;
  };
  trace::RangeAccess strided = range(AccessKind::Read, kBase, 64);
  strided.rows = 64;
  strided.stride = 10240;
  const trace::RangeAccess contiguous = range(AccessKind::Read, kBase, 64 * 64);
  BOOST_TEST(channel_cycles(strided) == 2 * channel_cycles(contiguous), boost::test_tools::tolerance(1e-9));
  // Without the keys, every piece streams.
  const auto plain = memory::DramModel::from_profile(test_profile());
  BOOST_TEST(plain.read_fraction(32) == 1.0);
}
