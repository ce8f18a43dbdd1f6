#include "sim/cli/explore.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/common/error.h"
#include "sim/engine/occupancy.h"
#include "sim/schedule/kernel_menu.h"
#include "sim/schedule/plan.h"
#include "sim/trace/kernel_tiles.h"

namespace iosim::cli {

namespace fs = std::filesystem;
using workload::Algorithm;
using workload::Pass;

std::string Candidate::label() const {
  if (block_m == 0)
    return std::to_string(gemm.m) + "x" + std::to_string(gemm.n) + "x" + std::to_string(gemm.k) +
           (gemm.impl == schedule::GemmImpl::wgmma ? " wgmma" : "");
  return std::to_string(block_m) + "x" + std::to_string(block_n);
}

namespace {

using workload::is_standard;  // standard and standard-eager: GEMM tiles

std::string join_sizes(const auto& sizes) {
  std::string s;
  for (const i64 v : sizes) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return "{" + s + "}";
}

// Warps of each pass's main kernel (the most shared memory), "4" or "4/8".
std::string main_kernel_warps(const schedule::Plan& plan) {
  std::string out;
  for (const Pass pass : {Pass::fwd, Pass::bwd}) {
    const schedule::KernelPlan* main = nullptr;
    for (const auto& k : plan.kernels)
      if (k.pass == pass && (!main || k.cta.smem_bytes > main->cta.smem_bytes)) main = &k;
    if (main) out += (out.empty() ? "" : "/") + std::to_string(ceil_div(main->cta.threads, 32));
  }
  return out;
}

// Fills the candidate's fit: the schedule's footprint, then every kernel's
// CTA as launched against the profile's per-SM limits.
void check_fit(Candidate& c, const workload::Problem& p, Algorithm a, Pass pass,
               const profile::HardwareProfile& profile) {
  const i64 limit = profile.smem_per_block_bytes;
  const i64 bm = is_standard(a) ? c.gemm.m : c.block_m, bn = is_standard(a) ? c.gemm.n : c.block_n;
  c.sram_bytes = trace::sram_footprint(p, a, pass, bm, bn, c.gemm, limit);
  try {
    const schedule::Plan plan = schedule::make_plan(p, a, pass, {bm, bn, c.gemm, limit});
    c.warps = main_kernel_warps(plan);
    if (c.sram_bytes > limit) {
      c.why_not = "needs " + std::to_string(c.sram_bytes) + " B of shared memory per block; the profile allows " +
                  std::to_string(limit) + " B";
      return;
    }
    for (const auto& k : plan.kernels)
      engine::compute_occupancy(profile, {k.cta.threads, k.cta.smem_bytes, k.cta.regs_per_thread}, k.grid.count(),
                                k.name);
    c.fits = true;
  } catch (const InputError& e) {
    c.why_not = e.what();
  }
}

}  // namespace

std::string candidate_space(Algorithm a) {
  if (is_standard(a)) return "GEMM tiles m, n, k in " + join_sizes(schedule::kMenuGemmSizes);
  return "B_r, B_c in " + join_sizes(schedule::kMenuBlockSizes);
}

std::vector<Candidate> enumerate_candidates(const workload::Problem& p, Algorithm a, Pass pass,
                                            const profile::HardwareProfile& profile) {
  std::vector<Candidate> out;
  auto add = [&](i64 bm, i64 bn, trace::GemmTiles gemm) {
    Candidate c;
    c.block_m = bm;
    c.block_n = bn;
    c.gemm = gemm;
    check_fit(c, p, a, pass, profile);
    const auto avail = trace::kernel_availability(p, a, pass, c.block_m, c.block_n, c.gemm);
    c.compiled = avail.full;
    c.compiled_ci = avail.ci;
    if (a == Algorithm::fa2 && pass != Pass::fwd)
      c.q_stages = schedule::Fa2BackwardSchedule::q_stages_for(p.head_dim, c.block_m, c.block_n, p.elem_bytes());
    out.push_back(std::move(c));
  };
  if (is_standard(a)) {
    for (const i64 m : schedule::kMenuGemmSizes)
      for (const i64 n : schedule::kMenuGemmSizes)
        for (const i64 k : schedule::kMenuGemmSizes) add(0, 0, {m, n, k});
    // Hopper: the wgmma kernel's one tile too (kernels/standard/sm90a).
    if (profile.compute_capability == "9.0") {
      using W = schedule::WgmmaGemmShape;
      add(0, 0, {W::kTileM, W::kTileN, W::kTileK, schedule::GemmImpl::wgmma});
    }
  } else if (a == Algorithm::fa3) {  // its kernel's one tile
    add(schedule::Fa3ForwardSchedule::kBlockM, schedule::Fa3ForwardSchedule::kBlockN, {});
  } else {
    for (const i64 bm : schedule::kMenuBlockSizes)
      for (const i64 bn : schedule::kMenuBlockSizes) add(bm, bn, {});
  }
  return out;
}

std::string no_fit_message(const std::vector<Candidate>& all, Algorithm a, Pass pass,
                           const profile::HardwareProfile& profile) {
  std::string msg = "no tiling of " + std::string(workload::to_string(a)) + " " +
                    std::string(workload::to_string(pass)) + " fits " + profile.name + " (" +
                    std::to_string(profile.smem_per_block_bytes) + " B of shared memory per block; candidates: " +
                    candidate_space(a) + ")";
  const auto smallest = std::min_element(all.begin(), all.end(), [](const Candidate& x, const Candidate& y) {
    return x.sram_bytes < y.sram_bytes;
  });
  if (smallest != all.end()) msg += ": the smallest, " + smallest->label() + ", " + smallest->why_not;
  return msg;
}

std::vector<Ranked> rank_by_time(std::vector<Ranked> results) {
  std::stable_sort(results.begin(), results.end(),
                   [](const Ranked& x, const Ranked& y) { return x.prediction.seconds < y.prediction.seconds; });
  for (std::size_t i = 0; i < results.size(); ++i) results[i].rank = static_cast<i64>(i) + 1;
  return results;
}

// --- The model's error, from a validation CSV --------------------------------

namespace {

// One CSV line's fields; a quoted field may hold commas and doubled quotes.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (ch == '"') quoted = false;
      else out.back() += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else if (ch != '\r') {
      out.back() += ch;
    }
  }
  return out;
}

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? std::optional<double>(v) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

