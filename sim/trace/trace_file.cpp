#include "sim/trace/trace_file.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "sim/common/error.h"
#include "sim/schedule/local_memory.h"

namespace iosim::trace {

namespace {

// A contiguous tile is one row; a strided one keeps its stride.
RangeAccess normalised(RangeAccess r) {
  if (r.rows <= 1 || r.stride == r.row_bytes) {
    r.row_bytes *= r.rows > 0 ? r.rows : 1;
    r.rows = 1;
    r.stride = 0;
  }
  return r;
}

// ---------------------------------------------------------------------------
// Adapter: a logical KernelTrace seen at address level.
class TileCursor final : public StepCursor {
 public:
  TileCursor(Generator<Step> steps, const TensorTable& tensors) : steps_(std::move(steps)), tensors_(tensors) {}
  bool next(RangeStep& out) override {
    if (!steps_.next()) return false;
    const Step& s = steps_.value();
    out.clear();
    for (int k = 0; k < s.load_count; ++k) out.loads.push_back(to_range(s.loads[static_cast<size_t>(k)], tensors_));
    for (int k = 0; k < s.store_count; ++k) out.stores.push_back(to_range(s.stores[static_cast<size_t>(k)], tensors_));
    out.compute = s.compute;
    return true;
  }

 private:
  Generator<Step> steps_;
  const TensorTable& tensors_;
};

class TileKernel final : public RangeKernel {
 public:
  TileKernel(const KernelTrace& k, const TensorTable& t, workload::Pass pass) : k_(k), t_(t), pass_(pass) {}
  std::string name() const override { return k_.name(); }
  workload::Pass pass() const override { return pass_; }
  schedule::Dim3 grid() const override { return k_.grid(); }
  CtaResources resources() const override { return k_.resources(); }
  int pipeline_stages() const override { return k_.pipeline_stages(); }
  std::unique_ptr<StepCursor> open_cta(i64 x, i64 y, i64 z) const override {
    return std::make_unique<TileCursor>(k_.cta_steps(x, y, z), t_);
  }
  std::shared_ptr<const schedule::KernelPrograms> programs() const override { return k_.programs(); }
  i64 zero_fill_read_bytes() const override { return k_.zero_fill_read_bytes(); }
  std::array<bool, 3> replica_dims() const override { return k_.replica_dims(); }

