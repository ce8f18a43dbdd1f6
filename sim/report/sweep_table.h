// The rows of `iosim sweep`: one per point, as CSV (a header, then a line per
// point) or JSON lines (one object per point). A row holds the point's swept
// values as given, its status and error, and the keys of its
// `iosim simulate --json` object chosen by sweep_result_columns(), named by
// their path with dots ("dram.read_bytes") and written as simulate writes them.
#pragma once
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iosim::report {

enum class SweepFormat { csv, jsonl };
SweepFormat parse_sweep_format(const std::string& text);  // throws InputError

// The simulate --json keys a row takes: the count columns, then (unless
// counts_only) the memory model's and engine's.
std::vector<std::string> sweep_result_columns(bool counts_only);

// A JSON object's scalar leaves (and arrays, whole) by dotted path, each as
// its JSON text ("123", "\"fa2\"", "null"), in document order.
using FlatJson = std::vector<std::pair<std::string, std::string>>;
FlatJson flatten_json_object(std::string_view json);  // throws std::invalid_argument when malformed

struct SweepRow {
  std::vector<std::string> inputs;  // the swept values, one per input column
  std::string error;                // empty when the point ran
  std::string json;                 // its simulate --json object, when it ran
};

class SweepTable {
 public:
  SweepTable(SweepFormat format, std::vector<std::string> input_columns, bool counts_only);
  // The CSV header line ("" for JSON lines), with its newline.
  std::string header() const;
  // A row's line, with its newline; safe to call from several threads.
  std::string line(const SweepRow& row) const;

 private:
  SweepFormat format_;
  std::vector<std::string> inputs_, results_;
};

}  // namespace iosim::report
