#include <reference_backend/graph.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <set>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "constants are copied as little-endian floats; add a byte swap for this target"
#endif

namespace reference_backend {
namespace {

constexpr size_t kPayloadHeaderSize = 24;
constexpr size_t kNamedHeaderSize = 8;  // format 1.2: u32 num_named, u32 table bytes
constexpr size_t kNamedEntrySize = 16;  // u64 nbytes, u16 key length, u16 file length, u32 0
constexpr uint16_t kNamedDataMinor = 2;
constexpr size_t kValueRecordSize = 48;
constexpr uint32_t kMaxCount = 1u << 20;  // values, inputs, outputs or ops
constexpr uint64_t kMaxNumel = 1ull << 31;

/// Bounds-checked little-endian reader over the payload.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool has(size_t n) const { return n <= size_ - pos_; }
  size_t pos() const { return pos_; }
  void seek(size_t pos) { pos_ = pos; }

  uint8_t u8() { return data_[pos_++]; }
  uint16_t u16() {
    uint16_t v = static_cast<uint16_t>(data_[pos_] | (data_[pos_ + 1] << 8));
    pos_ += 2;
    return v;
  }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | data_[pos_ + i];
    pos_ += 4;
    return v;
  }
  uint64_t u64() {
    uint64_t lo = u32();
    uint64_t hi = u32();
    return lo | (hi << 32);
  }
  float f32() {
    uint32_t bits = u32();
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

std::string at(size_t offset, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

std::string at(size_t offset, const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  char full[600];
  std::snprintf(full, sizeof(full), "payload offset %zu: %s", offset, buffer);
  return full;
}

bool same_shape(const Value& a, const Value& b) {
  if (a.rank != b.rank) return false;
  for (uint32_t i = 0; i < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

/// True when `out` is the broadcast of `a` and `b` (NumPy rules).
bool is_broadcast_of(const Value& out, const Value& a, const Value& b) {
  uint32_t rank = a.rank > b.rank ? a.rank : b.rank;
  if (out.rank != rank) return false;
  for (uint32_t i = 0; i < rank; ++i) {
    // i counts from the innermost dimension.
    uint32_t da = i < a.rank ? a.dims[a.rank - 1 - i] : 1;
    uint32_t db = i < b.rank ? b.dims[b.rank - 1 - i] : 1;
    uint32_t d = out.dims[rank - 1 - i];
    if (!((da == d || da == 1) && (db == d || db == 1) && (da == d || db == d))) {
      return false;
    }
  }
  return true;
}

bool check_op_shapes(const Graph& g, const Op& op, std::string& why) {
  const Value& out = g.values[op.output];
  switch (op.code) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
      if (!is_broadcast_of(out, g.values[op.inputs[0]], g.values[op.inputs[1]])) {
        why = "output shape is not the broadcast of the input shapes";
        return false;
      }
      return true;
    case OpCode::kRelu:
      if (!same_shape(out, g.values[op.inputs[0]])) {
        why = "relu output shape differs from its input";
        return false;
      }
      return true;
    case OpCode::kLinear: {
      const Value& x = g.values[op.inputs[0]];
      const Value& w = g.values[op.inputs[1]];
      if (x.rank < 1 || w.rank != 2 || x.dims[x.rank - 1] != w.dims[1]) {
        why = "linear needs x[..., K] and weight[N, K]";
        return false;
      }
      if (op.num_inputs == 3) {
        const Value& b = g.values[op.inputs[2]];
        if (b.rank != 1 || b.dims[0] != w.dims[0]) {
          why = "linear bias must be [N]";
          return false;
        }
      }
      if (out.rank != x.rank || out.dims[out.rank - 1] != w.dims[0]) {
        why = "linear output must be x[..., N]";
        return false;
      }
      for (uint32_t i = 0; i + 1 < x.rank; ++i) {
        if (out.dims[i] != x.dims[i]) {
          why = "linear output leading dimensions differ from x";
          return false;
        }
      }
      return true;
    }
  }
  why = "unknown op";
  return false;
}

uint32_t expected_inputs(OpCode code, uint32_t given) {
  switch (code) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
      return 2;
    case OpCode::kRelu:
      return 1;
    case OpCode::kLinear:
      return given == 3 ? 3 : 2;
  }
  return 0;
}

/// Reads the named-data table (format 1.2) from `c`, which stands at its
/// start; the table ends exactly at `end`.
bool parse_named_table(Cursor& c, uint64_t end, uint32_t count, Graph& g,
                       std::string& error) {
  if (count > (end - c.pos()) / kNamedEntrySize) {
    error = at(c.pos(), "a named-data table of %llu bytes cannot hold %u entries",
               static_cast<unsigned long long>(end - c.pos()), count);
    return false;
  }
  g.named.assign(count, NamedDataRef{});
  std::set<std::string> keys;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t rec = c.pos();
    if (end - rec < kNamedEntrySize) {
      error = at(rec, "named-data entry %u of %u runs past the end of the table", i,
                 count);
      return false;
    }
    NamedDataRef& ref = g.named[i];
    ref.nbytes = c.u64();
    const uint32_t key_length = c.u16();
    const uint32_t file_length = c.u16();
    c.u32();  // reserved
    if (key_length == 0 || key_length > kMaxNameBytes || file_length > kMaxNameBytes) {
      error = at(rec + 8, "named-data entry %u has a key of %u bytes and a file name "
                 "of %u bytes (key 1 to %u, file 0 to %u)", i, key_length,
                 file_length, kMaxNameBytes, kMaxNameBytes);
      return false;
    }
    const uint64_t padded = (key_length + file_length + 7ull) & ~7ull;
    if (end - c.pos() < padded) {
      error = at(rec, "named-data entry %u runs past the end of the table", i);
      return false;
    }
    // Keys and file names end up in log lines: no control characters.
    bool printable = true;
    ref.key.resize(key_length);
    for (auto& ch : ref.key) {
      const uint8_t b = c.u8();
      printable = printable && b >= 0x20 && b != 0x7f;
      ch = static_cast<char>(b);
    }
    ref.file.resize(file_length);
    for (auto& ch : ref.file) {
      const uint8_t b = c.u8();
      printable = printable && b >= 0x20 && b != 0x7f && b != '/' && b != '\\';
      ch = static_cast<char>(b);
    }
    if (!printable) {
      error = at(rec + kNamedEntrySize, "named-data entry %u has a control character "
                 "in its key or a control character or path separator in its file name", i);
      return false;
    }
    c.seek(rec + kNamedEntrySize + padded);
    if (ref.nbytes % 4 != 0 || ref.nbytes / 4 > kMaxNumel) {
      error = at(rec, "named-data entry %u ('%.80s') has %llu bytes, not a float32 "
                 "tensor of at most 2^31 elements", i, ref.key.c_str(),
                 static_cast<unsigned long long>(ref.nbytes));
      return false;
    }
    if (!keys.insert(ref.key).second) {
      error = at(rec, "named-data entry %u repeats the key '%.80s'", i, ref.key.c_str());
      return false;
    }
  }
  if (c.pos() != end) {
    error = at(c.pos(), "the named-data table has %llu bytes after its %u entries",
               static_cast<unsigned long long>(end - c.pos()), count);
    return false;
  }
  return true;
}

}  // namespace

bool parse_graph(const uint8_t* payload, size_t size, uint16_t minor,
                 Graph& g, std::string& error) {
  Cursor c(payload, size);
  const bool has_named = minor >= kNamedDataMinor;
  const size_t header_size = kPayloadHeaderSize + (has_named ? kNamedHeaderSize : 0);
  if (!c.has(header_size)) {
    error = at(0, "truncated: %zu bytes, the payload header needs %zu", size,
               header_size);
    return false;
  }
  const uint32_t num_values = c.u32();
  const uint32_t num_inputs = c.u32();
  const uint32_t num_outputs = c.u32();
  const uint32_t num_ops = c.u32();
  const uint64_t constant_bytes = c.u64();
  const uint32_t num_named = has_named ? c.u32() : 0;
  const uint32_t named_table_bytes = has_named ? c.u32() : 0;
  if (num_values > kMaxCount || num_inputs > kMaxCount ||
      num_outputs > kMaxCount || num_ops > kMaxCount || num_named > kMaxCount) {
    error = at(0, "implausible counts (values %u, inputs %u, outputs %u, ops %u, "
               "named %u)", num_values, num_inputs, num_outputs, num_ops, num_named);
    return false;
  }
  const size_t op_record_size = minor >= 1 ? 24 : 20;
  // 64-bit arithmetic: each term is below 2^32 * 48, so no overflow.
  const uint64_t end_of_ops = header_size +
      static_cast<uint64_t>(num_values) * kValueRecordSize +
      4ull * num_inputs + 4ull * num_outputs +
      static_cast<uint64_t>(num_ops) * op_record_size;
  const uint64_t end_of_table = end_of_ops + named_table_bytes;
  const uint64_t constants_start = (end_of_table + 15) & ~uint64_t{15};
  if (constants_start > size || constant_bytes != size - constants_start) {
    error = at(0, "size mismatch: the counts describe %llu bytes of records and "
               "%llu bytes of constants, the payload has %zu bytes",
               static_cast<unsigned long long>(constants_start),
               static_cast<unsigned long long>(constant_bytes), size);
    return false;
  }
  if (constant_bytes % 4 != 0) {
    error = at(16, "constant section of %llu bytes is not a whole number of floats",
               static_cast<unsigned long long>(constant_bytes));
    return false;
  }

  g.values.assign(num_values, Value{});
  for (uint32_t i = 0; i < num_values; ++i) {
    const size_t rec = c.pos();
    Value& v = g.values[i];
    const uint8_t kind = c.u8();
    const uint8_t dtype = c.u8();
    v.rank = c.u8();
    c.u8();  // reserved
    for (uint32_t d = 0; d < kMaxRank; ++d) v.dims[d] = c.u32();
    v.constant_offset = c.u64();
    c.u32();  // reserved
    if (kind > (has_named ? 2 : 1)) {
      error = at(rec, "value %u has unknown kind %u (blob format 1.%u)", i, kind,
                 static_cast<unsigned>(minor));
      return false;
    }
    v.kind = static_cast<ValueKind>(kind);
    if (dtype != kDtypeFloat32) {
      error = at(rec + 1, "value %u has dtype %u; only float32 (6) is supported",
                 i, dtype);
      return false;
    }
    if (v.rank > kMaxRank) {
      error = at(rec + 2, "value %u has rank %u, at most %u is supported", i,
                 v.rank, kMaxRank);
      return false;
    }
    v.numel = 1;
    for (uint32_t d = 0; d < v.rank; ++d) {
      v.numel *= v.dims[d];
      if (v.numel > kMaxNumel) {
        error = at(rec + 4, "value %u has more than 2^31 elements", i);
        return false;
      }
    }
    if (v.kind == ValueKind::kConstant &&
        (v.constant_offset % 4 != 0 || v.constant_offset > constant_bytes ||
         v.numel * 4 > constant_bytes - v.constant_offset)) {
      error = at(rec + 36, "constant value %u [offset %llu, %llu bytes] lies "
                 "outside the %llu-byte constant section", i,
                 static_cast<unsigned long long>(v.constant_offset),
                 static_cast<unsigned long long>(v.numel * 4),
                 static_cast<unsigned long long>(constant_bytes));
      return false;
    }
  }

  // defined[i]: value i has data before the op being checked runs.
  std::vector<uint8_t> defined(num_values, 0);
  for (uint32_t i = 0; i < num_values; ++i) {
    defined[i] = g.values[i].kind != ValueKind::kActivation;
  }
  g.inputs.resize(num_inputs);
  for (uint32_t i = 0; i < num_inputs; ++i) {
    const size_t rec = c.pos();
    const uint32_t id = c.u32();
    if (id >= num_values || g.values[id].kind != ValueKind::kActivation ||
        defined[id]) {
      error = at(rec, "graph input %u names value %u, which is out of range, a "
                 "constant, or already an input", i, id);
      return false;
    }
    defined[id] = 1;
    g.inputs[i] = id;
  }
  g.outputs.resize(num_outputs);
  const size_t outputs_at = c.pos();
  for (uint32_t i = 0; i < num_outputs; ++i) {
    g.outputs[i] = c.u32();
    if (g.outputs[i] >= num_values ||
        g.values[g.outputs[i]].kind != ValueKind::kActivation) {
      error = at(outputs_at + 4 * i, "graph output %u names value %u, which is "
                 "out of range or a constant", i, g.outputs[i]);
      return false;
    }
  }

  g.ops.resize(num_ops);
  for (uint32_t i = 0; i < num_ops; ++i) {
    const size_t rec = c.pos();
    Op& op = g.ops[i];
    const uint8_t code = c.u8();
    op.num_inputs = c.u8();
    c.u16();  // reserved
    op.output = c.u32();
    for (uint32_t k = 0; k < 3; ++k) op.inputs[k] = c.u32();
    op.alpha = minor >= 1 ? c.f32() : 1.0f;
    if (code < 1 || code > 5) {
      error = at(rec, "op %u has unknown opcode %u", i, code);
      return false;
    }
    op.code = static_cast<OpCode>(code);
    if (op.num_inputs != expected_inputs(op.code, op.num_inputs)) {
      error = at(rec + 1, "op %u (opcode %u) has %u inputs", i, code, op.num_inputs);
      return false;
    }
    for (uint32_t k = 0; k < op.num_inputs; ++k) {
      if (op.inputs[k] >= num_values || !defined[op.inputs[k]]) {
        error = at(rec + 8 + 4 * k, "op %u input %u names value %u, which is out "
                   "of range or not yet computed", i, k, op.inputs[k]);
        return false;
      }
    }
    if (op.output >= num_values || defined[op.output]) {
      error = at(rec + 4, "op %u writes value %u, which is out of range, a "
                 "constant, an input or already written", i, op.output);
      return false;
    }
    std::string why;
    if (!check_op_shapes(g, op, why)) {
      error = at(rec, "op %u (opcode %u): %s", i, code, why.c_str());
      return false;
    }
    defined[op.output] = 1;
  }
  for (uint32_t i = 0; i < num_outputs; ++i) {
    if (!defined[g.outputs[i]]) {
      error = at(outputs_at + 4 * i, "graph output %u (value %u) is never computed",
                 i, g.outputs[i]);
      return false;
    }
  }

  if (!parse_named_table(c, end_of_table, num_named, g, error)) return false;
  for (uint32_t i = 0; i < num_values; ++i) {
    const Value& v = g.values[i];
    if (v.kind != ValueKind::kNamed) continue;
    const size_t rec = header_size + static_cast<size_t>(i) * kValueRecordSize;
    if (v.constant_offset >= g.named.size()) {
      error = at(rec + 36, "named value %u refers to entry %llu of a %zu-entry "
                 "named-data table", i,
                 static_cast<unsigned long long>(v.constant_offset), g.named.size());
      return false;
    }
    const NamedDataRef& ref = g.named[v.constant_offset];
    if (v.numel * 4 != ref.nbytes) {
      error = at(rec, "named value %u has %llu float32 elements, its named data "
                 "'%.80s' has %llu bytes", i,
                 static_cast<unsigned long long>(v.numel), ref.key.c_str(),
                 static_cast<unsigned long long>(ref.nbytes));
      return false;
    }
  }

  g.constants.resize(constant_bytes / 4);
  if (constant_bytes > 0) {
    std::memcpy(g.constants.data(), payload + constants_start, constant_bytes);
  }
  return true;
}

}  // namespace reference_backend