 private:
  const KernelTrace& k_;
  const TensorTable& t_;
  workload::Pass pass_;
};

char kind_letter(AccessKind k) {
  switch (k) {
    case AccessKind::Read: return 'r';
    case AccessKind::Write: return 'w';
    case AccessKind::ReduceAdd: return 'a';
  }
  return '?';
}

// Appends " <v>" in decimal (or hex) to a line buffer.
void put(std::string& s, i64 v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.push_back(' ');
  s.append(buf, r.ptr);
}
void put_hex(std::string& s, u64 v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  s.push_back(' ');
  s.append(buf, r.ptr);
}

void put_access(std::string& s, const RangeAccess& a) {
  s.push_back(kind_letter(a.kind));
  put(s, a.tensor);
  put_hex(s, a.addr);
  put(s, a.row_bytes);
  if (a.rows != 1) {
    put(s, a.rows);
    put(s, a.stride);
  }
  s.push_back('\n');
}

std::string hex(u64 v) {
  std::string s = "0x";
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  s.append(buf, r.ptr);
  return s;
}

// Appends `a` to `out` in pieces of at most kMaxPieceBytes and kMaxPieceRows:
// groups of whole rows, or a row longer than kMaxPieceBytes cut at multiples
// of kMaxPieceBytes (so two pieces never share a line or a sector, and the
// memory model counts the same bytes and sectors as for the whole access).
void append_pieces(const RangeAccess& a, std::vector<RangeAccess>& out) {
  if (a.bytes() <= kMaxPieceBytes && a.rows <= kMaxPieceRows) {
    out.push_back(a);
    return;
  }
  if (a.row_bytes > kMaxPieceBytes) {
    const u64 piece = static_cast<u64>(kMaxPieceBytes);
    for (i64 r = 0; r < a.rows; ++r) {
      const u64 row = a.addr + static_cast<u64>(r * a.stride), end = row + static_cast<u64>(a.row_bytes);
      for (u64 at = row; at < end;) {
        const u64 next = std::min(end, (at / piece + 1) * piece);
        out.push_back({a.kind, a.tensor, at, static_cast<i64>(next - at), 1, 0});
        at = next;
      }
    }
    return;
  }
  const i64 rows_per_piece = std::max<i64>(1, std::min(kMaxPieceRows, kMaxPieceBytes / a.row_bytes));
  for (i64 r = 0; r < a.rows; r += rows_per_piece) {
    RangeAccess p = a;
    p.addr = a.addr + static_cast<u64>(r * a.stride);
    p.rows = std::min(rows_per_piece, a.rows - r);
    out.push_back(normalised(p));
  }
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

// "programs ...", then each program and its instructions.
void put_programs(std::string& s, const schedule::KernelPrograms& k) {
  s += "programs warps=" + std::to_string(k.warps) + " tensor=" + (k.tensor ? "1" : "0") +
       " sync_loads=" + (k.loads_in_program ? "1" : "0") + (k.stores_per_round ? " store_rounds=1" : "") + "\n";
  for (size_t id = 0; id < k.programs.size(); ++id) {
    const schedule::WarpProgram& p = k.programs[id];
    if (p.code.empty()) continue;
    std::string name = p.name;
    for (char& c : name)
      if (c == ' ' || c == '\t') c = '_';
    s += "program " + std::to_string(id) + " " + name;
    if (k.rounds_of(static_cast<int>(id)) > 1) s += " rounds=" + std::to_string(k.rounds_of(static_cast<int>(id)));
    if (!p.locals_repeat) s += " once=1";
    s += "\n";
    size_t local = 0;  // the program's local accesses go with its op=local instructions, in order
    for (const schedule::Instr& in : p.code) {
      s += "i ";
      s += schedule::to_string(in.pipe);
      put(s, static_cast<i64>(in.bytes));
      if (in.op != schedule::Op::plain) s += std::string(" op=") + schedule::to_string(in.op);
      if (in.flop != 0) s += " flop=" + std::to_string(in.flop);
      if (in.op == schedule::Op::local && local < p.locals.size())
        s += " local=" + schedule::local_token(p.locals[local++]);
      for (int k2 = 0; k2 < in.sources; ++k2) put(s, static_cast<i64>(in.source[k2]));
      s.push_back('\n');
    }
  }
}

}  // namespace

RangeAccess to_range(const TileAccess& a, const TensorTable& tensors) {
  const TensorInfo& ti = tensors.info(a.tensor);
  RangeAccess r;
  r.kind = a.kind;
  r.tensor = static_cast<TensorIndex>(a.tensor);
  r.addr = tensors.address(a.tensor, a.batch, a.head, a.row0, a.col0);
  r.row_bytes = a.cols * ti.elem_bytes;
  const i64 row_stride = static_cast<i64>(tensors.address(a.tensor, a.batch, a.head, a.row0 + 1, a.col0) - r.addr);
  r.rows = a.rows;
  r.stride = a.rows > 1 ? row_stride : 0;
  if (a.piece_rows > 0) {
    if (a.rows % a.piece_rows != 0 || a.piece_step < a.piece_rows || a.cols != ti.cols)
      throw std::logic_error("to_range: pieces must tile whole rows of the access");
    if (row_stride != r.row_bytes) throw std::logic_error("to_range: pieces need a tensor with adjacent rows");
    r.row_bytes *= a.piece_rows;
    r.rows = a.rows / a.piece_rows;
    r.stride = r.rows > 1 ? a.piece_step * row_stride : 0;
  }
  return normalised(r);
}

// ---------------------------------------------------------------------------
AlgorithmKernelSource::AlgorithmKernelSource(const AlgorithmTrace& run) : run_(run) {}
AlgorithmKernelSource::~AlgorithmKernelSource() = default;

// The tensors the run allocates, indexed as a written trace file's reader
// lists them (an unused tensor's name is empty; none after the last used).
std::vector<std::string> AlgorithmKernelSource::tensor_names() const {
  std::vector<std::string> names;
  for (int t = 0; t < kTensorCount; ++t) {
    if (!run_.tensors->info(static_cast<TensorId>(t)).used) continue;
    names.resize(static_cast<size_t>(t) + 1);
    names[static_cast<size_t>(t)] = tensor_name(static_cast<TensorId>(t));
  }
  return names;
}

const RangeKernel* AlgorithmKernelSource::next_kernel() {
  if (next_ >= run_.kernels.size()) {
    current_.reset();
    return nullptr;
  }
  const KernelEntry& e = run_.kernels[next_++];
  current_ = std::make_unique<TileKernel>(*e.kernel, *run_.tensors, e.pass);
  return current_.get();
}

// ---------------------------------------------------------------------------
void write_trace_file(std::ostream& out, const AlgorithmTrace& run, ProgressSink* progress) {
  std::string s;
  s += "iosim-trace " + std::to_string(kTraceFileVersion) + "\n";
  s += "# ";
  s += to_string(run.algorithm);
  s += " ";
  s += workload::to_string(run.pass);
  s += ", tiling ";
  s += std::to_string(run.tiling.block_m) + "x" + std::to_string(run.tiling.block_n);
  s += "\ndtype ";
  s += workload::to_string(run.problem.dtype);
  s += "\n";
  for (int t = 0; t < kTensorCount; ++t) {
    const TensorInfo& info = run.tensors->info(static_cast<TensorId>(t));
    if (!info.used) continue;
    s += "tensor " + std::to_string(t) + " " + std::string(tensor_name(static_cast<TensorId>(t)));
    put_hex(s, info.base);
    put(s, info.bytes());
    s += "\n";
  }
  out << s;
  AlgorithmKernelSource source(run);
  RangeStep step;
  i64 steps = 0;
  while (const RangeKernel* k = source.next_kernel()) {
    const schedule::Dim3 g = k->grid();
    const CtaResources r = k->resources();
    s.clear();
    s += "kernel " + k->name() + " pass=" + std::string(workload::to_string(k->pass()));
    s += " grid=" + std::to_string(g.x) + "," + std::to_string(g.y) + "," + std::to_string(g.z);
    s += " threads=" + std::to_string(r.threads) + " smem=" + std::to_string(r.smem_bytes) +
         " regs=" + std::to_string(r.regs_per_thread) + " stages=" + std::to_string(k->pipeline_stages()) + "\n";
    const auto progs = k->programs();
    if (progs) put_programs(s, *progs);
    out << s;
    for (i64 z = 0; z < g.z; ++z)
      for (i64 y = 0; y < g.y; ++y)
        for (i64 x = 0; x < g.x; ++x) {
          s.clear();
          s += "cta";
          put(s, x);
          put(s, y);
          put(s, z);
          s.push_back('\n');
          auto cursor = k->open_cta(x, y, z);
          while (cursor->next(step)) {
            if (++steps % kProgressEverySteps == 0 && progress) progress->add(kProgressEverySteps);
            s += "s";
            put(s, step.compute.tensor_flops);
            put(s, step.compute.fp32_ops);
            put(s, step.compute.sfu_ops);
            // A program the kernel does not have (FA2 backward's prologue where it
            // spills nothing) is not written: the step then runs none.
            if (step.compute.program >= 0 && (!progs || progs->find(step.compute.program)))
              put(s, static_cast<i64>(step.compute.program));
            s.push_back('\n');
            for (const auto& a : step.loads) put_access(s, a);
            for (const auto& a : step.stores) put_access(s, a);
          }
          out << s;
        }
    out << "end\n";
  }
  if (progress) progress->add(steps % kProgressEverySteps);
  if (!out) throw InputError("could not write the trace file (stream error)");
}

void write_trace_file(const std::string& path, const AlgorithmTrace& run, ProgressSink* progress) {
  std::ofstream f(path);
  if (!f) throw InputError("cannot open '" + path + "' for writing the trace");
  write_trace_file(f, run, progress);
}

// ---------------------------------------------------------------------------
// One kernel read from a file, held in flat arrays.
class TraceFileReader::FileKernel final : public RangeKernel {
 public:
  struct StepRec {
    ComputeWork compute;
    i64 first_access = 0;
    int loads = 0;
    int stores = 0;
  };
  std::string name_;
  workload::Pass pass_ = workload::Pass::fwd;
  schedule::Dim3 grid_;
  CtaResources resources_;
  int stages_ = 2;
  std::vector<i64> cta_first_step;  // size ctas + 1
  std::vector<StepRec> steps;
  std::vector<RangeAccess> accesses;
  std::shared_ptr<schedule::KernelPrograms> programs_;  // null: the file gives none

