/*
 * backend_kit/adapter.h: the runtime half of a conformance adapter for a
 * backend that already has a payload format of its own (the AOT half is
 * backend_kit.adapter). Header-only; needs the ExecuTorch headers.
 *
 * HeaderAdapter is registered under the adapter's id. Its init() judges the
 * contract header (accept_blob) and hands the payload, the backend's own blob,
 * to the wrapped backend's init() with the same context (named data, runtime
 * allocator, the runtime specs given for the adapter's id) and compile specs;
 * execute(), destroy(), set_option() and get_option() go to the wrapped
 * backend as they are, with the wrapped backend's own handle. The wrapped
 * backend is found by its id in ExecuTorch's registry (get_backend_class),
 * so it may register before or after the adapter:
 *
 *   const backend_kit::HeaderAdapter adapter(kRuntime, "XnnpackBackend");
 *   const int registered = backend_kit::register_backend(kRuntime.backend_id,
 *       const_cast<backend_kit::HeaderAdapter*>(&adapter), BACKEND_KIT_EXECUTORCH_VERSION);
 */
#pragma once

#include <executorch/runtime/backend/interface.h>

#include <backend_kit/backend.h>

#include <atomic>

namespace backend_kit {

class HeaderAdapter : public executorch::runtime::BackendInterface {
 public:
  /// `versions.backend_id` is the adapter's id (the one in its blobs' headers);
  /// `wrapped_id` (a string that outlives the adapter) the backend that runs the payloads.
  HeaderAdapter(const RuntimeVersions& versions, const char* wrapped_id)
      : versions_(versions), wrapped_id_(wrapped_id) {}

  const RuntimeVersions& versions() const { return versions_; }
  const char* wrapped_id() const { return wrapped_id_; }

  /// The wrapped backend, or null while it is not registered (or when its id names this adapter).
  executorch::runtime::BackendInterface* wrapped() const {
    executorch::runtime::BackendInterface* found = wrapped_.load(std::memory_order_acquire);
    if (found == nullptr) {
      found = executorch::runtime::get_backend_class(wrapped_id_);
      if (found == this) return nullptr;
      if (found != nullptr) wrapped_.store(found, std::memory_order_release);
    }
    return found;
  }

  bool is_available() const override {
    executorch::runtime::BackendInterface* inner = wrapped();
    return inner != nullptr && inner->is_available();
  }

  executorch::runtime::Result<executorch::runtime::DelegateHandle*> init(
      executorch::runtime::BackendInitContext& context, executorch::runtime::FreeableBuffer* processed,
      executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs) const override {
    auto blob = accept_blob(*processed, versions_);
    if (!blob.ok()) return blob.error();
    executorch::runtime::BackendInterface* inner = wrapped();
    if (inner == nullptr) {
      BACKEND_KIT_LOG(Error, "%s: the backend it adapts, %s, is not registered in this process",
                      versions_.backend_id, wrapped_id_);
      return executorch::runtime::Error::NotFound;
    }
    // The wrapped backend sees its own blob. Freeing the payload (which it may
    // do once it is done with it) frees the whole processed buffer.
    executorch::runtime::FreeableBuffer payload(blob->payload, blob->payload_size, &free_processed,
                                                processed);
    return inner->init(context, &payload, compile_specs);
  }

  executorch::runtime::Error execute(
      executorch::runtime::BackendExecutionContext& context, executorch::runtime::DelegateHandle* handle,
      executorch::runtime::Span<executorch::runtime::EValue*> args) const override {
    return wrapped()->execute(context, handle, args);  // a handle exists only if init() found the backend
  }

  executorch::runtime::Error set_option(
      executorch::runtime::BackendOptionContext& context,
      const executorch::runtime::Span<executorch::runtime::BackendOption>& options) override {
    executorch::runtime::BackendInterface* inner = wrapped();
    return inner == nullptr ? executorch::runtime::Error::NotFound : inner->set_option(context, options);
  }

  executorch::runtime::Error get_option(
      executorch::runtime::BackendOptionContext& context,
      executorch::runtime::Span<executorch::runtime::BackendOption>& options) override {
    executorch::runtime::BackendInterface* inner = wrapped();
    return inner == nullptr ? executorch::runtime::Error::NotFound : inner->get_option(context, options);
  }

  void destroy(executorch::runtime::DelegateHandle* handle) const override {
    executorch::runtime::BackendInterface* inner = wrapped();
    if (inner != nullptr) inner->destroy(handle);
  }

 private:
  static void free_processed(void* context, void* /*data*/, size_t /*size*/) {
    static_cast<executorch::runtime::FreeableBuffer*>(context)->Free();
  }

  RuntimeVersions versions_;
  const char* wrapped_id_;
  mutable std::atomic<executorch::runtime::BackendInterface*> wrapped_{nullptr};
};

}  // namespace backend_kit
