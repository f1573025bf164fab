/*
 * The payload that follows the blob header: a static-shape float32 graph.
 * Layout in docs/blob-header.md ("Payload, blob format 1.x") and, for the
 * named-data table of format 1.2, docs/named-data.md. Parsing validates
 * everything execution relies on, so execute() needs no checks beyond
 * matching the caller's tensors against the declared shapes.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reference_backend {

constexpr uint32_t kMaxRank = 8;
constexpr uint8_t kDtypeFloat32 = 6;  // the value of ScalarType::Float

enum class OpCode : uint8_t {
  kAdd = 1,
  kSub = 2,
  kMul = 3,
  kRelu = 4,
  kLinear = 5,
};

/// Longest key or file name in the named-data table.
constexpr uint32_t kMaxNameBytes = 255;

enum class ValueKind : uint8_t {
  kActivation = 0,  // a graph input, an op result or a graph output
  kConstant = 1,  // data stored in the payload's constant section
  kNamed = 2,  // format 1.2: data read from ExecuTorch named data at init
};

struct Value {
  ValueKind kind = ValueKind::kActivation;
  uint32_t rank = 0;
  uint32_t dims[kMaxRank] = {};
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
};

struct Graph {
  std::vector<Value> values;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<Op> ops;
  std::vector<float> constants;  // copied out of the blob, 4-byte aligned
  std::vector<NamedDataRef> named;  // format 1.2; empty before
  /// named_data[i]: where the data of named[i] is, 4-byte aligned. Not set by
  /// parse_graph: the caller resolves each key (the backend's init reads the
  /// NamedDataMap) before handing the graph to an Executor.
  std::vector<const float*> named_data;
};

/// Parses and validates a payload of blob format `1.minor`. On failure
/// returns false and sets `error` to a sentence naming the problem and its
/// byte offset in the payload.
bool parse_graph(const uint8_t* payload, size_t size, uint16_t minor,
                 Graph& graph, std::string& error);

}  // namespace reference_backend