  std::string name() const override { return name_; }
  workload::Pass pass() const override { return pass_; }
  schedule::Dim3 grid() const override { return grid_; }
  CtaResources resources() const override { return resources_; }
  int pipeline_stages() const override { return stages_; }
  std::shared_ptr<const schedule::KernelPrograms> programs() const override { return programs_; }

  class Cursor final : public StepCursor {
   public:
    Cursor(const FileKernel& k, i64 first, i64 last) : k_(k), at_(first), last_(last) {}
    bool next(RangeStep& out) override {
      if (at_ >= last_) return false;
      const StepRec& s = k_.steps[static_cast<size_t>(at_++)];
      out.clear();
      const RangeAccess* a = k_.accesses.data() + s.first_access;
      for (int i = 0; i < s.loads; ++i) append_pieces(a[i], out.loads);
      for (int i = s.loads; i < s.loads + s.stores; ++i) append_pieces(a[i], out.stores);
      out.compute = s.compute;
      return true;
    }

   private:
    const FileKernel& k_;
    i64 at_, last_;
  };

  std::unique_ptr<StepCursor> open_cta(i64 x, i64 y, i64 z) const override {
    const i64 id = (z * grid_.y + y) * grid_.x + x;
    return std::make_unique<Cursor>(*this, cta_first_step[static_cast<size_t>(id)],
                                    cta_first_step[static_cast<size_t>(id + 1)]);
  }
};

TraceFileReader::TraceFileReader(const std::string& path) : name_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError("'" + path + "' is a directory, not a trace file (give a file written by 'iosim trace')");
  auto f = std::make_unique<std::ifstream>(path);
  if (!*f) throw InputError("cannot open trace file '" + path + "'");
  size_ = static_cast<i64>(std::filesystem::file_size(path, ec));
  if (ec) size_ = -1;
  in_ = std::move(f);
  read_header();
}

TraceFileReader::TraceFileReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {
  read_header();
}

TraceFileReader::~TraceFileReader() = default;

i64 TraceFileReader::bytes_read() const { return static_cast<i64>(in_->tellg()); }
i64 TraceFileReader::kernel_steps() const { return current_ ? static_cast<i64>(current_->steps.size()) : 0; }

void TraceFileReader::fail(const std::string& what) const {
  throw InputError(name_ + ":" + std::to_string(line_no_) + ": " + what);
}

// Next non-blank, non-comment line.
bool TraceFileReader::read_line(std::string& line) {
  if (has_pending_) {
    line = std::move(pending_);
    has_pending_ = false;
    return true;
  }
  while (std::getline(*in_, line)) {
    ++line_no_;
    const size_t p = line.find_first_not_of(" \t\r");
    if (p == std::string::npos || line[p] == '#') continue;
    return true;
  }
  return false;
}

namespace {
// CUDA's grid limits.
constexpr i64 kMaxGridX = (i64{1} << 31) - 1;
constexpr i64 kMaxGridYZ = 65535;
// Pipeline buffers per CTA: more than any kernel keeps in flight (ours use 1-3).
constexpr i64 kMaxStages = 64;

template <typename T>
bool parse_num(std::string_view s, T& v, int base = 10) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace

void TraceFileReader::read_header() {
  const std::string first = "iosim-trace " + std::to_string(kTraceFileVersion);
  std::string line;
  if (!read_line(line)) fail("empty trace file (expected the first line '" + first + "')");
  const auto head = split(line);
  if (head == std::vector<std::string_view>{"iosim-trace", "1"})
    fail("trace format 1 declares no tensor sizes; this iosim reads format " + std::to_string(kTraceFileVersion) +
         " (first line '" + first + "', each tensor 'tensor <id> <name> <base_hex> <bytes>'): write the trace "
         "again with 'iosim trace', or add each tensor's base address and size");
  const std::string older = "iosim-trace " + std::to_string(kOldestTraceFileVersion);
  if (head != split(first) && head != split(older))
    fail("not an iosim trace (expected the first line '" + first + "', or '" + older + "')");
  tensor_names_.clear();
  extents_.clear();
  window_.reset();
  while (read_line(line)) {
    const auto tok = split(line);
    if (tok[0] == "dtype") {
      if (tok.size() != 2) fail("'dtype' takes one value (fp16, bf16 or fp32)");
      try {
        dtype_ = workload::parse_dtype(tok[1]);
      } catch (const InputError& e) {
        fail(e.what());
      }
    } else if (tok[0] == "tensor") {
      read_tensor(tok);
    } else {
      pending_ = std::move(line);
      has_pending_ = true;
      return;
    }
  }
}

// "tensor <id> <name> <base_hex> <bytes>": each id once; all tensors in one
// kAddressWindowBytes window.
void TraceFileReader::read_tensor(const std::vector<std::string_view>& tok) {
  int id = 0;
  u64 base = 0;
  i64 bytes = 0;
  if (tok.size() != 5 || !parse_num(tok[1], id) || id < 0 || id >= kMaxFileTensors || !parse_num(tok[3], base, 16) ||
      !parse_num(tok[4], bytes) || bytes < 1)
    fail("expected 'tensor <id 0..255> <name> <base_hex> <bytes>' with a positive size in bytes");
  const size_t i = static_cast<size_t>(id);
  if (extents_.size() <= i) extents_.resize(i + 1);
  if (extents_[i])
    fail("tensor " + std::to_string(id) + " is declared twice (first on line " + std::to_string(extents_[i]->line) +
         ")");
  const u64 window = base / kAddressWindowBytes;
  if (static_cast<u64>(bytes) > kAddressWindowBytes - base % kAddressWindowBytes || (window_ && *window_ != window))
    fail("tensor " + std::to_string(id) + " [" + hex(base) + ", +" + std::to_string(bytes) +
         " B) leaves the address window of the trace's tensors (all tensors lie in one aligned " +
         std::to_string(kAddressWindowBytes >> 30) + " GiB window" +
         (window_ ? ": [" + hex(*window_ * kAddressWindowBytes) + ", " + hex((*window_ + 1) * kAddressWindowBytes) + ")"
                  : std::string()) +
         ")");
  window_ = window;
  extents_[i] = Extent{base, base + static_cast<u64>(bytes), std::string(tok[2]), line_no_};
  if (tensor_names_.size() <= i) tensor_names_.resize(i + 1);
  tensor_names_[i] = std::string(tok[2]);
}

std::string TraceFileReader::declared_list() const {
  std::string out;
  for (size_t i = 0; i < extents_.size(); ++i)
    if (extents_[i]) out += (out.empty() ? "" : ", ") + std::to_string(i) + " (" + extents_[i]->name + ")";
  return out.empty() ? "none" : out;
}

i64 TraceFileReader::check_access(const RangeAccess& a, std::string_view op) const {
  const size_t id = a.tensor;
  if (id >= extents_.size() || !extents_[id])
    fail("tensor " + std::to_string(id) + " was never declared (declared: " + declared_list() +
         "; declare it before the first kernel: 'tensor " + std::to_string(id) + " <name> <base_hex> <bytes>')");
  const Extent& t = *extents_[id];
  // In 128 bits: rows, stride and row_bytes come from the file unchecked.
  using u128 = unsigned __int128;
  const u128 end = u128{a.addr} + u128(static_cast<u64>(a.rows - 1)) * static_cast<u64>(a.stride) +
                   static_cast<u64>(a.row_bytes);
  const u128 bytes = u128(static_cast<u64>(a.rows)) * static_cast<u64>(a.row_bytes);
  if (a.addr < t.base || end > t.end || bytes > kAddressWindowBytes)
    fail(std::string(op) + ": bytes [" + hex(a.addr) + ", " +
         (end >> 64 ? std::string("past 2^64") : hex(static_cast<u64>(end))) + ") of " +
         std::to_string(a.rows) + " row(s) lie outside tensor " + std::to_string(id) + " (" + t.name + ") [" +
         hex(t.base) + ", " + hex(t.end) + "), declared on line " + std::to_string(t.line) +
         " (every access lies inside its tensor)");
  return static_cast<i64>(bytes);
}

namespace {
constexpr i64 kMaxProgramId = 64;
constexpr i64 kMaxProgramInstructions = i64{1} << 22;  // per kernel: bounds the memory a file can claim
constexpr i64 kMaxWarpsPerCta = 32;                      // 1024 threads
constexpr i64 kMaxInstrBytes = i64{1} << 20;
constexpr i64 kMaxLoadRounds = i64{1} << 16;
}  // namespace

// "programs warps=.. tensor=.. sync_loads=.. [store_rounds=..]", "program <id> <name> [rounds=..] [once=1]",
// "i <pipe> <bytes> [op=..] [flop=..] [local=..] [<source>...]".
void TraceFileReader::read_program_record(const std::vector<std::string_view>& tok, FileKernel& k) {
  if (tok[0] == "programs") {
    if (k.programs_) fail("a kernel has one 'programs' line");
    auto p = std::make_shared<schedule::KernelPrograms>();
    bool seen[3] = {};
    for (size_t i = 1; i < tok.size(); ++i) {
      const auto eq = tok[i].find('=');
      const std::string_view key = eq == std::string_view::npos ? tok[i] : tok[i].substr(0, eq);
      const std::string_view val = eq == std::string_view::npos ? std::string_view() : tok[i].substr(eq + 1);
      i64 v = 0;
      if (!parse_num(val, v)) fail("programs: expected key=integer, got '" + std::string(tok[i]) + "'");
      if (key == "warps" && v >= 1 && v <= kMaxWarpsPerCta) {
        p->warps = v;
        seen[0] = true;
      } else if ((key == "tensor" || key == "sync_loads") && (v == 0 || v == 1)) {
        (key == "tensor" ? p->tensor : p->loads_in_program) = v == 1;
        seen[key == "tensor" ? 1 : 2] = true;
      } else if (key == "store_rounds" && (v == 0 || v == 1)) {
        p->stores_per_round = v == 1;
      } else {
        fail("programs: expected warps=<1.." + std::to_string(kMaxWarpsPerCta) +
             "> tensor=<0|1> sync_loads=<0|1> [store_rounds=<0|1>], got '" + std::string(tok[i]) + "'");
      }
    }
    if (!seen[0] || !seen[1] || !seen[2]) fail("programs: needs warps=, tensor= and sync_loads=");
    if (p->stores_per_round && !p->loads_in_program) fail("programs: store_rounds=1 needs sync_loads=1");
    k.programs_ = std::move(p);
    program_instructions_ = 0;
    open_program_ = -1;
    return;
  }
  if (!k.programs_) fail("'" + std::string(tok[0]) + "' before the kernel's 'programs' line");
  auto& progs = k.programs_->programs;
  if (tok[0] == "program") {
    i64 id = 0, rounds = 1;
    bool once = false, bad = tok.size() < 3 || tok.size() > 5;
    for (size_t q = 3; q < tok.size() && !bad; ++q) {
      if (tok[q].substr(0, 7) == "rounds=")
        bad = !parse_num(tok[q].substr(7), rounds) || rounds < 1 || rounds > kMaxLoadRounds;
      else if (tok[q] == "once=1")
        once = true;
      else
        bad = true;
    }
    if (bad || !parse_num(tok[1], id) || id < 0 || id >= kMaxProgramId)
      fail("expected 'program <id 0.." + std::to_string(kMaxProgramId - 1) + "> <name> [rounds=<1.." +
           std::to_string(kMaxLoadRounds) + ">] [once=1]'");
    if (progs.size() <= static_cast<size_t>(id)) progs.resize(static_cast<size_t>(id) + 1);
    auto& lr = k.programs_->load_rounds;
    if (lr.size() <= static_cast<size_t>(id)) lr.resize(static_cast<size_t>(id) + 1, 0);
    lr[static_cast<size_t>(id)] = static_cast<int>(rounds);
    if (!progs[static_cast<size_t>(id)].name.empty()) fail("program " + std::to_string(id) + " is defined twice");
    progs[static_cast<size_t>(id)].name = std::string(tok[2]);
    progs[static_cast<size_t>(id)].locals_repeat = !once;
    open_program_ = id;
    return;
  }
  if (open_program_ < 0) fail("'i' before a 'program <id> <name>' line");
  if (++program_instructions_ > kMaxProgramInstructions)
    fail("more than " + std::to_string(kMaxProgramInstructions) + " program instructions in one kernel");
  auto& code = progs[static_cast<size_t>(open_program_)].code;
  schedule::Instr in;
  std::optional<schedule::LocalAccess> local;  // local=: the access an op=local instruction makes
  bool pipe_ok = false;
  for (int q = 0; q < schedule::kPipeCount && tok.size() >= 2; ++q)
    if (tok[1] == schedule::to_string(static_cast<schedule::Pipe>(q))) {
      in.pipe = static_cast<schedule::Pipe>(q);
      pipe_ok = true;
    }
  // Optional op=<name> and flop=<n> (an asynchronous wgmma's FLOP) after the bytes.
  size_t first_source = 3;
  for (; first_source < tok.size(); ++first_source) {
    const std::string_view t = tok[first_source];
    if (t.rfind("op=", 0) == 0) {
      bool ok = false;
      for (int q = 0; q < schedule::kOpCount; ++q)
        if (t.substr(3) == schedule::to_string(static_cast<schedule::Op>(q))) {
          in.op = static_cast<schedule::Op>(q);
          ok = true;
        }
      if (!ok) fail("op=: expected one of plain, wgmma, wgmma_wait, turn_wait, turn_pass, branch_taken, "
                    "branch_not_taken, reconverge, local, reduce; got '" + std::string(t) + "'");
    } else if (t.rfind("local=", 0) == 0) {
      const auto a = schedule::parse_local_token(t.substr(6));
      if (!a) fail("local=: expected KIND BYTES (+OFFSET | tTABLE) [@DISTANCE], e.g. local=L4+52@20; got '" +
                   std::string(t) + "'");
      local = *a;
    } else if (t.rfind("flop=", 0) == 0) {
      i64 flop = 0;
      if (!parse_num(t.substr(5), flop) || flop <= 0 || flop > kMaxInstrBytes)
        fail("flop=: expected an integer 1.." + std::to_string(kMaxInstrBytes) + ", got '" + std::string(t) + "'");
      in.flop = static_cast<std::int32_t>(flop);
    } else {
      break;
    }
  }
  i64 bytes = 0;
  if (!pipe_ok || tok.size() < 3 || tok.size() > first_source + schedule::Instr::kMaxSources ||
      !parse_num(tok[2], bytes) || bytes < 0 || bytes > kMaxInstrBytes)
    fail("expected 'i <tensor|fma|alu|mufu|shfl|smem|global|barrier> <bytes 0.." + std::to_string(kMaxInstrBytes) +
         "> [op=<op>] [flop=<n>] [local=<access>] [<source> ...]' with at most " +
         std::to_string(schedule::Instr::kMaxSources) + " sources");
  if ((in.op == schedule::Op::wgmma) != (in.flop > 0)) fail("a wgmma (op=wgmma) and only it has flop=<n>");
  if (local && in.op != schedule::Op::local) fail("local=<access> belongs to an op=local instruction");
  if (local) progs[static_cast<size_t>(open_program_)].locals.push_back(*local);
  in.bytes = static_cast<std::int32_t>(bytes);
  for (size_t i = first_source; i < tok.size(); ++i) {
    i64 src = 0;
    if (!parse_num(tok[i], src) || src < 0 || src >= static_cast<i64>(code.size()))
      fail("a source is the index of an earlier instruction of the program (0.." +
           std::to_string(static_cast<i64>(code.size()) - 1) + "), got '" + std::string(tok[i]) + "'");
    in.source[in.sources++] = static_cast<std::int32_t>(src);
  }
  code.push_back(in);
}

const RangeKernel* TraceFileReader::next_kernel() {
  current_.reset();
  std::string line;
  if (!read_line(line)) return nullptr;
  auto tok = split(line);
  if (tok[0] != "kernel") fail("expected 'kernel <name> pass=.. grid=x,y,z threads=.. smem=.. regs=.. stages=..'");
  if (tok.size() != 8) fail("a kernel line has a name and 6 fields: pass= grid= threads= smem= regs= stages=");
  auto k = std::make_unique<FileKernel>();
  k->name_ = std::string(tok[1]);
  bool seen[6] = {};
  for (size_t i = 2; i < tok.size(); ++i) {
    const auto eq = tok[i].find('=');
    if (eq == std::string_view::npos) fail("expected key=value, got '" + std::string(tok[i]) + "'");
    const std::string_view key = tok[i].substr(0, eq), val = tok[i].substr(eq + 1);
    auto positive = [&](i64& out, bool allow_zero) {
      if (!parse_num(val, out) || out < (allow_zero ? 0 : 1))
        fail(std::string(key) + ": expected a " + (allow_zero ? "non-negative" : "positive") + " integer, got '" +
             std::string(val) + "'");
    };
    if (key == "pass") {
      if (val == "fwd") k->pass_ = workload::Pass::fwd;
      else if (val == "bwd") k->pass_ = workload::Pass::bwd;
      else fail("pass: expected fwd or bwd, got '" + std::string(val) + "'");
      seen[0] = true;
    } else if (key == "grid") {
      const auto c1 = val.find(','), c2 = val.find(',', c1 == std::string_view::npos ? c1 : c1 + 1);
      if (c1 == std::string_view::npos || c2 == std::string_view::npos ||
          !parse_num(val.substr(0, c1), k->grid_.x) || !parse_num(val.substr(c1 + 1, c2 - c1 - 1), k->grid_.y) ||
          !parse_num(val.substr(c2 + 1), k->grid_.z) || k->grid_.x < 1 || k->grid_.y < 1 || k->grid_.z < 1 ||
          k->grid_.x > kMaxGridX || k->grid_.y > kMaxGridYZ || k->grid_.z > kMaxGridYZ)
        fail("grid: expected three positive integers x,y,z within CUDA's limits (x <= " + std::to_string(kMaxGridX) +
             ", y, z <= " + std::to_string(kMaxGridYZ) + "), got '" + std::string(val) + "'");
      seen[1] = true;
    } else if (key == "threads") {
      positive(k->resources_.threads, false);
      seen[2] = true;
    } else if (key == "smem") {
      positive(k->resources_.smem_bytes, true);
      seen[3] = true;
    } else if (key == "regs") {
      positive(k->resources_.regs_per_thread, false);
      seen[4] = true;
    } else if (key == "stages") {
      i64 s = 0;
      positive(s, false);
      // The engine keeps a buffer per stage in every SM slot: bounded.
      if (s > kMaxStages)
        fail("stages: " + std::to_string(s) + " pipeline buffers per CTA; at most " + std::to_string(kMaxStages) +
             " are supported");
      k->stages_ = static_cast<int>(s);
      seen[5] = true;
    } else {
      fail("unknown kernel field '" + std::string(key) + "' (valid: pass, grid, threads, smem, regs, stages)");
    }
  }
  for (bool b : seen)
    if (!b) fail("a kernel line needs all of pass=, grid=, threads=, smem=, regs=, stages=");

  const i64 ctas = k->grid_.count();  // listed one by one: memory grows with the file, not the grid
  i64 cta = -1;  // linear index of the CTA being read
  bool in_step = false;
  i64 step_bytes = 0;
  std::vector<RangeAccess> loads, stores;
  auto close_step = [&] {
    if (!in_step) return;
    auto& s = k->steps.back();
    s.first_access = static_cast<i64>(k->accesses.size());
    s.loads = static_cast<int>(loads.size());
    s.stores = static_cast<int>(stores.size());
    k->accesses.insert(k->accesses.end(), loads.begin(), loads.end());
    k->accesses.insert(k->accesses.end(), stores.begin(), stores.end());
    loads.clear();
    stores.clear();
    in_step = false;
  };
  while (true) {
    if (!read_line(line)) fail("unexpected end of file inside kernel '" + k->name_ + "' (missing 'end')");
    tok = split(line);
    const std::string_view op = tok[0];
    if (op == "end") {
      close_step();
      if (cta + 1 != ctas)
        fail("kernel '" + k->name_ + "' lists " + std::to_string(cta + 1) + " CTAs; its grid has " +
             std::to_string(ctas));
      k->cta_first_step.push_back(static_cast<i64>(k->steps.size()));
      break;
    }
    if (op == "cta") {
      close_step();
      ++cta;
      if (cta >= ctas) fail("more CTAs than the grid holds (" + std::to_string(ctas) + ")");
      const i64 ex = cta % k->grid_.x, ey = (cta / k->grid_.x) % k->grid_.y, ez = cta / (k->grid_.x * k->grid_.y);
      i64 x = 0, y = 0, z = 0;
      if (tok.size() != 4 || !parse_num(tok[1], x) || !parse_num(tok[2], y) || !parse_num(tok[3], z) || x != ex ||
          y != ey || z != ez)
        fail("expected 'cta " + std::to_string(ex) + " " + std::to_string(ey) + " " + std::to_string(ez) +
             "' (CTAs are listed in launch order, x fastest)");
      k->cta_first_step.push_back(static_cast<i64>(k->steps.size()));
      continue;
    }
    if (op == "programs" || op == "program" || op == "i") {
      if (cta >= 0) fail("'" + std::string(op) + "' after the kernel's first 'cta' line (programs come first)");
      read_program_record(tok, *k);
      continue;
    }
    if (cta < 0) fail("'" + std::string(op) + "' before the kernel's first 'cta' line");
    if (op == "s") {
      close_step();
      FileKernel::StepRec s;
      if ((tok.size() != 4 && tok.size() != 5) || !parse_num(tok[1], s.compute.tensor_flops) ||
          !parse_num(tok[2], s.compute.fp32_ops) || !parse_num(tok[3], s.compute.sfu_ops) ||
          s.compute.tensor_flops < 0 || s.compute.fp32_ops < 0 || s.compute.sfu_ops < 0)
        fail("expected 's <tensor_flops> <fp32_ops> <sfu_ops> [<program>]' with non-negative integers");
      if (tok.size() == 5) {
        if (!parse_num(tok[4], s.compute.program) || !k->programs_ || !k->programs_->find(s.compute.program))
          fail("the step's program '" + std::string(tok[4]) + "' is not one of the kernel's (define it with " +
               "'program <id> <name>' after 'programs ...', before the first 'cta')");
      }
      k->steps.push_back(s);
      in_step = true;
      step_bytes = 0;
      continue;
    }
    if (op == "r" || op == "w" || op == "a") {
      if (!in_step) fail("an access line must follow an 's' line that starts its step");
      RangeAccess a;
      a.kind = op == "r" ? AccessKind::Read : op == "w" ? AccessKind::Write : AccessKind::ReduceAdd;
      int tensor = 0;
      if ((tok.size() != 4 && tok.size() != 6) || !parse_num(tok[1], tensor) || tensor < 0 ||
          tensor >= kMaxFileTensors || !parse_num(tok[2], a.addr, 16) || !parse_num(tok[3], a.row_bytes) ||
          a.row_bytes < 1)
        fail("expected '" + std::string(op) + " <tensor 0..255> <addr_hex> <row_bytes> [<rows> <stride>]' with " +
             "row_bytes >= 1");
      a.tensor = static_cast<TensorIndex>(tensor);
      if (tok.size() == 6 && (!parse_num(tok[4], a.rows) || !parse_num(tok[5], a.stride) || a.rows < 1 || a.stride < 0))
        fail("rows must be a positive integer and stride a non-negative integer");
      step_bytes += check_access(a, op);  // before normalising: rows x row_bytes may not fit 64 bits yet
      if (static_cast<u64>(step_bytes) > kAddressWindowBytes)
        fail("this step's accesses move more than " + std::to_string(kAddressWindowBytes >> 30) +
             " GiB, the whole address window (a step moves at most that)");
      a = normalised(a);
      (a.kind == AccessKind::Read ? loads : stores).push_back(a);
      continue;
    }
    fail("unknown record '" + std::string(op) + "' (valid: programs, program, i, cta, s, r, w, a, end)");
  }
  current_ = std::move(k);
  return current_.get();
}

}  // namespace iosim::trace
