#include "sim/engine/compiler_order.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

namespace iosim::engine {

using schedule::Instr;
using schedule::Op;
using schedule::Pipe;
using schedule::WarpProgram;

namespace {

bool is_fence(const Instr& in) {
  return in.pipe == Pipe::barrier || (in.op != Op::plain && in.op != Op::local && in.op != Op::local_miss &&
                                      in.op != Op::reduce && in.op != Op::store && in.op != Op::store_fragment);
}
bool is_memory(const Instr& in) { return in.pipe == Pipe::smem || in.pipe == Pipe::global; }

double latency_of(const Instr& in, const SmMachine& m) {
  if (in.op == Op::wgmma) return pipe_cycles(m, in) + m.wgmma_extra_latency;
  if (in.op == Op::local) return m.pipe[static_cast<size_t>(Pipe::smem)].latency;
  return m.pipe[static_cast<size_t>(in.pipe)].latency;
}

// Each instruction's predecessors: its sources, the fence before it (and,
// for a fence, everything since the previous one), the previous memory access.
std::vector<std::vector<int>> predecessors(const std::vector<Instr>& code) {
  std::vector<std::vector<int>> pred(code.size());
  int fence = -1, memory = -1;
  for (size_t i = 0; i < code.size(); ++i) {
    const Instr& in = code[i];
    auto& p = pred[i];
    for (int s = 0; s < in.sources; ++s) p.push_back(in.source[s]);
    if (is_fence(in)) {
      for (int j = fence + 1; j < static_cast<int>(i); ++j) p.push_back(j);
      fence = static_cast<int>(i);
    } else if (fence >= 0) {
      p.push_back(fence);
    }
    if (is_memory(in)) {
      if (memory >= 0) p.push_back(memory);
      memory = static_cast<int>(i);
    }
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
  }
  return pred;
}

}  // namespace

WarpProgram compiler_order(const WarpProgram& program, const SmMachine& m) {
  const std::vector<Instr>& code = program.code;
  const int n = static_cast<int>(code.size());
  const auto pred = predecessors(code);
  std::vector<std::vector<int>> succ(static_cast<size_t>(n));
  std::vector<int> waiting(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    waiting[static_cast<size_t>(i)] = static_cast<int>(pred[static_cast<size_t>(i)].size());
    for (const int j : pred[static_cast<size_t>(i)]) succ[static_cast<size_t>(j)].push_back(i);
  }
  // Priority: the longest latency path from the instruction to the end.
  std::vector<double> path(static_cast<size_t>(n), 0);
  for (int i = n - 1; i >= 0; --i) {
    double tail = 0;
    for (const int j : succ[static_cast<size_t>(i)]) tail = std::max(tail, path[static_cast<size_t>(j)]);
    path[static_cast<size_t>(i)] = latency_of(code[static_cast<size_t>(i)], m) + tail;
  }
  // Candidates whose predecessors are issued, by the cycle their operands are
  // ready; those ready now, per pipe, by priority (then program order).
  using Timed = std::pair<double, int>;
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> pending;
  auto later = [&](int a, int b) {
    const double pa = path[static_cast<size_t>(a)], pb = path[static_cast<size_t>(b)];
    return pa != pb ? pa < pb : a > b;
  };
  using ReadyQueue = std::priority_queue<int, std::vector<int>, decltype(later)>;
  std::vector<ReadyQueue> ready(schedule::kPipeCount, ReadyQueue(later));
  std::vector<double> operands_at(static_cast<size_t>(n), 0), pipe_free(schedule::kPipeCount, 0);
  for (int i = 0; i < n; ++i)
    if (waiting[static_cast<size_t>(i)] == 0) pending.push({0.0, i});
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  double t = 0;
  while (static_cast<int>(order.size()) < n) {
    while (!pending.empty() && pending.top().first <= t) {
      const int i = pending.top().second;
      pending.pop();
      ready[static_cast<size_t>(code[static_cast<size_t>(i)].pipe)].push(i);
    }
    int best = -1;
    for (int p = 0; p < schedule::kPipeCount; ++p) {
      auto& q = ready[static_cast<size_t>(p)];
      if (q.empty() || pipe_free[static_cast<size_t>(p)] > t) continue;
      if (best < 0 || later(best, q.top())) best = q.top();
    }
    if (best < 0) {  // nothing can issue now: on to the next operand or pipe
      double next = std::numeric_limits<double>::infinity();
      if (!pending.empty()) next = pending.top().first;
      for (int p = 0; p < schedule::kPipeCount; ++p)
        if (!ready[static_cast<size_t>(p)].empty()) next = std::min(next, pipe_free[static_cast<size_t>(p)]);
      if (next == std::numeric_limits<double>::infinity()) throw std::logic_error("compiler_order: a cycle in " + program.name);
      t = std::max(t + 1, next);
      continue;
    }
    const Instr& in = code[static_cast<size_t>(best)];
    ready[static_cast<size_t>(in.pipe)].pop();
    if (in.pipe != Pipe::barrier && in.op != Op::wgmma)
      pipe_free[static_cast<size_t>(in.pipe)] = t + m.pipe[static_cast<size_t>(in.pipe)].interval;
    const double done = t + latency_of(in, m);
    order.push_back(best);
    for (const int j : succ[static_cast<size_t>(best)]) {
      auto& at = operands_at[static_cast<size_t>(j)];
      at = std::max(at, done);
      if (--waiting[static_cast<size_t>(j)] == 0) pending.push({std::max(at, t + 1), j});
    }
    t += 1;
  }
  std::vector<int> position(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) position[static_cast<size_t>(order[static_cast<size_t>(k)])] = k;
  WarpProgram out;
  out.name = program.name;
  out.regions = program.regions;
  out.origin.assign(order.begin(), order.end());
  out.code.reserve(static_cast<size_t>(n));
  for (const int old : order) {
    Instr in = code[static_cast<size_t>(old)];
    for (int s = 0; s < in.sources; ++s) in.source[s] = position[static_cast<size_t>(in.source[s])];
    out.code.push_back(in);
  }
  return out;
}

}  // namespace iosim::engine
