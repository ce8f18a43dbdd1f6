// `iosim numerics`: runs an algorithm's tiled loop nest on the CPU in double
// precision and reports its error against plain softmax(QK^T/sqrt(d))V, so
// users see that online softmax and recomputation are exact up to rounding.
#include <iostream>

#include "sim/cli/commands.h"
#include "sim/cli/scenario.h"
#include "sim/common/error.h"
#include "sim/numerics/check.h"
#include "sim/report/json.h"

namespace iosim::cli {

int cmd_numerics(const Args& args) {
  ArgParser parser("numerics",
                   "Executes the algorithm's tiled loop nest on the CPU (double precision) on random inputs and\n"
                   "prints the max-norm relative error of each output against the reference. Keep sizes small\n"
                   "(the reference is O(B H Nq Nk d) in double).");
  add_scenario_flags(parser);
  parser.add("seed", ArgParser::Kind::integer, "SEED", "seed of the random inputs [1]")
      .add("logit-scale", ArgParser::Kind::real, "X", "scale Q so scaled logits have std about X (e.g. 30) [1]")
      .add("json", ArgParser::Kind::flag, "", "print one JSON object: the tiling and each output's error");
  parser.parse(args);
  if (parser.help_requested()) {
    std::cout << parser.help();
    return 0;
  }
  const Scenario s = scenario_from_flags(parser);
  const auto& p = s.problem;
  if (p.batch * p.heads * p.seq_q * p.seq_k * p.head_dim > (i64{1} << 32))
    throw InputError("problem too large for the double-precision CPU check (B*H*Nq*Nk*d > 2^32); use small sizes");
  // The tiling the simulator would use, so the numerics run the same loop nest.
  const auto run = trace::build_trace(p, s.options);
  numerics::CheckOptions opt;
  opt.logit_scale = parser.real("logit-scale").value_or(1.0);
  opt.splits = run.tiling.splits;
  const auto report = numerics::check_numerics(p, s.options.algorithm, s.options.pass, run.tiling.block_m,
                                               run.tiling.block_n,
                                               static_cast<std::uint64_t>(parser.integer("seed").value_or(1)), opt);
  if (!parser.flag("json")) {
    std::cout << report.to_string();
    return 0;
  }
  report::JsonWriter j(std::cout);
  j.begin_object().field("algorithm", workload::to_string(report.algorithm)).field("pass", workload::to_string(report.pass));
  j.field("block_m", report.block_m).field("block_n", report.block_n).field("seed", static_cast<i64>(report.seed));
  j.field("active_blocks", report.active_blocks).field("total_blocks", report.total_blocks);
  j.key("errors").begin_array();
  for (const auto& e : report.errors)
    j.begin_object().field("output", e.name).field("max_abs_ref", e.max_abs_ref).field("max_abs_error", e.max_abs_error)
        .field("relative", e.relative).end_object();
  j.end_array().end_object();
  return 0;
}

}  // namespace iosim::cli
