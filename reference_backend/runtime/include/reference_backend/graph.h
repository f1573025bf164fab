/*
 * The payload that follows the blob header: a graph of float32 and (from
 * format 1.3) int8/int32 values, with static shapes or (1.3) dimensions
 * bounded above. Layout in docs/blob-header.md ("Payload, blob format 1.x");
 * the named-data table of format 1.2 in docs/named-data.md; the quantized
 * ops, conv2d and dynamic dimensions of 1.3 in docs/quantization.md. Parsing
 * validates everything execution relies on, so execute() needs no checks
 * beyond matching the caller's tensors against the declared shapes (or
 * bounds).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reference_backend {

constexpr uint32_t kMaxRank = 8;
constexpr uint8_t kDtypeFloat32 = 6;  // the value of ScalarType::Float
constexpr uint8_t kDtypeInt8 = 1;  // ScalarType::Char (format 1.3)
constexpr uint8_t kDtypeInt32 = 3;  // ScalarType::Int (format 1.3)

/// Bytes of one element of `dtype` (0 for an unknown dtype).
inline uint32_t dtype_size(uint8_t dtype) {
  return dtype == kDtypeFloat32 || dtype == kDtypeInt32 ? 4 : dtype == kDtypeInt8 ? 1 : 0;
}

enum class OpCode : uint8_t {
  kAdd = 1,
  kSub = 2,
  kMul = 3,
  kRelu = 4,
  kLinear = 5,
  // Format 1.3. Parameters (conv geometry, zero points, fixed-point
  // multipliers) are in the op's words of Graph::params; docs/quantization.md.
  kConv2d = 6,  // float32 NCHW: x, weight [O, C/groups, kh, kw], optional bias [O]
  kQuantize = 7,  // float32 -> int8: 1 / scale (f32 bits), zero point, qmin, qmax
  kDequantize = 8,  // int8 -> float32: scale (f32 bits), zero point
  kQLinear = 9,  // int8 x, int8 weight [N, K], optional int32 bias [N] -> int8
  kQConv2d = 10,  // int8 x, int8 weight, optional int32 bias -> int8
  kQAdd = 11,  // int8 + int8 -> int8 (same shape or broadcast)
  kQRelu = 12,  // int8 -> int8
  // Format 1.4: float32 operators (float_kernels.h); parameter words below.
  kDiv = 13,  // a / b (same shape or broadcast)
  kSigmoid = 14,
  kTanh = 15,
  kClamp = 16,  // clamp and hardtanh: lo (f32 bits), hi (f32 bits); -inf / inf when unbounded
  kMaxPool2d = 17,  // x [..., H, W]: kMaxPoolWords
  kAvgPool2d = 18,  // x [..., H, W]: kAvgPoolWords
  kSoftmax = 19,  // dim
  kMean = 20,  // mask of the reduced dimensions, keepdim
  kPermute = 21,  // one word per dimension: the input dimension of each output dimension
  kView = 22,  // one word per output dimension: its size
};

/// The operator's name in log lines ("conv2d", "qlinear").
const char* op_name(OpCode code);

/// Words of Graph::params each op of format 1.3 takes (per-channel ops add
/// two words per output channel: multipliers, then shifts).
constexpr uint32_t kConvGeometryWords = 7;  // stride h, w; padding h, w; dilation h, w; groups
constexpr uint32_t kQuantizeWords = 4;
constexpr uint32_t kDequantizeWords = 2;
constexpr uint32_t kQLinearFixedWords = 4;  // zp x, zp out, qmin, qmax (+ N multipliers, N shifts)
constexpr uint32_t kQConvFixedWords = kConvGeometryWords + 4;  // (+ O multipliers, O shifts)
constexpr uint32_t kQAddWords = 8;  // zp a, zp b, zp out, qmin, qmax, multiplier a, multiplier b, shift
constexpr uint32_t kQReluWords = 6;  // zp x, zp out, qmin, qmax, multiplier, shift

/// Words of the float32 operators of format 1.4.
constexpr uint32_t kClampWords = 2;
constexpr uint32_t kMaxPoolWords = 9;  // kernel h, w; stride h, w; padding h, w; dilation h, w; ceil_mode
constexpr uint32_t kAvgPoolWords = 9;  // kernel h, w; stride h, w; padding h, w; ceil_mode;
                                       // count_include_pad; divisor_override (0: none)
constexpr uint32_t kSoftmaxWords = 1;
constexpr uint32_t kMeanWords = 2;
constexpr int32_t kMaxPoolGeometry = 65535;  // largest kernel, stride, padding or dilation word

/// Longest key or file name in the named-data table.
constexpr uint32_t kMaxNameBytes = 255;

enum class ValueKind : uint8_t {
  kActivation = 0,  // a graph input, an op result or a graph output
  kConstant = 1,  // data stored in the payload's constant section
  kNamed = 2,  // format 1.2: data read from ExecuTorch named data at init
};

struct Value {
  ValueKind kind = ValueKind::kActivation;
  uint8_t dtype = kDtypeFloat32;
  uint32_t rank = 0;
  /// The size of each dimension; for a dynamic dimension its upper bound.
  uint32_t dims[kMaxRank] = {};
  /// Bit d set: dimension d is dynamic, any size up to dims[d] (format 1.3).
  uint8_t dynamic_mask = 0;
  uint64_t numel = 1;
  /// kConstant: byte offset into Graph::constants;
  /// kNamed: index into Graph::named (and Graph::named_data).
  uint64_t constant_offset = 0;
};

/// One row of the named-data table (format 1.2): a constant that the blob
/// does not hold, found at init under `key` in the program's named data.
struct NamedDataRef {
  std::string key;
  std::string file;  // external file that holds it ("weights.ptd"); empty: the .pte
  uint64_t nbytes = 0;  // float32 bytes, equal to numel * 4 of every value using it
};

struct Op {
  OpCode code = OpCode::kAdd;
  uint32_t num_inputs = 0;
  uint32_t inputs[3] = {};
  uint32_t output = 0;
  float alpha = 1.0f;  // add / sub: out = a + alpha * b (format 1.1; 1.0 implies 1)
  uint32_t param_offset = 0;  // format 1.3: first word of the op's parameters in Graph::params
  uint32_t param_count = 0;
};

struct Graph {
  std::vector<Value> values;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<Op> ops;
  /// The constant section (float32, int8 and int32 data at the offsets the
  /// values give), 4-byte aligned: read in place from the payload when the
  /// payload's copy is aligned (borrowed_constants: whoever holds the graph
  /// keeps the payload alive), else copied (owned_constants).
  const uint8_t* borrowed_constants = nullptr;
  std::vector<float> owned_constants;
  uint64_t constant_bytes = 0;
  const uint8_t* constants() const {
    return borrowed_constants != nullptr ? borrowed_constants
                                         : reinterpret_cast<const uint8_t*>(owned_constants.data());
  }
  /// Whether the graph reads its constants from the payload it was parsed from.
  bool borrows_payload() const { return borrowed_constants != nullptr; }
  /// Format 1.3: 32-bit parameter words of the ops (Op::param_offset).
  std::vector<int32_t> params;
  std::vector<NamedDataRef> named;  // format 1.2; empty before
  /// named_data[i]: where the data of named[i] is, 4-byte aligned. Not set by
  /// parse_graph: the caller resolves each key (the backend's init reads the
  /// NamedDataMap) before handing the graph to an Executor.
  std::vector<const float*> named_data;
};

/// Parses and validates a payload of blob format `1.minor`. On failure
/// returns false and sets `error` to a sentence naming the problem and its
/// byte offset in the payload.
bool parse_graph(const uint8_t* payload, size_t size, uint16_t minor, Graph& graph, std::string& error);

/// The shape `op` of `graph` computes from the shapes `inputs[k]` of its
/// operands (sets out.rank, out.dims, out.numel), in checked arithmetic
/// (checked.h). False, with `why` naming the field, when the operands do not
/// fit the op or a size does not fit its type. Used by parse_graph on the declared shapes
/// (bounds) and by Executor::prepare on the sizes of each call.
bool infer_shape(const Graph& graph, const Op& op, const Value* const* inputs, Value& out, std::string& why);

}  // namespace reference_backend
