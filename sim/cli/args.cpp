#include "sim/cli/args.h"

#include <charconv>
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
        throw InputError(command_ + ": unexpected argument '" + a + "' (see '" + program_ + " " + command_ + " --help')");
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
      throw InputError(command_ + ": unknown flag '--" + name + "' (see '" + program_ + " " + command_ + " --help')");
    if (values_.count(name)) throw InputError(command_ + ": flag '--" + name + "' given twice");
    if (it->second.kind == Kind::flag) {
      if (inline_value) throw InputError(command_ + ": flag '--" + name + "' takes no value");
      values_[name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) throw InputError(command_ + ": flag '--" + name + "' needs a value (" + it->second.metavar + ")");
      value = args[++i];
    }
    if (it->second.kind == Kind::integer) {
      i64 v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || p != value.data() + value.size())
        throw InputError(command_ + ": --" + name + " expects an integer, got '" + value + "'");
    } else if (it->second.kind == Kind::real) {
      try {
        size_t used = 0;
        (void)std::stod(value, &used);
        if (used != value.size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw InputError(command_ + ": --" + name + " expects a number, got '" + value + "'");
      }
    }
    values_[name] = value;
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

std::string ArgParser::help() const {
  std::ostringstream out;
  out << "usage: " << program_ << " " << command_ << " [flags]" << (positional_spec_ ? " " + positional_spec_->first : "")
      << "\n\n" << summary_ << "\n\n";
  if (positional_spec_) out << "  " << positional_spec_->first << "\n      " << positional_spec_->second << "\n";
  for (const auto& name : order_) {
    const Spec& s = specs_.at(name);
    std::string head = "--" + name + (s.kind == Kind::flag ? "" : " " + s.metavar);
    out << "  " << head << "\n      " << s.help << "\n";
  }
  out << "  --help\n      show this help\n";
  return out.str();
}

}  // namespace iosim::cli
