#include <reference_backend/checked.h>
#include <reference_backend/float_ops.h>
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
constexpr size_t kParamsHeaderSize = 8;  // format 1.3: u32 num_params, u32 0
constexpr size_t kNamedEntrySize = 16;  // u64 nbytes, u16 key length, u16 file length, u32 0
constexpr size_t kValueRecordSize = 48;
constexpr size_t kValueDtypeAt = 1;  // byte offsets inside a value record
constexpr size_t kValueRankAt = 2;
constexpr size_t kValueDimsAt = 4;
constexpr size_t kValueConstantOffsetAt = 36;
constexpr size_t kOpRecordSizeV0 = 20;  // format 1.0: no alpha
constexpr size_t kOpRecordSizeV1 = 24;  // format 1.1 on: f32 alpha at the end
constexpr size_t kOpRecordSizeV3 = 32;  // format 1.3 on: + u32 param offset, u32 param count
constexpr size_t kOpNumInputsAt = 1;  // byte offsets inside an op record
constexpr size_t kOpOutputAt = 4;
constexpr size_t kOpInputsAt = 8;
constexpr uint32_t kOpMaxInputs = 3;
constexpr uint8_t kMaxOpcodeV0 = static_cast<uint8_t>(OpCode::kLinear);  // formats 1.0-1.2
constexpr uint8_t kMaxOpcodeV3 = static_cast<uint8_t>(OpCode::kQRelu);
constexpr uint8_t kMaxOpcodeV4 = static_cast<uint8_t>(OpCode::kView);  // format 1.4: float32 ops 13-22
constexpr uint64_t kConstantAlignment = 16;  // the constant section starts at a multiple of 16
constexpr uint16_t kAlphaMinor = 1;  // first minor whose ops carry alpha
constexpr uint16_t kNamedDataMinor = 2;  // first minor with named data (value kind 2)
constexpr uint16_t kQuantMinor = 3;  // first minor with int8/int32 values, parameters, dynamic dims
constexpr uint16_t kFloatOpsMinor = 4;  // first minor with opcodes 13 to 22 (float_ops.h)
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

uint32_t expected_inputs(OpCode code, uint32_t given) {
  switch (code) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
    case OpCode::kDiv:
    case OpCode::kQAdd: return 2;
    case OpCode::kRelu:
    case OpCode::kQuantize:
    case OpCode::kDequantize:
    case OpCode::kQRelu:
    case OpCode::kSigmoid:
    case OpCode::kTanh:
    case OpCode::kClamp:
    case OpCode::kMaxPool2d:
    case OpCode::kAvgPool2d:
    case OpCode::kSoftmax:
    case OpCode::kMean:
    case OpCode::kPermute:
    case OpCode::kView: return 1;
    case OpCode::kLinear:
    case OpCode::kConv2d:
    case OpCode::kQLinear:
    case OpCode::kQConv2d: return given == 3 ? 3 : 2;
  }
  return 0;
}

/// The dtypes an op reads (operand k) and writes.
bool check_op_dtypes(const Graph& g, const Op& op, std::string& why) {
  uint8_t in = kDtypeFloat32, out = kDtypeFloat32, bias = kDtypeFloat32;
  switch (op.code) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
    case OpCode::kRelu:
    case OpCode::kLinear:
    case OpCode::kConv2d: break;
    case OpCode::kQuantize: out = kDtypeInt8; break;
    case OpCode::kDequantize: in = kDtypeInt8; break;
    case OpCode::kQLinear:
    case OpCode::kQConv2d:
      in = out = kDtypeInt8;
      bias = kDtypeInt32;
      break;
    case OpCode::kQAdd:
    case OpCode::kQRelu: in = out = kDtypeInt8; break;
    default: break;  // format 1.4's operators (float_ops.h) are float32 only
  }
  for (uint32_t k = 0; k < op.num_inputs; ++k) {
    const uint8_t want = k == 2 ? bias : in;
    if (g.values[op.inputs[k]].dtype != want) {
      why = backend_kit::format("operand %u has dtype %u, the op reads dtype %u", k,
                                static_cast<unsigned>(g.values[op.inputs[k]].dtype),
                                static_cast<unsigned>(want));
      return false;
    }
  }
  if (g.values[op.output].dtype != out) {
    why = backend_kit::format("its result has dtype %u, the op writes dtype %u",
                              static_cast<unsigned>(g.values[op.output].dtype), static_cast<unsigned>(out));
    return false;
  }
  return true;
}

