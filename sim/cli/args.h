// A strict command-line parser: every flag is declared with its kind and help
// text; unknown flags, missing values and malformed numbers are errors that
// name the flag and what would be valid.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/common/hd.h"

namespace iosim::cli {

class ArgParser {
 public:
  // repeated: a text flag that may be given more than once (texts() returns
  // every value in order).
  enum class Kind { flag, integer, real, text, repeated };
  // `command` is the subcommand's name (empty for `iosim` alone, the default
  // scenario); `program` names the executable in messages and help:
  // "iosim", "iosim-kernels".
  ArgParser(std::string command, std::string summary, std::string program = "iosim")
      : command_(std::move(command)), summary_(std::move(summary)), program_(std::move(program)) {}

  ArgParser& add(const std::string& name, Kind kind, const std::string& metavar, const std::string& help);
  // Parses argv-style arguments; throws InputError. "--help" sets help_requested().
  void parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_; }
  std::string help() const;
  std::string flags_help() const;  // the flags alone, one entry each
  // Added to the "unknown flag" error (e.g. which command takes such flags).
  void set_unknown_flag_hint(std::string hint) { unknown_flag_hint_ = std::move(hint); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  bool flag(const std::string& name) const { return has(name); }
  std::optional<i64> integer(const std::string& name) const;
  std::optional<double> real(const std::string& name) const;
  std::optional<std::string> text(const std::string& name) const;
  std::vector<std::string> texts(const std::string& name) const;  // a repeated flag's values
  // The kind of a declared flag, or nullopt (for commands that pass flags on).
  std::optional<Kind> kind_of(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  void allow_positional(const std::string& metavar, const std::string& help);

 private:
  struct Spec {
    Kind kind;
    std::string metavar, help;
  };
  std::string prefix() const;      // "simulate: " (empty for the default scenario)
  std::string invocation() const;  // "iosim simulate", or "iosim"
  std::string command_, summary_, program_, unknown_flag_hint_;
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> repeated_;
  std::vector<std::string> positional_;
  std::optional<std::pair<std::string, std::string>> positional_spec_;
  bool help_ = false;
};

}  // namespace iosim::cli
