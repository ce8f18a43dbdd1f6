// Flags of the memory model and timing engine, shared by `simulate` and `replay`.
#pragma once
#include <ostream>

#include "sim/cli/args.h"
#include "sim/engine/engine.h"

namespace iosim::cli {

void add_engine_flags(ArgParser& parser);
engine::EngineOptions engine_options_from_flags(const ArgParser& parser);
// "timeline: FILE ..." when a timeline was written.
void print_timeline_line(std::ostream& out, const engine::SimulationResult& sim);

}  // namespace iosim::cli