/// out = the NumPy broadcast of a and b; false if they do not broadcast.
bool broadcast_shape(const Value& a, const Value& b, Value& out) {
  const uint32_t rank = a.rank > b.rank ? a.rank : b.rank;
  out.rank = rank;
  for (uint32_t i = 0; i < rank; ++i) {
    const uint32_t da = i < a.rank ? a.dims[a.rank - 1 - i] : 1;
    const uint32_t db = i < b.rank ? b.dims[b.rank - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out.dims[rank - 1 - i] = da == 1 ? db : da;
  }
  return true;
}

/// One spatial output size of a convolution, (in + 2 * pad - span) / stride + 1
/// with span = dil * (k - 1) + 1, in checked arithmetic. False, with `why`
/// naming the dimension ("height", "width"), for a zero-sized kernel (the
/// span would wrap to 0), an empty output or one that does not fit 32 bits.
bool conv_out(Size in, Size k, Size stride, Size pad, Size dil, const char* which, uint32_t& out,
              std::string& why) {
  if (k.value() == 0) {
    why = backend_kit::format("conv2d kernel %s is 0 (weight dimension %s)", which,
                              which[0] == 'h' ? "2" : "3");
    return false;
  }
  const Size span = dil * (k - 1) + 1;
  const Size padded = in + pad * 2;
  if (stride.value() == 0 || !span.ok() || !padded.ok() || padded.value() < span.value()) {
    why = backend_kit::format(
        "conv2d output %s would be empty (kernel %s %llu, dilation %llu: larger than the padded input "
        "%llu, or stride 0)",
        which, which, static_cast<unsigned long long>(k.value()),
        static_cast<unsigned long long>(dil.value()), static_cast<unsigned long long>(padded.value()));
    return false;
  }
  const Size size = (padded - span) / stride + 1;
  if (!size.to_u32(out)) {
    why = backend_kit::format("conv2d output %s is %llu, more than a 32-bit dimension holds", which,
                              static_cast<unsigned long long>(size.value()));
    return false;
  }
  return true;
}

}  // namespace

const char* op_name(OpCode code) {
  switch (code) {
    case OpCode::kAdd: return "add";
    case OpCode::kSub: return "sub";
    case OpCode::kMul: return "mul";
    case OpCode::kRelu: return "relu";
    case OpCode::kLinear: return "linear";
    case OpCode::kConv2d: return "conv2d";
    case OpCode::kQuantize: return "quantize";
    case OpCode::kDequantize: return "dequantize";
    case OpCode::kQLinear: return "qlinear";
    case OpCode::kQConv2d: return "qconv2d";
    case OpCode::kQAdd: return "qadd";
    case OpCode::kQRelu: return "qrelu";
    case OpCode::kDiv: return "div";
    case OpCode::kSigmoid: return "sigmoid";
    case OpCode::kTanh: return "tanh";
    case OpCode::kClamp: return "clamp";
    case OpCode::kMaxPool2d: return "max_pool2d";
    case OpCode::kAvgPool2d: return "avg_pool2d";
    case OpCode::kSoftmax: return "softmax";
    case OpCode::kMean: return "mean";
    case OpCode::kPermute: return "permute";
    case OpCode::kView: return "view";
  }
  return "unknown";
}

