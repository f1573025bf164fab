// Defective runtimes for the suite's own tests that compute right in every stateless program but
// break a program's state across calls (C-STATE-1). Each forwards to the reference runtime compiled
// into the same library, unregistered (its blobs name REFERENCE_BACKEND_ID), and registers under
// STATE_DEFECT_ID alone:
//
//   ScratchesStateBackend  (STATE_DEFECT_SCRATCH) uses its input tensors as scratch once a call is
//       done (it zeroes them): ExecuTorch sets a method's inputs again before every call, so only a
//       tensor that lives across calls, a mutated buffer, is hurt: the state does not carry.
//   BindsOnceBackend       (STATE_DEFECT_BIND_ONCE) binds the input buffers of identical delegates
//       once, process-wide, at the first execute after their latest init, and reads its inputs from
//       those buffers: two loads of one program executed with the same inputs (RT-4) agree, but two
//       loaded methods with their own states share the first one's.
#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace executorch::runtime;

BackendInterface* inner() {
  return &reference_backend::backend_interface();
}

struct Handle {
  DelegateHandle* inner = nullptr;
  std::string blob;  // the processed bytes: identical delegates share their bindings
};

#ifdef STATE_DEFECT_BIND_ONCE
// blob -> the data of each input at the first execute after the blob's latest init
std::mutex bindings_mutex;
std::map<std::string, std::vector<void*>> bindings;
#endif

class StateDefectBackend final : public BackendInterface {
 public:
  bool is_available() const override { return inner() != nullptr && inner()->is_available(); }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    std::string blob(static_cast<const char*>(processed->data()), processed->size());
    Result<DelegateHandle*> made = inner()->init(context, processed, specs);
    if (!made.ok()) return made.error();
#ifdef STATE_DEFECT_BIND_ONCE
    {
      std::lock_guard<std::mutex> lock(bindings_mutex);
      bindings.erase(blob);  // bound again at the next execute
    }
#endif
    auto* handle = new Handle();
    handle->inner = *made;
    handle->blob = std::move(blob);
    return handle;
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* raw, Span<EValue*> args) const override {
    auto* handle = static_cast<Handle*>(raw);
    const size_t inputs = args.size() > 0 ? args.size() - 1 : 0;  // the reference delegates have one output
#ifdef STATE_DEFECT_BIND_ONCE
    {
      std::lock_guard<std::mutex> lock(bindings_mutex);
      auto found = bindings.find(handle->blob);
      if (found == bindings.end()) {
        std::vector<void*> bound;
        for (size_t i = 0; i < inputs; ++i) {
          bound.push_back(args[i] != nullptr && args[i]->isTensor() ? args[i]->toTensor().mutable_data_ptr()
                                                                    : nullptr);
        }
        bindings.emplace(handle->blob, std::move(bound));
      } else {
        for (size_t i = 0; i < inputs && i < found->second.size(); ++i) {
          if (args[i] == nullptr || !args[i]->isTensor() || found->second[i] == nullptr) continue;
          auto& t = args[i]->toTensor();
          if (t.mutable_data_ptr() != found->second[i]) {
            std::memcpy(t.mutable_data_ptr(), found->second[i], t.nbytes());  // the defect
          }
        }
      }
    }
#endif
    const Error error = inner()->execute(context, handle->inner, args);
#ifdef STATE_DEFECT_SCRATCH
    if (error == Error::Ok) {
      for (size_t i = 0; i < inputs; ++i) {  // the defect: the inputs are "free" now
        if (args[i] != nullptr && args[i]->isTensor()) {
          auto& t = args[i]->toTensor();
          std::memset(t.mutable_data_ptr(), 0, t.nbytes());
        }
      }
    }
#endif
    return error;
  }

  void destroy(DelegateHandle* raw) const override {
    auto* handle = static_cast<Handle*>(raw);
    inner()->destroy(handle->inner);
    delete handle;
  }
};

StateDefectBackend backend;
Backend registration{STATE_DEFECT_ID, &backend};
const Error registered = register_backend(registration);

}  // namespace
