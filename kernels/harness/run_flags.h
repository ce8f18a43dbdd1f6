// The flags of `iosim-kernels check|bench`: the problem and tiling flags of
// `iosim simulate`, parsed by the same code (sim/cli/problem_flags.h), plus
// the harness's own (inputs, output format, tolerance, timing). Host code: it
// builds without nvcc, so tests/test_harness_flags.cpp runs everywhere.
#pragma once
#include <string>

#include "kernels/harness/runner.h"
#include "sim/cli/args.h"
#include "sim/workload/problem.h"

namespace iosim::harness {

// The parser of one command, "check" or "bench".
cli::ArgParser make_run_parser(const std::string& command);
// bench's timing flags (--warmup --iters --l2-multiple), which iosim-peer takes too.
void add_timing_flags(cli::ArgParser& parser);

struct RunRequest {
  RunSpec spec;
  workload::Pass pass = workload::Pass::fwd;
};
// Throws InputError with iosim's messages for missing or inconsistent
// problem flags, and for an algorithm that has no CUDA kernel.
RunRequest run_from_flags(const cli::ArgParser& flags);

}  // namespace iosim::harness
