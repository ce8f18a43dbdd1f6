// Running the iosim executable from host tests (IOSIM_CLI_PATH, set by
// tests/CMakeLists.txt): its exit status and output.
#pragma once
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
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

struct PtyResult {
  int exit_code;
  std::string out;  // what the terminal showed (stderr; stdout went to /dev/null)
  double seconds;
};
// Runs iosim with stderr on a pseudo-terminal, as in an interactive shell
// (the test links util: forkpty).
inline PtyResult run_on_terminal(const std::string& args) {
  int master = -1;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string cmd = std::string(IOSIM_CLI_PATH) + " " + args + " > /dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  std::array<char, 4096> buf{};
  for (ssize_t n; (n = read(master, buf.data(), buf.size())) > 0;) out.append(buf.data(), static_cast<size_t>(n));
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

}  // namespace iosim::testing
