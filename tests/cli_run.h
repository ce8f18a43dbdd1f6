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

// `args` run on a terminal drew a bar labelled `label` with the time left and
// erased it; a run shorter than a second (a fast machine) is only noted.
inline void check_progress_bar(const std::string& args, const std::string& label) {
  const PtyResult r = run_on_terminal(args);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.out);
  if (r.seconds < 1.0) {
    BOOST_TEST_MESSAGE("the run took " << r.seconds << " s, too short for a bar on this machine");
    return;
  }
  const size_t bar = r.out.rfind(label + " [");
  BOOST_TEST_REQUIRE(bar != std::string::npos, r.out);
  BOOST_TEST(r.out.find(" left", bar) != std::string::npos, r.out);
  BOOST_TEST(r.out.find("\r\033[K", bar) != std::string::npos, r.out);  // erased when done
}

}  // namespace iosim::testing
