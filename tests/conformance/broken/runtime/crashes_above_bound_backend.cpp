// A defective runtime for the suite's own tests: it trusts the sizes it is
// given. On an input whose dynamic dimension is above the bound the blob
// declares, it "copies the input into its buffer planned for the bound" and
// dies with SIGSEGV (raised deterministically, so the test does not depend on
// what an overflow happens to hit). Within the bounds it forwards to the
// reference runtime compiled into the same library, unregistered (its blobs
// name the id "CrashesAboveBoundInner"). The suite must report the crash as DYN-2's
// `crashed` result, never as a dead run.
#include <reference_backend/graph.h>
#include <reference_backend/versions.h>

#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <csignal>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace executorch::runtime;
using reference_backend::Value;

BackendInterface* inner() {
  return &reference_backend::backend_interface();
}

struct Handle {
  DelegateHandle* inner = nullptr;
  std::vector<Value> inputs;  // the declared inputs: sizes, or bounds of dynamic dimensions
};

class CrashesAboveBoundBackend final : public BackendInterface {
 public:
  bool is_available() const override { return inner() != nullptr && inner()->is_available(); }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    // Read the declared inputs before the inner runtime frees the blob.
    const auto* blob = static_cast<const uint8_t*>(processed->data());
    auto j = reference_backend::judge_blob(blob, processed->size(), reference_backend::runtime_versions());
    reference_backend::Graph graph;
    std::string error;
    const bool parsed = j.verdict != reference_backend::Verdict::kInvalid &&
                        reference_backend::parse_graph(blob + j.header.header_length, j.header.payload_size,
                                                       j.header.blob_format_minor, graph, error);
    Result<DelegateHandle*> made = inner()->init(context, processed, specs);
    if (!made.ok()) return made.error();
    auto* handle = new Handle();
    handle->inner = *made;
    if (parsed) {
      for (uint32_t id : graph.inputs) handle->inputs.push_back(graph.values[id]);
    }
    return handle;
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* raw, Span<EValue*> args) const override {
    auto* handle = static_cast<Handle*>(raw);
    for (size_t i = 0; i < handle->inputs.size() && i < args.size(); ++i) {
      const Value& declared = handle->inputs[i];
      if (args[i] == nullptr || !args[i]->isTensor()) continue;
      const auto& t = args[i]->toTensor();
      for (uint32_t d = 0; d < declared.rank && d < static_cast<uint32_t>(t.dim()); ++d) {
        if (static_cast<uint64_t>(t.size(d)) > declared.dims[d]) {
          // The defect: no check, the copy runs past the buffer planned for the bound.
          ET_LOG(Error,
                 "CrashesAboveBoundBackend: copying input %zu (dimension %u is %d) into its buffer for %u", i,
                 d, static_cast<int>(t.size(d)), declared.dims[d]);
          std::raise(SIGSEGV);
        }
      }
    }
    return inner()->execute(context, handle->inner, args);
  }

  void destroy(DelegateHandle* raw) const override {
    auto* handle = static_cast<Handle*>(raw);
    inner()->destroy(handle->inner);
    delete handle;
  }
};

CrashesAboveBoundBackend backend;
Backend registration{"CrashesAboveBoundBackend", &backend};
const Error registered = register_backend(registration);

}  // namespace