// The CSV's rows as column -> value maps; empty when unreadable.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::map<std::string, std::string>> rows;
  std::string line;
  if (!std::getline(in, line)) return rows;
  const auto header = csv_fields(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto f = csv_fields(line);
    auto& row = rows.emplace_back();
    for (std::size_t c = 0; c < header.size() && c < f.size(); ++c) row[header[c]] = f[c];
  }
  return rows;
}

}  // namespace

std::vector<std::string> validation_csvs(const std::string& profile_dir) {
  const fs::path dir = fs::absolute(fs::path(profile_dir)).lexically_normal().parent_path() / "experiments" / "validation";
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.rfind("legacy-", 0) != 0 && fs::is_regular_file(e.path() / "grid.csv"))
      out.push_back((e.path() / "grid.csv").string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<ModelError> model_error(const std::vector<std::string>& csv_paths, const std::string& profile_name,
                                      Algorithm algorithm, std::string& why) {
  const std::string algo(workload::to_string(algorithm));
  for (const std::string& path : csv_paths) {
    const auto rows = read_csv(path);
    const bool for_profile = std::any_of(rows.begin(), rows.end(), [&](const auto& r) {
      const auto it = r.find("profile");
      return it != r.end() && fs::path(it->second).stem().string() == profile_name;
    });
    if (!for_profile) continue;
    // accuracy_table.py's held-out kernel-time points: measured, status ok, measured time > 0.
    ModelError e;
    e.csv = path;
    double sum = 0;
    for (const auto& r : rows) {
      auto get = [&](const char* k) { const auto it = r.find(k); return it == r.end() ? std::string() : it->second; };
      if (get("algo") != algo || get("set") != "heldout" || get("status") != "ok") continue;
      const auto pred = number(get("sim_time_s")), meas = number(get("meas_time_s"));
      if (!pred || !meas || *meas <= 0) continue;
      sum += std::abs(*pred / *meas - 1);
      ++e.kernels;
      e.gpu = get("gpu");
    }
    if (e.kernels == 0) {
      why = path + " has no held-out " + algo + " kernel";
      return std::nullopt;
    }
    e.mean_abs = sum / static_cast<double>(e.kernels);
    return e;
  }
  why = "no validation CSV (experiments/validation/<gpu>/grid.csv) was measured with profile " + profile_name;
  return std::nullopt;
}

// --- The recommendation's reason ---------------------------------------------

namespace {

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * std::abs(fraction));
  return buf;
}

// The engine's bound in words.
std::string bound_words(const std::string& bound) {
  if (bound == "dram") return "DRAM-bound";
  if (bound == "l2") return "L2-bound";
  if (bound == "tensor") return "tensor-core-bound";
  if (bound == "sfu_fp32") return "FP32/SFU-bound";
  if (bound == "latency_occupancy") return "latency-bound (no resource busy 60% of the time)";
  return bound + "-bound";
}

// The sizes a candidate is made of, by name: B_r, B_c; GEMM m, n, k.
std::vector<std::pair<std::string, i64>> sizes_of(const Candidate& c) {
  if (c.block_m == 0) return {{"GEMM m", c.gemm.m}, {"GEMM n", c.gemm.n}, {"GEMM k", c.gemm.k}};
  return {{"B_r", c.block_m}, {"B_c", c.block_n}};
}

