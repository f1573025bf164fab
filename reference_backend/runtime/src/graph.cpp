#include <reference_backend/graph.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "constants are copied as little-endian floats; add a byte swap for this target"
#endif

namespace reference_backend {
namespace {

constexpr size_t kPayloadHeaderSize = 24;
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

}  // namespace

bool parse_graph(const uint8_t* payload, size_t size, uint16_t minor,
                 Graph& g, std::string& error) {
  Cursor c(payload, size);
  if (!c.has(kPayloadHeaderSize)) {
    error = at(0, "truncated: %zu bytes, the payload header needs %zu", size,
               kPayloadHeaderSize);
    return false;
  }
  const uint32_t num_values = c.u32();
  const uint32_t num_inputs = c.u32();
  const uint32_t num_outputs = c.u32();
  const uint32_t num_ops = c.u32();
  const uint64_t constant_bytes = c.u64();
  if (num_values > kMaxCount || num_inputs > kMaxCount ||
      num_outputs > kMaxCount || num_ops > kMaxCount) {
    error = at(0, "implausible counts (values %u, inputs %u, outputs %u, ops %u)",
               num_values, num_inputs, num_outputs, num_ops);
    return false;
  }
  const size_t op_record_size = minor >= 1 ? 24 : 20;
  // 64-bit arithmetic: each term is below 2^20 * 48, so no overflow.
  uint64_t end_of_ops = kPayloadHeaderSize +
      static_cast<uint64_t>(num_values) * kValueRecordSize +
      4ull * num_inputs + 4ull * num_outputs +
      static_cast<uint64_t>(num_ops) * op_record_size;
  uint64_t constants_start = (end_of_ops + 15) & ~uint64_t{15};
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
    if (kind > 1) {
      error = at(rec, "value %u has unknown kind %u", i, kind);
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
    defined[i] = g.values[i].kind == ValueKind::kConstant;
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

  g.constants.resize(constant_bytes / 4);
  if (constant_bytes > 0) {
    std::memcpy(g.constants.data(), payload + constants_start, constant_bytes);
  }
  return true;
}

}  // namespace reference_backend
