// The iosim subcommands. Each takes the arguments after its name and returns
// the process exit code; errors are thrown as InputError and reported by main.
// Those whose output is data write it to `out` (std::cout for iosim; a string
// stream for the Python module, python/iosim_module.cpp); progress and notices
// go to std::cerr.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "sim/cli/args.h"
#include "sim/engine/engine.h"

namespace iosim::cli {

using Args = std::vector<std::string>;

int cmd_default(const Args& args);   // `iosim` alone: the GPT-2 medium comparison
ArgParser default_parser();          // its flags (listed by `iosim --help`)
// The engine options of the default run: fast (fast-forward and 1 in 16 L2
// set groups) unless `exact`.
engine::EngineOptions default_engine_options(bool exact);
int cmd_simulate(const Args& args, std::ostream& out);  // `iosim simulate ...`
void add_simulate_flags(ArgParser& parser);  // its flags but --json (`iosim sweep` takes them too)
// `iosim sweep ...`: simulate over lists and ranges of flag values
int cmd_sweep(const Args& args, std::ostream& out);
int cmd_profiles(const Args& args, std::ostream& out);  // `iosim profiles`
// `iosim explore ...`: rank the feasible tilings of one problem
int cmd_explore(const Args& args, std::ostream& out);
// `iosim walk ...`: the SM model's cycles per region of each warp program's step
int cmd_walk(const Args& args, std::ostream& out);
int cmd_trace(const Args& args);     // `iosim trace ... --out FILE`
int cmd_replay(const Args& args);    // `iosim replay FILE`
int cmd_numerics(const Args& args);  // `iosim numerics ...`: tiled CPU execution vs double reference
int cmd_calibrate(const Args& args); // `iosim calibrate`: microbenchmarks on the GPU -> a profile

}  // namespace iosim::cli
