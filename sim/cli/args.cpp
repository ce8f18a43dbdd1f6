#include "sim/cli/args.h"

#include <charconv>
#include <limits>
#include <sstream>

#include "sim/common/error.h"

namespace iosim::cli {

ArgParser& ArgParser::add(const std::string& name, Kind kind, const std::string& metavar, const std::string& help) {
  order_.push_back(name);
  specs_[name] = {kind, metavar, help};
  return *this;
}

void ArgParser::allow_positional(const std::string& metavar, const std::string& help) {
  positional_spec_ = std::make_pair(metavar, help);
}

void ArgParser::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      if (!positional_spec_)
        throw InputError(prefix() + "unexpected argument '" + a + "' (see '" + invocation() + " --help')");
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      inline_value = true;
    }
    auto it = specs_.find(name);
    if (it == specs_.end())
      throw InputError(prefix() + "unknown flag '--" + name + "' (see '" + invocation() + " --help'" +
                       (unknown_flag_hint_.empty() ? "" : "; " + unknown_flag_hint_) + ")");
    if (values_.count(name) && it->second.kind != Kind::repeated)
      throw InputError(prefix() + "flag '--" + name + "' given twice");
    if (it->second.kind == Kind::flag) {
      if (inline_value) throw InputError(prefix() + "flag '--" + name + "' takes no value");
      values_[name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size())
        throw InputError(prefix() + "flag '--" + name + "' needs a value (" + it->second.metavar + ")");
      value = args[++i];
    }
    if (it->second.kind == Kind::integer) {
      i64 v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec == std::errc::result_out_of_range && p == value.data() + value.size())
        throw InputError(prefix() + "--" + name + " " + value + " is out of range (a 64-bit integer, at most " +
                         std::to_string(std::numeric_limits<i64>::max()) + ")");
      if (ec != std::errc() || p != value.data() + value.size())
        throw InputError(prefix() + "--" + name + " expects an integer, got '" + value + "'");
    } else if (it->second.kind == Kind::real) {
      try {
        size_t used = 0;
        (void)std::stod(value, &used);
        if (used != value.size()) throw std::invalid_argument("trailing");
      } catch (const std::out_of_range&) {
        throw InputError(prefix() + "--" + name + " " + value + " is out of range (a double-precision number)");
      } catch (const std::exception&) {
        throw InputError(prefix() + "--" + name + " expects a number, got '" + value + "'");
      }
    }
    values_[name] = value;
    if (it->second.kind == Kind::repeated) repeated_[name].push_back(value);
  }
}

std::optional<i64> ArgParser::integer(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return std::stoll(it->second);
}
std::optional<double> ArgParser::real(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return std::stod(it->second);
}
std::optional<std::string> ArgParser::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ArgParser::texts(const std::string& name) const {
  const auto it = repeated_.find(name);
  return it == repeated_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<ArgParser::Kind> ArgParser::kind_of(const std::string& name) const {
  const auto it = specs_.find(name);
  if (it == specs_.end()) return std::nullopt;
  return it->second.kind;
}

std::string ArgParser::prefix() const { return command_.empty() ? std::string() : command_ + ": "; }
std::string ArgParser::invocation() const { return command_.empty() ? program_ : program_ + " " + command_; }

std::string ArgParser::flags_help() const {
  std::ostringstream out;
  for (const auto& name : order_) {
    const Spec& s = specs_.at(name);
    std::string head = "--" + name + (s.kind == Kind::flag ? "" : " " + s.metavar);
    out << "  " << head << (s.kind == Kind::repeated ? " (repeatable)" : "") << "\n      " << s.help << "\n";
  }
  return out.str();
}

std::string ArgParser::help() const {
  std::ostringstream out;
  out << "usage: " << invocation() << " [flags]" << (positional_spec_ ? " " + positional_spec_->first : "")
      << "\n\n" << summary_ << "\n\n";
  if (positional_spec_) out << "  " << positional_spec_->first << "\n      " << positional_spec_->second << "\n";
  out << flags_help() << "  --help\n      show this help\n";
  return out.str();
}

}  // namespace iosim::cli
