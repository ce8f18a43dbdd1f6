// Flags of the memory model and timing engine, shared by `simulate` and `replay`.
#pragma once
#include "sim/cli/args.h"
#include "sim/engine/engine.h"

namespace iosim::cli {

void add_engine_flags(ArgParser& parser);
engine::EngineOptions engine_options_from_flags(const ArgParser& parser);

}  // namespace iosim::cli
