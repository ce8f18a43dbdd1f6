// iosim: a memory-hierarchy simulator for tiled attention algorithms.
#include <exception>
#include <functional>
#include <iostream>
#include <map>

#include "sim/cli/commands.h"
#include "sim/common/error.h"

namespace {

struct Command {
  std::function<int(const iosim::cli::Args&)> run;
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  using namespace iosim::cli;
  static const std::map<std::string, Command> table = {
      {"simulate", {[](const Args& a) { return cmd_simulate(a, std::cout); }, "one algorithm on one problem: exact counts, formula, L2/DRAM traffic, time"}},
      {"sweep", {[](const Args& a) { return cmd_sweep(a, std::cout); }, "simulate over lists and ranges of any flag (--seq 512:16384:x2 --algo fa1,fa2): one CSV/JSON row per point"}},
      {"explore", {[](const Args& a) { return cmd_explore(a, std::cout); }, "rank every feasible tiling of one problem by predicted time; recommend one, with its reason"}},
      {"walk", {[](const Args& a) { return cmd_walk(a, std::cout); }, "where the SM model's cycles go in one step of each kernel's warp programs, region by region"}},
      {"trace", {cmd_trace, "write an algorithm's trace to a file (format: docs/engine.md)"}},
      {"replay", {cmd_replay, "run a trace file through the memory model and timing engine"}},
      {"profiles", {[](const Args& a) { return cmd_profiles(a, std::cout); }, "list the hardware profiles"}},
      {"numerics", {cmd_numerics, "run an algorithm's tiled loop nest on the CPU and report its error vs a double reference"}},
      {"calibrate", {cmd_calibrate, "measure the present GPU with microbenchmarks and write its hardware profile"}},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: iosim [COMMAND] [flags]\n\n"
         "With no command, iosim runs its default scenario: GPT-2 medium attention\n"
         "(B=64, H=16, N=1024, d=64, fp16, forward+backward) for standard attention,\n"
         "FlashAttention 1 and 2 on the A100 profile.\n\ncommands:\n";
  for (const auto& [name, c] : commands()) out << "  " << name << "\n      " << c.summary << "\n";
  out << "\nflags of the default scenario (iosim [flags]):\n" << iosim::cli::default_parser().flags_help();
  out << "\n'iosim COMMAND --help' describes each command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  const iosim::cli::Args all(argv + 1, argv + argc);
  try {
    if (all.empty()) return iosim::cli::cmd_default(all);
    const std::string& first = all.front();
    if (first == "--help" || first == "-h" || first == "help") {
      print_usage(std::cout);
      return 0;
    }
    if (first.rfind("--", 0) == 0) return iosim::cli::cmd_default(all);
    const auto it = commands().find(first);
    if (it == commands().end()) {
      std::cerr << "iosim: unknown command '" << first << "'\n\n";
      print_usage(std::cerr);
      return 2;
    }
    return it->second.run(iosim::cli::Args(all.begin() + 1, all.end()));
  } catch (const iosim::InputError& e) {
    std::cerr << "iosim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "iosim: internal error: " << e.what() << "\n";
    return 3;
  }
}