bool infer_shape(const Graph& g, const Op& op, const Value* const* in, Value& out, std::string& why) {
  const Value& x = *in[0];
  out.rank = x.rank;
  for (uint32_t d = 0; d < x.rank; ++d) out.dims[d] = x.dims[d];
  switch (op.code) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
    case OpCode::kDiv:
    case OpCode::kQAdd:
      if (!broadcast_shape(x, *in[1], out)) {
        why = "the input shapes do not broadcast";
        return false;
      }
      break;
    case OpCode::kRelu:
    case OpCode::kQuantize:
    case OpCode::kDequantize:
    case OpCode::kQRelu: break;
    case OpCode::kLinear:
    case OpCode::kQLinear: {
      const Value& w = *in[1];
      if (x.rank < 1 || w.rank != 2 || x.dims[x.rank - 1] != w.dims[1]) {
        why = "linear needs x[..., K] and weight[N, K]";
        return false;
      }
      if (op.num_inputs == 3 && (in[2]->rank != 1 || in[2]->dims[0] != w.dims[0])) {
        why = "linear bias must be [N]";
        return false;
      }
      out.dims[out.rank - 1] = w.dims[0];
      break;
    }
    case OpCode::kConv2d:
    case OpCode::kQConv2d: {
      const Value& w = *in[1];
      const int32_t* p = g.params.data() + op.param_offset;
      const Size groups = word_size(p[6]);
      if (x.rank != 4 || w.rank != 4) {
        why = "conv2d needs x[N, C, H, W] and weight[O, C/groups, kh, kw]";
        return false;
      }
      const Size channels = Size(w.dims[1]) * groups;
      if (!groups.ok() || groups.value() == 0 || !channels.ok() || channels.value() != x.dims[1] ||
          w.dims[0] % groups.value() != 0) {
        why = backend_kit::format(
            "conv2d weight [%u, %u, ...] with groups %d does not fit x with %u channels (C = weight "
            "dimension 1 x groups, O divisible by groups)",
            w.dims[0], w.dims[1], p[6], x.dims[1]);
        return false;
      }
      if (op.num_inputs == 3 && (in[2]->rank != 1 || in[2]->dims[0] != w.dims[0])) {
        why = "conv2d bias must be [O]";
        return false;
      }
      out.dims[1] = w.dims[0];
      static const char* const kWhich[2] = {"height", "width"};
      for (uint32_t s = 0; s < 2; ++s) {
        if (!conv_out(x.dims[2 + s], w.dims[2 + s], word_size(p[s]), word_size(p[2 + s]), word_size(p[4 + s]),
                      kWhich[s], out.dims[2 + s], why)) {
          return false;
        }
      }
      break;
    }
    default:
      if (!infer_float_op_shape(op, g.params.data() + op.param_offset, x, out, why)) return false;
      break;
  }
  Size numel = 1;
  for (uint32_t d = 0; d < out.rank; ++d) numel *= out.dims[d];
  if (!numel.ok()) {
    why = "its result would have more than 2^64 elements";
    return false;
  }
  out.numel = numel.value();
  return true;
}

