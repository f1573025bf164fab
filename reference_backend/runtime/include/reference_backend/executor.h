/*
 * Runs a validated Graph. Independent of ExecuTorch: the backend maps the
 * method's tensors to plain pointers, gives the sizes of the inputs to
 * prepare() and calls run().
 *
 * Quantized ops (format 1.3) compute in integers: int8 x int8 products summed
 * in int32, requantized with a fixed-point multiplier and a rounding right
 * shift (docs/quantization.md). reference_backend/qmath.py is the Python
 * reference of the same arithmetic; a test compares them bit for bit.
 *
 * Sizes: the arena and the element counts of a call are computed in checked
 * arithmetic (checked.h). The kernels index in 64 bits over shapes that
 * parse_graph validated the same way (each value at most 2^31 elements, every
 * conv2d output size recomputed in checked arithmetic), so no index wraps.
 */
#pragma once

#include <reference_backend/graph.h>

#include <string>
#include <vector>

namespace reference_backend {

/// round-half-up((acc * multiplier) / 2^shift), acc saturated to int32 first.
int32_t requantize(int64_t acc, int32_t multiplier, int32_t shift);

class Executor {
 public:
  /// Takes ownership of a graph that parse_graph accepted, with
  /// graph.named_data resolved (one pointer per graph.named entry), and
  /// allocates the buffers of its intermediate values once, for the upper
  /// bounds of dynamic dimensions. Named data is read in place: it must
  /// outlive the Executor.
  explicit Executor(Graph graph);

  const Graph& graph() const { return graph_; }

  /// Sets the sizes of the next run: input_dims[i] holds graph.inputs[i]'s
  /// rank sizes. Static dimensions must equal the declared size, dynamic ones
  /// be at most their bound. False, with `error` naming the input, the
  /// dimension and the bound, otherwise (then run() must not be called).
  bool prepare(const uint32_t* const* input_dims, std::string& error);

  /// The shape value `id` has in the run prepare() set up (before any
  /// prepare(): the declared shapes).
  const Value& shape(uint32_t id) const { return shapes_[id]; }

  /// inputs[i] / outputs[i] point at graph.inputs[i] / graph.outputs[i],
  /// with the shapes of the last prepare() (shape(graph.outputs[i]) for the
  /// outputs). Not safe to call concurrently on the same Executor
  /// (intermediates are shared); separate Executors are.
  void run(const void* const* inputs, void* const* outputs);

 private:
  Graph graph_;
  std::vector<uint64_t> arena_;  // 8-byte words
  std::vector<uint64_t> arena_offset_;  // per value, in bytes; UINT64_MAX if not in arena
  std::vector<uint8_t*> slots_;  // per value, rebuilt by run()
  std::vector<Value> shapes_;  // per value: its shape in this run
};

}  // namespace reference_backend
