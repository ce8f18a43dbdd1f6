// Running the iosim executable from host tests (IOSIM_CLI_PATH, set by
// tests/CMakeLists.txt): its exit status and output.
#pragma once
#include <sys/wait.h>

#include <array>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <string>

namespace iosim::testing {

struct CliResult {
  int exit_code;
  std::string out;  // stdout, and stderr too unless left out
};

// `env` (e.g. "VAR=value") is put before the command; `with_stderr` false
// leaves stderr out of `out` (it goes to the test's own stderr).
inline CliResult run_cli(const std::string& args, const std::string& env = "", bool with_stderr = true) {
  const std::string cmd = env + " " + std::string(IOSIM_CLI_PATH) + " " + args + (with_stderr ? " 2>&1" : "");
  FILE* pipe = popen(cmd.c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace iosim::testing
