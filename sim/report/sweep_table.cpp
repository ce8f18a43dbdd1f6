#include "sim/report/sweep_table.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "sim/common/error.h"
#include "sim/report/json.h"

namespace iosim::report {

namespace {

// A recursive reader of one JSON value that keeps each leaf's text as written.
class Flattener {
 public:
  explicit Flattener(std::string_view s) : s_(s) {}
  FlatJson object() {
    FlatJson out;
    skip_space();
    if (peek() != '{') fail("expected an object");
    read_object("", out);
    skip_space();
    if (pos_ != s_.size()) fail("text after the object");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("malformed JSON at offset " + std::to_string(pos_) + ": " + what);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string_view string_token() {
    const std::size_t start = pos_;
    if (peek() != '"') fail("expected a string");
    for (++pos_; pos_ < s_.size() && s_[pos_] != '"'; ++pos_)
      if (s_[pos_] == '\\') ++pos_;
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // Any value, skipped; returns its text.
  std::string_view skip_value() {
    skip_space();
    const std::size_t start = pos_;
    const char c = peek();
    if (c == '"') return string_token();
    if (c == '{' || c == '[') {
      int depth = 0;
      do {
        if (peek() == '"') {
          string_token();
          continue;
        }
        if (peek() == '{' || peek() == '[') ++depth;
        if (peek() == '}' || peek() == ']') --depth;
        if (++pos_ > s_.size()) fail("unbalanced brackets");
      } while (depth > 0);
      return s_.substr(start, pos_ - start);
    }
    while (pos_ < s_.size() && std::string_view(",}] \n\t\r").find(s_[pos_]) == std::string_view::npos) ++pos_;
    if (pos_ == start) fail("expected a value");
    return s_.substr(start, pos_ - start);
  }
  void read_object(const std::string& prefix, FlatJson& out) {
    expect('{');
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    while (true) {
      skip_space();
      const std::string_view key = string_token();
      const std::string path = prefix + std::string(key.begin() + 1, key.end() - 1);  // keys need no unescaping here
      expect(':');
      skip_space();
      if (peek() == '{') read_object(path + ".", out);
      else out.emplace_back(path, std::string(skip_value()));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }
  std::string_view s_;
  std::size_t pos_ = 0;
};

// A JSON string token's text (json_escape's escapes undone).
std::string unescape(std::string_view token) {
  std::string out;
  for (std::size_t i = 1; i + 1 < token.size(); ++i) {
    if (token[i] != '\\') {
      out += token[i];
      continue;
    }
    const char e = token[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'u': out += static_cast<char>(std::stoi(std::string(token.substr(i + 1, 4)), nullptr, 16)); i += 4; break;
      default: out += e;
    }
  }
  return out;
}

// RFC 4180: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A cell from a leaf's JSON text: strings unquoted, null empty.
std::string csv_from_json(const std::string& token) {
  if (token == "null") return "";
  if (!token.empty() && token.front() == '"') return csv_cell(unescape(token));
  return csv_cell(token);
}

std::string quoted(const std::string& text) {
  std::string out(1, '"');
  out += json_escape(text);
  out += '"';
  return out;
}

}  // namespace

SweepFormat parse_sweep_format(const std::string& text) {
  if (text == "csv") return SweepFormat::csv;
  if (text == "jsonl") return SweepFormat::jsonl;
  throw InputError("--format '" + text + "': expected csv or jsonl");
}

std::vector<std::string> sweep_result_columns(bool counts_only) {
  std::vector<std::string> columns = {
      "profile", "algorithm", "pass", "problem.batch", "problem.heads", "problem.kv_heads", "problem.seq_q",
      "problem.seq_k", "problem.head_dim", "problem.dtype", "problem.layout", "problem.causal",
      "problem.block_density", "tiling.block_m", "tiling.block_n", "tiling.splits", "tiling.gemm.m", "tiling.gemm.n", "tiling.gemm.k",
      "tiling.sram_bytes", "tiling.sram_limit_bytes", "tiling.rule", "kernel.compiled", "counted_by", "flops",
      "global.read_bytes", "global.write_bytes", "global.total_bytes", "formula.bytes", "formula.paper_bytes",
      "formula.equals_trace"};
  if (counts_only) return columns;
  for (const char* c : {"l2.lookups", "l2.lookup_hits", "l2.lookup_hit_rate", "l2.hits", "l2.misses", "l2.hit_rate",
                        "dram.read_bytes", "dram.write_bytes", "dram.dirty_left_bytes", "time.seconds",
                        "occupancy.ctas_per_sm", "occupancy.waves", "occupancy.limiter", "bound"})
    columns.emplace_back(c);
  return columns;
}

FlatJson flatten_json_object(std::string_view json) { return Flattener(json).object(); }

SweepTable::SweepTable(SweepFormat format, std::vector<std::string> input_columns, bool counts_only)
    : format_(format), inputs_(std::move(input_columns)), results_(sweep_result_columns(counts_only)) {}

std::string SweepTable::header() const {
  if (format_ != SweepFormat::csv) return "";
  std::ostringstream out;
  for (const auto& c : inputs_) out << csv_cell(c) << ',';
  out << "status,error";
  for (const auto& c : results_) out << ',' << c;
  out << '\n';
  return out.str();
}

std::string SweepTable::line(const SweepRow& row) const {
  const FlatJson leaves = row.error.empty() ? flatten_json_object(row.json) : FlatJson{};
  auto leaf = [&](const std::string& path) -> std::string {
    const auto it = std::find_if(leaves.begin(), leaves.end(), [&](const auto& l) { return l.first == path; });
    return it == leaves.end() ? "null" : it->second;
  };
  const std::string status = row.error.empty() ? "ok" : "error";
  // Streamed piece by piece: GCC 12 warns falsely on long chains of string +.
  std::ostringstream out;
  if (format_ == SweepFormat::csv) {
    for (const auto& v : row.inputs) out << csv_cell(v) << ',';
    out << status << ',' << csv_cell(row.error);
    for (const auto& c : results_) out << ',' << csv_from_json(leaf(c));
    out << '\n';
    return out.str();
  }
  out << '{';
  for (std::size_t i = 0; i < inputs_.size(); ++i) out << quoted(inputs_[i]) << ':' << quoted(row.inputs[i]) << ',';
  out << "\"status\":" << quoted(status) << ",\"error\":" << (row.error.empty() ? "null" : quoted(row.error));
  for (const auto& c : results_) out << ',' << quoted(c) << ':' << leaf(c);
  out << "}\n";
  return out.str();
}

}  // namespace iosim::report
