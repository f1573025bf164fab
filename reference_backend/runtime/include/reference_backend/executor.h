/*
 * Runs a validated Graph. Independent of ExecuTorch: the backend maps the
 * method's tensors to plain float pointers and calls run().
 */
#pragma once

#include <reference_backend/graph.h>

#include <vector>

namespace reference_backend {

class Executor {
 public:
  /// Takes ownership of a graph that parse_graph accepted, with
  /// graph.named_data resolved (one pointer per graph.named entry), and
  /// allocates the buffers of its intermediate values once. Named data is
  /// read in place: it must outlive the Executor.
  explicit Executor(Graph graph);

  const Graph& graph() const { return graph_; }

  /// inputs[i] / outputs[i] point at graph.inputs[i] / graph.outputs[i]
  /// with the shapes the graph declares. Not safe to call concurrently on
  /// the same Executor (intermediates are shared); separate Executors are.
  void run(const float* const* inputs, float* const* outputs);

 private:
  Graph graph_;
  std::vector<float> arena_;
  std::vector<uint64_t> arena_offset_;  // per value; UINT64_MAX if not in arena
  std::vector<float*> slots_;  // per value, rebuilt by run()
};

}  // namespace reference_backend
