#include <reference_backend/graph.h>

#include <backend_kit/header.h>

#include <cstdarg>
#include <cstring>
#include <set>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "constants are copied as little-endian floats; add a byte swap for this target"
#endif

namespace reference_backend {
namespace {

using Reader = backend_kit::LittleEndianReader;

// Payload layout (docs/blob-header.md, "Payload, blob format 1.x").
constexpr size_t kPayloadHeaderSize = 24;  // u32 values, inputs, outputs, ops; u64 constant bytes
constexpr size_t kConstantBytesOffset = 16;  // of the u64 constant_bytes in the payload header
constexpr size_t kNamedHeaderSize = 8;  // format 1.2: u32 num_named, u32 table bytes
constexpr size_t kNamedEntrySize = 16;  // u64 nbytes, u16 key length, u16 file length, u32 0
constexpr size_t kValueRecordSize = 48;
constexpr size_t kValueDtypeAt = 1;  // byte offsets inside a value record
constexpr size_t kValueRankAt = 2;
constexpr size_t kValueDimsAt = 4;
constexpr size_t kValueConstantOffsetAt = 36;
constexpr size_t kOpRecordSizeV0 = 20;  // format 1.0: no alpha
constexpr size_t kOpRecordSizeV1 = 24;  // format 1.1 on: f32 alpha at the end
constexpr size_t kOpNumInputsAt = 1;  // byte offsets inside an op record
constexpr size_t kOpOutputAt = 4;
constexpr size_t kOpInputsAt = 8;
constexpr uint32_t kOpMaxInputs = 3;
constexpr uint8_t kMaxOpcode = static_cast<uint8_t>(OpCode::kLinear);
constexpr uint64_t kConstantAlignment = 16;  // the constant section starts at a multiple of 16
constexpr uint16_t kAlphaMinor = 1;  // first minor whose ops carry alpha
constexpr uint16_t kNamedDataMinor = 2;  // first minor with named data (value kind 2)
constexpr uint32_t kMaxCount = 1u << 20;  // values, inputs, outputs or ops
constexpr uint64_t kMaxNumel = 1ull << 31;
constexpr uint64_t kFloatBytes = 4;

/// "payload offset <offset>: <message>", the form of every parse error.
std::string at(size_t offset, const char* fmt, ...) BACKEND_KIT_PRINTF(2, 3);

std::string at(size_t offset, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string what = backend_kit::vformat(fmt, args);
  va_end(args);
  return backend_kit::format("payload offset %zu: %s", offset, what.c_str());
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
bool parse_named_table(Reader& c, uint64_t end, uint32_t count, Graph& g,
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
    c.skip(4);  // reserved
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
    // Keys and file names end up in log lines: printable ASCII only.
    bool printable = true;
    ref.key.resize(key_length);
    for (auto& ch : ref.key) {
      const uint8_t b = c.u8();
      printable = printable && b >= 0x20 && b < 0x7f;
      ch = static_cast<char>(b);
    }
    ref.file.resize(file_length);
    for (auto& ch : ref.file) {
      const uint8_t b = c.u8();
      printable = printable && b >= 0x20 && b < 0x7f && b != '/' && b != '\\';
      ch = static_cast<char>(b);
    }
    if (!printable) {
      error = at(rec + kNamedEntrySize, "named-data entry %u has a control character or a byte "
                 "that is not printable ASCII in its key or file name, or a path separator in its file name", i);
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

/// The payload header's counts and the layout they imply.
struct Layout {
  uint16_t minor = 0;
  bool has_named = false;
  size_t header_size = 0;
  size_t op_record_size = 0;
  uint32_t num_values = 0, num_inputs = 0, num_outputs = 0, num_ops = 0, num_named = 0;
  uint32_t named_table_bytes = 0;
  uint64_t constant_bytes = 0;
  uint64_t end_of_table = 0;  // where the named-data table ends
  uint64_t constants_start = 0;
  size_t outputs_at = 0;  // payload offset of the graph output ids
};

/// Step 1: the payload header, and that the counts describe exactly `size` bytes.
bool read_layout(Reader& c, uint16_t minor, Layout& l, std::string& error) {
  l.minor = minor;
  l.has_named = minor >= kNamedDataMinor;
  l.header_size = kPayloadHeaderSize + (l.has_named ? kNamedHeaderSize : 0);
  l.op_record_size = minor >= kAlphaMinor ? kOpRecordSizeV1 : kOpRecordSizeV0;
  if (!c.has(l.header_size)) {
    error = at(0, "truncated: %zu bytes, the payload header needs %zu", c.size(), l.header_size);
    return false;
  }
  l.num_values = c.u32();
  l.num_inputs = c.u32();
  l.num_outputs = c.u32();
  l.num_ops = c.u32();
  l.constant_bytes = c.u64();
  l.num_named = l.has_named ? c.u32() : 0;
  l.named_table_bytes = l.has_named ? c.u32() : 0;
  if (l.num_values > kMaxCount || l.num_inputs > kMaxCount || l.num_outputs > kMaxCount ||
      l.num_ops > kMaxCount || l.num_named > kMaxCount) {
    error = at(0, "implausible counts (values %u, inputs %u, outputs %u, ops %u, named %u)", l.num_values,
               l.num_inputs, l.num_outputs, l.num_ops, l.num_named);
    return false;
  }
  // 64-bit arithmetic: each term is below 2^32 * 48, so no overflow.
  const uint64_t end_of_ops = l.header_size + static_cast<uint64_t>(l.num_values) * kValueRecordSize +
      4ull * l.num_inputs + 4ull * l.num_outputs + static_cast<uint64_t>(l.num_ops) * l.op_record_size;
  l.end_of_table = end_of_ops + l.named_table_bytes;
  l.constants_start = (l.end_of_table + kConstantAlignment - 1) & ~(kConstantAlignment - 1);
  const size_t size = c.size();
  if (l.constants_start > size || l.constant_bytes != size - l.constants_start) {
    error = at(0, "size mismatch: the counts describe %llu bytes of records and "
               "%llu bytes of constants, the payload has %zu bytes",
               static_cast<unsigned long long>(l.constants_start),
               static_cast<unsigned long long>(l.constant_bytes), size);
    return false;
  }
  if (l.constant_bytes % kFloatBytes != 0) {
    error = at(kConstantBytesOffset, "constant section of %llu bytes is not a whole number of floats",
               static_cast<unsigned long long>(l.constant_bytes));
    return false;
  }
  return true;
}

/// Step 2: the value records (kind, dtype, shape, where constants are).
bool read_values(Reader& c, const Layout& l, Graph& g, std::string& error) {
  const uint8_t max_kind = static_cast<uint8_t>(l.has_named ? ValueKind::kNamed : ValueKind::kConstant);
  g.values.assign(l.num_values, Value{});
  for (uint32_t i = 0; i < l.num_values; ++i) {
    const size_t rec = c.pos();
    Value& v = g.values[i];
    const uint8_t kind = c.u8();
    const uint8_t dtype = c.u8();
    v.rank = c.u8();
    c.skip(1);  // reserved
    for (uint32_t d = 0; d < kMaxRank; ++d) v.dims[d] = c.u32();
    v.constant_offset = c.u64();
    c.skip(4);  // reserved
    if (kind > max_kind) {
      error = at(rec, "value %u has unknown kind %u (blob format 1.%u)", i, kind, static_cast<unsigned>(l.minor));
      return false;
    }
    v.kind = static_cast<ValueKind>(kind);
    if (dtype != kDtypeFloat32) {
      error = at(rec + kValueDtypeAt, "value %u has dtype %u; only float32 (6) is supported", i, dtype);
      return false;
    }
    if (v.rank > kMaxRank) {
      error = at(rec + kValueRankAt, "value %u has rank %u, at most %u is supported", i, v.rank, kMaxRank);
      return false;
    }
    v.numel = 1;
    for (uint32_t d = 0; d < v.rank; ++d) {
      v.numel *= v.dims[d];
      if (v.numel > kMaxNumel) {
        error = at(rec + kValueDimsAt, "value %u has more than 2^31 elements", i);
        return false;
      }
    }
    if (v.kind == ValueKind::kConstant &&
        (v.constant_offset % kFloatBytes != 0 || v.constant_offset > l.constant_bytes ||
         v.numel * kFloatBytes > l.constant_bytes - v.constant_offset)) {
      error = at(rec + kValueConstantOffsetAt, "constant value %u [offset %llu, %llu bytes] lies "
                 "outside the %llu-byte constant section", i,
                 static_cast<unsigned long long>(v.constant_offset),
                 static_cast<unsigned long long>(v.numel * kFloatBytes),
                 static_cast<unsigned long long>(l.constant_bytes));
      return false;
    }
  }
  return true;
}

/// Step 3: graph inputs (distinct activations, marked defined) and outputs (activations).
bool read_graph_io(Reader& c, Layout& l, Graph& g, std::vector<uint8_t>& defined, std::string& error) {
  g.inputs.resize(l.num_inputs);
  for (uint32_t i = 0; i < l.num_inputs; ++i) {
    const size_t rec = c.pos();
    const uint32_t id = c.u32();
    if (id >= l.num_values || g.values[id].kind != ValueKind::kActivation || defined[id]) {
      error = at(rec, "graph input %u names value %u, which is out of range, a "
                 "constant, or already an input", i, id);
      return false;
    }
    defined[id] = 1;
    g.inputs[i] = id;
  }
  g.outputs.resize(l.num_outputs);
  l.outputs_at = c.pos();
  for (uint32_t i = 0; i < l.num_outputs; ++i) {
    g.outputs[i] = c.u32();
    if (g.outputs[i] >= l.num_values || g.values[g.outputs[i]].kind != ValueKind::kActivation) {
      error = at(l.outputs_at + 4 * i, "graph output %u names value %u, which is "
                 "out of range or a constant", i, g.outputs[i]);
      return false;
    }
  }
  return true;
}

/// Step 4: the op records, in execution order, each reading defined values
/// and writing a new one of a consistent shape.
bool read_ops(Reader& c, const Layout& l, Graph& g, std::vector<uint8_t>& defined, std::string& error) {
  g.ops.resize(l.num_ops);
  for (uint32_t i = 0; i < l.num_ops; ++i) {
    const size_t rec = c.pos();
    Op& op = g.ops[i];
    const uint8_t code = c.u8();
    op.num_inputs = c.u8();
    c.skip(2);  // reserved
    op.output = c.u32();
    for (uint32_t k = 0; k < kOpMaxInputs; ++k) op.inputs[k] = c.u32();
    op.alpha = l.minor >= kAlphaMinor ? c.f32() : 1.0f;
    if (code < 1 || code > kMaxOpcode) {
      error = at(rec, "op %u has unknown opcode %u", i, code);
      return false;
    }
    op.code = static_cast<OpCode>(code);
    if (op.num_inputs != expected_inputs(op.code, op.num_inputs)) {
      error = at(rec + kOpNumInputsAt, "op %u (opcode %u) has %u inputs", i, code, op.num_inputs);
      return false;
    }
    for (uint32_t k = 0; k < op.num_inputs; ++k) {
      if (op.inputs[k] >= l.num_values || !defined[op.inputs[k]]) {
        error = at(rec + kOpInputsAt + 4 * k, "op %u input %u names value %u, which is out "
                   "of range or not yet computed", i, k, op.inputs[k]);
        return false;
      }
    }
    if (op.output >= l.num_values || defined[op.output]) {
      error = at(rec + kOpOutputAt, "op %u writes value %u, which is out of range, a "
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
  for (uint32_t i = 0; i < l.num_outputs; ++i) {
    if (!defined[g.outputs[i]]) {
      error = at(l.outputs_at + 4 * i, "graph output %u (value %u) is never computed", i, g.outputs[i]);
      return false;
    }
  }
  return true;
}

/// Step 6: every named value refers to a table entry of its size.
bool check_named_values(const Layout& l, const Graph& g, std::string& error) {
  for (uint32_t i = 0; i < l.num_values; ++i) {
    const Value& v = g.values[i];
    if (v.kind != ValueKind::kNamed) continue;
    const size_t rec = l.header_size + static_cast<size_t>(i) * kValueRecordSize;
    if (v.constant_offset >= g.named.size()) {
      error = at(rec + kValueConstantOffsetAt, "named value %u refers to entry %llu of a %zu-entry "
                 "named-data table", i, static_cast<unsigned long long>(v.constant_offset), g.named.size());
      return false;
    }
    const NamedDataRef& ref = g.named[v.constant_offset];
    if (v.numel * kFloatBytes != ref.nbytes) {
      error = at(rec, "named value %u has %llu float32 elements, its named data "
                 "'%.80s' has %llu bytes", i, static_cast<unsigned long long>(v.numel), ref.key.c_str(),
                 static_cast<unsigned long long>(ref.nbytes));
      return false;
    }
  }
  return true;
}

}  // namespace

bool parse_graph(const uint8_t* payload, size_t size, uint16_t minor, Graph& g, std::string& error) {
  Reader c(payload, size);
  Layout l;
  if (!read_layout(c, minor, l, error) || !read_values(c, l, g, error)) return false;
  // defined[i]: value i has data before the op being checked runs.
  std::vector<uint8_t> defined(l.num_values, 0);
  for (uint32_t i = 0; i < l.num_values; ++i) {
    defined[i] = g.values[i].kind != ValueKind::kActivation;
  }
  if (!read_graph_io(c, l, g, defined, error) || !read_ops(c, l, g, defined, error)) return false;
  // Step 5: the named-data table (format 1.2).
  if (!parse_named_table(c, l.end_of_table, l.num_named, g, error)) return false;
  if (!check_named_values(l, g, error)) return false;
  // Step 7: copy the constants out of the blob.
  g.constants.resize(l.constant_bytes / kFloatBytes);
  if (l.constant_bytes > 0) {
    std::memcpy(g.constants.data(), payload + l.constants_start, l.constant_bytes);
  }
  return true;
}

}  // namespace reference_backend
