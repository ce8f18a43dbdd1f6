// The Python module `iosim`: each function turns its keyword arguments into
// the flags of the iosim command of the same name, runs that command (the
// same C++ as the executable) into a string, and returns its JSON output as
// Python objects. The CLI's InputError becomes ValueError with its message.
//   iosim.simulate(algo="fa2", seq=4096, causal=True, set={"sm.smem_per_block": "100KiB"})
//   iosim.sweep(algo=["standard", "fa2"], seq="512:4096:x2", counts_only=True)
#include <pybind11/pybind11.h>

#include <sstream>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/common/error.h"

namespace py = pybind11;

namespace {

using iosim::InputError;
using iosim::cli::Args;

enum class Output { json, json_lines };

// One command: the flags the module adds so that it prints JSON, and the
// flags a caller may not give (they would change where or how it prints).
struct Command {
  const char* name;
  int (*run)(const Args&, std::ostream&);
  std::vector<std::string> output_flags;
  std::vector<std::string> reserved;
  Output output;
  const char* returns;
};

// Adding a command is one line here (its cmd_ function writes to the stream).
const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"simulate", iosim::cli::cmd_simulate, {"--json"}, {"json", "help"}, Output::json,
       "a dict: the object of 'iosim simulate --json'"},
      {"sweep", iosim::cli::cmd_sweep, {"--format", "jsonl"}, {"format", "out", "help"}, Output::json_lines,
       "a list of dicts, one per point in grid order: the rows of 'iosim sweep --format jsonl'"},
      {"explore", iosim::cli::cmd_explore, {"--format", "json"}, {"format", "out", "plot", "help"}, Output::json,
       "a dict: the object of 'iosim explore --format json' (ranked candidates, recommendation, reason)"},
      {"profiles", iosim::cli::cmd_profiles, {"--json"}, {"json", "schema_markdown", "help"}, Output::json,
       "a list of dicts, one per profile: 'iosim profiles --json'"},
  };
  return table;
}

// A keyword's flag: pass_ -> --pass (Python keywords take a trailing _), counts_only -> --counts-only.
std::string flag_name(std::string key) {
  if (!key.empty() && key.back() == '_') key.pop_back();
  for (char& c : key)
    if (c == '_') c = '-';
  return key;
}

// A value as the CLI takes it: a number, a string, or (for sweep) a list or
// tuple of them joined by commas.
std::string flag_value(const std::string& flag, const py::handle& v) {
  if (py::isinstance<py::bool_>(v))
    throw InputError("--" + flag + ": True/False is for flags without a value; give a number or a string");
  if (py::isinstance<py::int_>(v) || py::isinstance<py::str>(v)) return py::str(v).cast<std::string>();
  if (py::isinstance<py::float_>(v)) return py::repr(v).cast<std::string>();  // shortest round-trip text
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string joined;
    for (const py::handle item : v) {
      if (py::isinstance<py::list>(item) || py::isinstance<py::tuple>(item))
        throw InputError("--" + flag + ": a list of lists; give a flat list of values");
      joined += (joined.empty() ? "" : ",") + flag_value(flag, item);
    }
    if (joined.empty()) throw InputError("--" + flag + ": an empty list; give at least one value");
    return joined;
  }
  throw InputError("--" + flag + ": a " + py::type::of(v).attr("__name__").cast<std::string>() +
                   " is not a value; give a number, a string or a list of them");
}

// The keyword arguments as the command's flags, valued ones in the order
// given (a sweep's grid order) as --flag=value. True -> "--flag", after them,
// so that True given to a valued flag is reported as its missing value; False
// and None leave the flag out. `set` takes a dict {key: value} (or a list of
// "KEY=VALUE" strings): one --set each.
Args flags_of(const Command& c, const py::kwargs& kwargs) {
  Args args = c.output_flags, bare;
  for (const auto& [k, v] : kwargs) {
    const std::string key = k.cast<std::string>(), flag = flag_name(key);
    for (const std::string& r : c.reserved)
      if (flag == flag_name(r))
        throw InputError(std::string(c.name) + "(): '" + key + "' is set by the module, which returns Python objects; leave it out");
    if (v.is_none() || (py::isinstance<py::bool_>(v) && !v.cast<bool>())) continue;
    if (py::isinstance<py::bool_>(v)) {
      bare.push_back("--" + flag);
    } else if (flag == "set" && py::isinstance<py::dict>(v)) {
      for (const auto& [sk, sv] : v.cast<py::dict>())
        args.push_back("--set=" + py::str(sk).cast<std::string>() + "=" + flag_value("set", sv));
    } else if (flag == "set" && (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))) {
      for (const py::handle item : v) args.push_back("--set=" + flag_value("set", item));
    } else {
      args.push_back("--" + flag + "=" + flag_value(flag, v));
    }
  }
  args.insert(args.end(), bare.begin(), bare.end());
  return args;
}

py::object run(const Command& c, const py::kwargs& kwargs) {
  const Args args = flags_of(c, kwargs);
  std::ostringstream out;
  {
    const py::gil_scoped_release unlocked;  // the command runs on its own threads, touching no Python object
    c.run(args, out);
  }
  const py::object loads = py::module_::import("json").attr("loads");
  if (c.output == Output::json) return loads(out.str());
  py::list rows;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) rows.append(loads(line));
  return rows;
}

// The command's own --help, for the function's docstring.
std::string command_help(const Command& c) {
  std::ostringstream help;
  c.run({"--help"}, help);
  return help.str();
}

}  // namespace

PYBIND11_MODULE(iosim, m) {
  m.doc() =
      "iosim: the GPU memory-hierarchy simulator's commands as functions. Keyword arguments are the\n"
      "command's flags (counts_only=True is --counts-only, pass_='bwd' is --pass bwd, set={'l2.size': '20MiB'}\n"
      "is --set l2.size=20MiB; for sweep any value may be a list or a range string '512:4096:x2').\n"
      "Bad input raises ValueError with the CLI's message.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  for (const Command& c : commands()) {
    const std::string doc = "iosim." + std::string(c.name) + "(**flags) -> " + c.returns +
                            ".\nKeyword arguments are the flags below (dashes as underscores).\n\n" + command_help(c);
    m.def(c.name, [&c](const py::kwargs& kwargs) { return run(c, kwargs); }, doc.c_str());
  }
}