namespace {

/// Words of Graph::params the op needs (per-channel ops: two per output
/// channel, the weight's first dimension, on top of `fixed`).
Size expected_params(const Graph& g, const Op& op, uint32_t& fixed, uint32_t& channels) {
  fixed = 0;
  channels = 0;
  switch (op.code) {
    case OpCode::kConv2d: fixed = kConvGeometryWords; break;
    case OpCode::kQuantize: fixed = kQuantizeWords; break;
    case OpCode::kDequantize: fixed = kDequantizeWords; break;
    case OpCode::kQLinear:
      fixed = kQLinearFixedWords;
      channels = g.values[op.inputs[1]].dims[0];
      break;
    case OpCode::kQConv2d:
      fixed = kQConvFixedWords;
      channels = g.values[op.inputs[1]].dims[0];
      break;
    case OpCode::kQAdd: fixed = kQAddWords; break;
    case OpCode::kQRelu: fixed = kQReluWords; break;
    default: fixed = float_op_params(g, op); break;  // format 1.4 (float_ops.h)
  }
  return Size(fixed) + Size(channels) * 2;
}

float reinterpret_float(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

bool in_int8(int32_t v) {
  return v >= -128 && v <= 127;
}
bool valid_shift(int32_t s) {
  return s >= 1 && s <= 62;
}

/// The values of an op's parameters: zero points and clamps in int8, shifts
/// in [1, 62], multipliers non-negative, conv geometry positive.
bool check_params(const Graph& g, const Op& op, std::string& why) {
  const int32_t* p = g.params.data() + op.param_offset;
  const uint32_t n = op.param_count;
  switch (op.code) {
    case OpCode::kConv2d:
    case OpCode::kQConv2d:
      for (uint32_t i = 0; i < kConvGeometryWords; ++i) {
        const bool padding = i == 2 || i == 3;
        if (p[i] < (padding ? 0 : 1) || p[i] > 65535) {
          why = backend_kit::format("conv2d geometry word %u is %d", i, p[i]);
          return false;
        }
      }
      if (op.code == OpCode::kConv2d) return true;
      p += kConvGeometryWords;
      [[fallthrough]];
    case OpCode::kQLinear: {
      if (!in_int8(p[0]) || !in_int8(p[1]) || !in_int8(p[2]) || !in_int8(p[3]) || p[2] > p[3]) {
        why = "zero points and clamp bounds must be int8 with qmin <= qmax";
        return false;
      }
      const uint32_t channels =
          (n - (op.code == OpCode::kQLinear ? kQLinearFixedWords : kQConvFixedWords)) / 2;
      for (uint32_t c = 0; c < channels; ++c) {
        if (p[4 + c] < 0 || !valid_shift(p[4 + channels + c])) {
          why = backend_kit::format(
              "channel %u has multiplier %d and shift %d (multiplier >= 0, shift 1 to 62)", c, p[4 + c],
              p[4 + channels + c]);
          return false;
        }
      }
      return true;
    }
    case OpCode::kQuantize:
      if (!(reinterpret_float(p[0]) > 0.0f) || !in_int8(p[1]) || !in_int8(p[2]) || !in_int8(p[3]) ||
          p[2] > p[3]) {
        why = "quantize needs a positive inverse scale, an int8 zero point and int8 qmin <= qmax";
        return false;
      }
      return true;
    case OpCode::kDequantize:
      if (!(reinterpret_float(p[0]) > 0.0f) || !in_int8(p[1])) {
        why = "dequantize needs a positive scale and an int8 zero point";
        return false;
      }
      return true;
    case OpCode::kQAdd:
      if (!in_int8(p[0]) || !in_int8(p[1]) || !in_int8(p[2]) || !in_int8(p[3]) || !in_int8(p[4]) ||
          p[3] > p[4] || p[5] < 0 || p[6] < 0 || !valid_shift(p[7])) {
        why = "quantized add needs int8 zero points and bounds, non-negative multipliers and a shift of 1 to "
              "62";
        return false;
      }
      return true;
    case OpCode::kQRelu:
      if (!in_int8(p[0]) || !in_int8(p[1]) || !in_int8(p[2]) || !in_int8(p[3]) || p[2] > p[3] || p[4] < 0 ||
          !valid_shift(p[5])) {
        why = "quantized relu needs int8 zero points and bounds, a non-negative multiplier and a shift of 1 "
              "to 62";
        return false;
      }
      return true;
    default: return check_float_op_params(op, p, why);
  }
}

/// Reads the named-data table (format 1.2) from `c`, which stands at its
/// start; the table ends exactly at `end`.
bool parse_named_table(Reader& c, uint64_t end, uint32_t count, Graph& g, std::string& error) {
  const Size table = Size(end) - c.pos();
  if (!(Size(count) * kNamedEntrySize).at_most(table.ok() ? table.value() : 0)) {
    error = at(c.pos(), "a named-data table of %llu bytes cannot hold %u entries",
               static_cast<unsigned long long>(table.value()), count);
    return false;
  }
  g.named.assign(count, NamedDataRef{});
  std::set<std::string> keys;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t rec = c.pos();
    if (!(Size(rec) + kNamedEntrySize).at_most(end)) {
      error = at(rec, "named-data entry %u of %u runs past the end of the table", i, count);
      return false;
    }
    NamedDataRef& ref = g.named[i];
    ref.nbytes = c.u64();
    const uint32_t key_length = c.u16();
    const uint32_t file_length = c.u16();
    c.skip(4);  // reserved
    if (key_length == 0 || key_length > kMaxNameBytes || file_length > kMaxNameBytes) {
      error = at(rec + 8,
                 "named-data entry %u has a key of %u bytes and a file name "
                 "of %u bytes (key 1 to %u, file 0 to %u)",
                 i, key_length, file_length, kMaxNameBytes, kMaxNameBytes);
      return false;
    }
    const Size padded = (Size(key_length) + file_length).align_up(8);
    const Size next = Size(c.pos()) + padded;
    if (!next.at_most(end)) {
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
      error = at(rec + kNamedEntrySize,
                 "named-data entry %u has a control character or a byte "
                 "that is not printable ASCII in its key or file name, or a path separator in its file name",
                 i);
      return false;
    }
    c.seek(static_cast<size_t>(next.value()));  // at most end, within the payload
    if (ref.nbytes % kFloatBytes != 0 || ref.nbytes / kFloatBytes > kMaxNumel) {
      error = at(rec,
                 "named-data entry %u ('%.80s') has %llu bytes, not a float32 "
                 "tensor of at most 2^31 elements",
                 i, ref.key.c_str(), static_cast<unsigned long long>(ref.nbytes));
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
  bool has_params = false;
  size_t header_size = 0;
  size_t op_record_size = 0;
  uint32_t num_values = 0, num_inputs = 0, num_outputs = 0, num_ops = 0, num_named = 0;
  uint32_t named_table_bytes = 0;
  uint32_t num_params = 0;
  uint64_t constant_bytes = 0;
  uint64_t end_of_table = 0;  // where the named-data table ends
  uint64_t constants_start = 0;
  size_t outputs_at = 0;  // payload offset of the graph output ids
};

/// Step 1: the payload header, and that the counts describe exactly `size` bytes.
bool read_layout(Reader& c, uint16_t minor, Layout& l, std::string& error) {
  l.minor = minor;
  l.has_named = minor >= kNamedDataMinor;
  l.has_params = minor >= kQuantMinor;
  l.header_size =
      kPayloadHeaderSize + (l.has_named ? kNamedHeaderSize : 0) + (l.has_params ? kParamsHeaderSize : 0);
  l.op_record_size = l.has_params           ? kOpRecordSizeV3
                     : minor >= kAlphaMinor ? kOpRecordSizeV1
                                            : kOpRecordSizeV0;
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
  if (l.has_params) {
    l.num_params = c.u32();
    c.skip(4);  // reserved
  }
  if (l.num_values > kMaxCount || l.num_inputs > kMaxCount || l.num_outputs > kMaxCount ||
      l.num_ops > kMaxCount || l.num_named > kMaxCount || l.num_params > kMaxCount) {
    error = at(0, "implausible counts (values %u, inputs %u, outputs %u, ops %u, named %u)", l.num_values,
               l.num_inputs, l.num_outputs, l.num_ops, l.num_named);
    return false;
  }
  const Size end_of_ops = Size(l.header_size) + Size(l.num_values) * kValueRecordSize +
                          Size(l.num_inputs) * 4 + Size(l.num_outputs) * 4 +
                          Size(l.num_ops) * l.op_record_size + Size(l.num_params) * 4;
  const Size end_of_table = end_of_ops + l.named_table_bytes;
  const Size constants_start = end_of_table.align_up(kConstantAlignment);
  const size_t size = c.size();
  if (!constants_start.at_most(size) || l.constant_bytes != size - constants_start.value()) {
    error = at(0,
               "size mismatch: the counts describe %llu bytes of records and "
               "%llu bytes of constants, the payload has %zu bytes",
               static_cast<unsigned long long>(constants_start.value()),
               static_cast<unsigned long long>(l.constant_bytes), size);
    return false;
  }
  l.end_of_table = end_of_table.value();
  l.constants_start = constants_start.value();
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
    const uint8_t mask = c.u8();  // reserved before format 1.3
    for (uint32_t d = 0; d < kMaxRank; ++d) v.dims[d] = c.u32();
    v.constant_offset = c.u64();
    c.skip(4);  // reserved
    if (kind > max_kind) {
      error =
          at(rec, "value %u has unknown kind %u (blob format 1.%u)", i, kind, static_cast<unsigned>(l.minor));
      return false;
    }
    v.kind = static_cast<ValueKind>(kind);
    const bool quantized_dtype = dtype == kDtypeInt8 || dtype == kDtypeInt32;
    if (dtype != kDtypeFloat32 && !(l.has_params && quantized_dtype)) {
      error = at(rec + kValueDtypeAt, "value %u has dtype %u; blob format 1.%u supports %s", i, dtype,
                 static_cast<unsigned>(l.minor),
                 l.has_params ? "float32 (6), int8 (1) and int32 (3)" : "only float32 (6)");
      return false;
    }
    v.dtype = dtype;
    if (v.kind == ValueKind::kNamed && dtype != kDtypeFloat32) {
      error = at(rec + kValueDtypeAt, "named value %u has dtype %u; named data is float32", i, dtype);
      return false;
    }
    if (v.rank > kMaxRank) {
      error = at(rec + kValueRankAt, "value %u has rank %u, at most %u is supported", i, v.rank, kMaxRank);
      return false;
    }
    if (l.has_params) {
      v.dynamic_mask = mask;
      if ((v.rank < 8 && (mask >> v.rank) != 0) || (mask != 0 && v.kind != ValueKind::kActivation)) {
        error = at(rec + kValueRankAt + 1, "value %u (rank %u, %s) has dynamic-dimension mask 0x%02x", i,
                   v.rank, v.kind == ValueKind::kActivation ? "activation" : "constant", mask);
        return false;
      }
    }
    Size numel = 1;
    for (uint32_t d = 0; d < v.rank; ++d) numel *= v.dims[d];
    if (!numel.at_most(kMaxNumel)) {
      error = at(rec + kValueDimsAt, "value %u has more than 2^31 elements", i);
      return false;
    }
    v.numel = numel.value();
    const Size nbytes = numel * dtype_size(v.dtype);
    const Size end = Size(v.constant_offset) + nbytes;
    if (v.kind == ValueKind::kConstant &&
        (v.constant_offset % kFloatBytes != 0 || !end.at_most(l.constant_bytes))) {
      error = at(rec + kValueConstantOffsetAt,
                 "constant value %u [offset %llu, %llu bytes] lies "
                 "outside the %llu-byte constant section",
                 i, static_cast<unsigned long long>(v.constant_offset),
                 static_cast<unsigned long long>(nbytes.value()),
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
      error = at(rec,
                 "graph input %u names value %u, which is out of range, a "
                 "constant, or already an input",
                 i, id);
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
      error = at(l.outputs_at + 4 * i,
                 "graph output %u names value %u, which is "
                 "out of range or a constant",
                 i, g.outputs[i]);
      return false;
    }
  }
  return true;
}

/// Step 4: the op records, in execution order, each reading defined values
/// and writing a new one of a consistent shape.
bool read_ops(Reader& c, const Layout& l, Graph& g, std::vector<uint8_t>& defined,
              std::vector<size_t>& ops_at, std::string& error) {
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
    if (l.has_params) {
      op.param_offset = c.u32();
      op.param_count = c.u32();
    }
    const uint8_t max_opcode = l.minor >= kFloatOpsMinor ? kMaxOpcodeV4
                               : l.has_params            ? kMaxOpcodeV3
                                                         : kMaxOpcodeV0;
    if (code < 1 || code > max_opcode) {
      error = at(rec, "op %u has unknown opcode %u (blob format 1.%u has opcodes 1 to %u)", i, code,
                 static_cast<unsigned>(l.minor), static_cast<unsigned>(max_opcode));
      return false;
    }
    op.code = static_cast<OpCode>(code);
    if (op.num_inputs != expected_inputs(op.code, op.num_inputs)) {
      error = at(rec + kOpNumInputsAt, "op %u (%s) has %u inputs", i, op_name(op.code), op.num_inputs);
      return false;
    }
    for (uint32_t k = 0; k < op.num_inputs; ++k) {
      if (op.inputs[k] >= l.num_values || !defined[op.inputs[k]]) {
        error = at(rec + kOpInputsAt + 4 * k,
                   "op %u input %u names value %u, which is out "
                   "of range or not yet computed",
                   i, k, op.inputs[k]);
        return false;
      }
    }
    if (op.output >= l.num_values || defined[op.output]) {
      error = at(rec + kOpOutputAt,
                 "op %u writes value %u, which is out of range, a "
                 "constant, an input or already written",
                 i, op.output);
      return false;
    }
    std::string why;
    if (!check_op_dtypes(g, op, why)) {
      error = at(rec, "op %u (%s): %s", i, op_name(op.code), why.c_str());
      return false;
    }
    uint32_t fixed = 0, channels = 0;
    const Size want = expected_params(g, op, fixed, channels);
    const Size end = Size(op.param_offset) + op.param_count;
    if (!want.ok() || op.param_count != want.value() || !end.at_most(l.num_params)) {
      error = at(rec,
                 "op %u (%s) has parameter words [%u, +%u) of the %u there are; it takes %llu (%u fixed + 2 "
                 "per output channel, %u output channels)",
                 i, op_name(op.code), op.param_offset, op.param_count, l.num_params,
                 static_cast<unsigned long long>(want.value()), fixed, channels);
      return false;
    }
    ops_at.push_back(rec);
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

/// Step 5 (format 1.3): the parameter words, then each op's parameters and
/// the shape it computes from its operands' shapes (bounds, for dynamic
/// dimensions), which must be the shape its result declares.
bool read_params_and_check_ops(Reader& c, const Layout& l, Graph& g, const std::vector<size_t>& ops_at,
                               std::string& error) {
  const size_t params_at = c.pos();
  g.params.resize(l.num_params);
  for (uint32_t i = 0; i < l.num_params; ++i) g.params[i] = static_cast<int32_t>(c.u32());
  for (uint32_t i = 0; i < l.num_ops; ++i) {
    const Op& op = g.ops[i];
    std::string why;
    if (!check_params(g, op, why)) {
      error = at(params_at + 4 * static_cast<size_t>(op.param_offset), "op %u (%s): %s", i, op_name(op.code),
                 why.c_str());
      return false;
    }
    const Value* in[kOpMaxInputs] = {};
    for (uint32_t k = 0; k < op.num_inputs; ++k) in[k] = &g.values[op.inputs[k]];
    Value inferred;
    if (!infer_shape(g, op, in, inferred, why)) {
      error = at(ops_at[i], "op %u (%s): %s", i, op_name(op.code), why.c_str());
      return false;
    }
    if (!same_shape(inferred, g.values[op.output])) {
      error = at(ops_at[i], "op %u (%s): its result declares a shape other than the one its operands give", i,
                 op_name(op.code));
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
      error = at(rec + kValueConstantOffsetAt,
                 "named value %u refers to entry %llu of a %zu-entry "
                 "named-data table",
                 i, static_cast<unsigned long long>(v.constant_offset), g.named.size());
      return false;
    }
    const NamedDataRef& ref = g.named[v.constant_offset];
    const Size nbytes = Size(v.numel) * kFloatBytes;
    if (!nbytes.ok() || nbytes.value() != ref.nbytes) {
      error = at(rec,
                 "named value %u has %llu float32 elements, its named data "
                 "'%.80s' has %llu bytes",
                 i, static_cast<unsigned long long>(v.numel), ref.key.c_str(),
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
  std::vector<size_t> ops_at;
  if (!read_graph_io(c, l, g, defined, error) || !read_ops(c, l, g, defined, ops_at, error)) return false;
  if (!read_params_and_check_ops(c, l, g, ops_at, error)) return false;
  // Step 5b: the named-data table (format 1.2).
  if (!parse_named_table(c, l.end_of_table, l.num_named, g, error)) return false;
  if (!check_named_values(l, g, error)) return false;
  // Step 7: the constants, in place when aligned (a mapped program's
  // segments are), else copied: a 512 MiB weight need not be copied to load.
  g.constant_bytes = l.constant_bytes;
  const uint8_t* section = payload + l.constants_start;
  if (l.constant_bytes > 0 && reinterpret_cast<uintptr_t>(section) % alignof(float) == 0) {
    g.borrowed_constants = section;
  } else if (l.constant_bytes > 0) {
    g.owned_constants.resize(l.constant_bytes / kFloatBytes);
    std::memcpy(g.owned_constants.data(), section, l.constant_bytes);
  }
  return true;
}

}  // namespace reference_backend
