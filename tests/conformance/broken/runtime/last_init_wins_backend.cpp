// A defective runtime for the suite's own tests that computes right with one loaded method but breaks a
// program of several methods (C-MTH-1): it keeps one current graph for the whole process, as a device
// that holds one model at a time, and every init makes its own graph the current one. Each handle
// executes the current graph: a method loaded alone is right, but with `prefill` and `decode` loaded
// from one program, `prefill` runs `decode`'s graph. It forwards to the reference runtime compiled into
// the same library, unregistered (its blobs name REFERENCE_BACKEND_ID), and registers under
// "LastInitWinsBackend" alone.
#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>

#include <mutex>

namespace {

using namespace executorch::runtime;

BackendInterface* inner() {
  return &reference_backend::backend_interface();
}

std::mutex current_mutex;
DelegateHandle* current = nullptr;  // the inner handle of the latest init still alive

class LastInitWinsBackend final : public BackendInterface {
 public:
  bool is_available() const override { return inner() != nullptr && inner()->is_available(); }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    Result<DelegateHandle*> made = inner()->init(context, processed, specs);
    if (!made.ok()) return made.error();
    std::lock_guard<std::mutex> lock(current_mutex);
    current = *made;  // the defect: the latest init replaces the graph every handle runs
    return *made;
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle, Span<EValue*> args) const override {
    DelegateHandle* run = handle;
    {
      std::lock_guard<std::mutex> lock(current_mutex);
      if (current != nullptr) run = current;
    }
    return inner()->execute(context, run, args);
  }

  void destroy(DelegateHandle* handle) const override {
    {
      std::lock_guard<std::mutex> lock(current_mutex);
      if (current == handle) current = nullptr;
    }
    inner()->destroy(handle);
  }
};

LastInitWinsBackend backend;
Backend registration{"LastInitWinsBackend", &backend};
const Error registered = register_backend(registration);

}  // namespace