bool same_but(const Candidate& a, const Candidate& b, std::size_t dim) {
  if (a.gemm.impl != b.gemm.impl) return false;
  const auto sa = sizes_of(a), sb = sizes_of(b);
  for (std::size_t d = 0; d < sa.size(); ++d)
    if (d != dim && sa[d].second != sb[d].second) return false;
  return true;
}

// The traffic a neighbour moves less (or more) than the winner, as
// "SM<->L2 bytes by 20%, DRAM bytes by 12%" (changes under 1% left out).
std::string traffic_change(const Prediction& w, const Prediction& n, bool less) {
  std::string out;
  auto add = [&](const char* what, i64 wb, i64 nb) {
    if (wb <= 0) return;
    const double r = static_cast<double>(nb) / static_cast<double>(wb) - 1;
    if ((less ? -r : r) >= 0.01) out += std::string(out.empty() ? "" : ", ") + what + " by " + percent(r);
  };
  add("SM<->L2 bytes", w.l2_bytes, n.l2_bytes);
  add("DRAM bytes", w.dram_bytes(), n.dram_bytes());
  return out;
}

// One clause: what the neighbour `what` (one size away from the winner's, or
// the same GEMM tile on the other kernel) does.
std::string neighbour_clause(const Ranked& w, const Ranked& n, std::string what) {
  const Prediction &a = w.prediction, &b = n.prediction;
  const double slower = b.seconds / a.seconds - 1;
  std::string s = std::move(what);
  const std::string cut = traffic_change(a, b, true), added = traffic_change(a, b, false);
  std::vector<std::string> parts;
  if (!cut.empty()) parts.push_back("cuts " + cut);
  if (!added.empty()) parts.push_back("adds " + added);
  if (b.ctas_per_sm != a.ctas_per_sm)
    parts.push_back(std::string(b.ctas_per_sm < a.ctas_per_sm ? "drops" : "raises") + " occupancy to " +
                    std::to_string(b.ctas_per_sm) + " CTA/SM (limited by " + b.occupancy_limiter + ")");
  if (b.bound != a.bound) parts.push_back("becomes " + bound_words(b.bound));
  for (std::size_t i = 0; i < parts.size(); ++i)
    s += (i == 0 ? " " : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  s += slower > 0.0005 ? std::string(parts.empty() ? " is " : " but is ") + percent(slower) + " slower"
                       : std::string(parts.empty() ? " is " : ", ") + "as fast";
  return s;
}

}  // namespace

std::string recommendation_reason(const std::vector<Ranked>& ranked, Algorithm algorithm) {
  if (ranked.empty()) return "";
  const Ranked& w = ranked.front();
  const Prediction& p = w.prediction;
  std::string s = bound_words(p.bound) + " (" + p.bound_kernel + ") at " + std::to_string(p.ctas_per_sm) +
                  " CTA/SM (limited by " + p.occupancy_limiter + ")";
  const auto sizes = sizes_of(w.candidate);
  std::vector<std::string> clauses;
  for (std::size_t d = 0; d < sizes.size(); ++d)
    for (const i64 to : {sizes[d].second / 2, sizes[d].second * 2})
      for (const Ranked& n : ranked)
        if (same_but(w.candidate, n.candidate, d) && sizes_of(n.candidate)[d].second == to)
          clauses.push_back(neighbour_clause(
              w, n, (to > sizes[d].second ? "larger " : "smaller ") + sizes[d].first + " (" + std::to_string(to) + ")"));
  for (const Ranked& n : ranked)  // the same GEMM tile on the other kernel (Hopper: mma.sync or wgmma)
    if (n.candidate.block_m == 0 && w.candidate.block_m == 0 && n.candidate.gemm.impl != w.candidate.gemm.impl &&
        sizes_of(n.candidate) == sizes)
      clauses.push_back(neighbour_clause(
          w, n, std::string("the same tile on ") + (n.candidate.gemm.impl == schedule::GemmImpl::wgmma
                                                        ? "the wgmma kernel (TMA, wgmma)"
                                                        : "the mma.sync kernel")));
  if (clauses.empty())
    return s + "; no neighbouring " + (algorithm == Algorithm::standard ? "GEMM tile" : "tile") +
           " (each size halved or doubled) is among the candidates";
  for (const std::string& c : clauses) s += "; " + c;
  return s;
}

bool closer_than_error(const std::vector<Ranked>& ranked, double error) {
  if (ranked.size() < 2) return false;
  const double t1 = ranked[0].prediction.seconds, t2 = ranked[1].prediction.seconds;
  return (t2 - t1) / t1 < error;
}

}  // namespace iosim::cli
