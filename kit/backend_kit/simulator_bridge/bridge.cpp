/*
 * simulator_bridge: an ExecuTorch backend whose init(), execute() and destroy() are a host simulator's.
 *
 * backend_kit.simulator (Python) builds this library against the installed executorch wheel, loads it into
 * the process's ExecuTorch runtime and registers a backend id with three C callbacks (ctypes functions that
 * call the vendor's simulator). The runtime then loads and runs a real program as always: its own kernels,
 * memory plan and named data; only each delegate of that id is handed to the simulator. What this proves and
 * what it does not is in docs/contract.md, "Simulated runtimes".
 *
 * The C interface (every function returns 0 or an executorch::runtime::Error code):
 *   bksim_register(id, init, execute, destroy)   registers `id`; up to kSlots ids per process
 *   init(slot, ctx, data, size, &handle)          the payload; the callee may call bksim_named_data(ctx, ...)
 *                                                 and bksim_compile_spec(ctx, ...)
 *   execute(slot, handle, nargs, args, ctx)       args: views of the delegate's arguments (inputs, then the
 *                                                 planned outputs); the callee may call bksim_resize(ctx,
 * ...) destroy(slot, handle)
 */
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/platform/log.h>

#include <backend_kit/register.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

namespace {

using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::ArrayRef;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendInterface;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;
using executorch::runtime::Span;

constexpr int kSlots = 8;
constexpr int kMaxDims = 16;

}  // namespace

extern "C" {

/// A view of one argument of a delegate call. kind: 0 tensor, 1 int, 2 double, 3 bool, 4 none, 5 other.
struct bksim_arg {
  int32_t kind;
  int32_t dtype;  // the tensor's ScalarType code
  int32_t ndim;
  int32_t reserved;
  int64_t sizes[kMaxDims];
  int32_t dim_order[kMaxDims];  // the memory order of the dimensions, outermost first (0..ndim-1: contiguous)
  void* data;
  uint64_t nbytes;
  int64_t ival;
  double dval;
};

typedef int32_t (*bksim_init_fn)(int32_t slot, void* ctx, const void* data, uint64_t size, int64_t* handle);
typedef int32_t (*bksim_execute_fn)(int32_t slot, int64_t handle, uint64_t nargs, bksim_arg* args, void* ctx);
typedef void (*bksim_destroy_fn)(int32_t slot, int64_t handle);

}  // extern "C"

namespace {

struct InitCall {
  BackendInitContext* context;
  ArrayRef<CompileSpec> specs;
};

struct ExecuteCall {
  Span<EValue*> args;
  bksim_arg* views;
};

struct Handle {
  int64_t id;
};

void describe(EValue* value, bksim_arg* view) {
  std::memset(view, 0, sizeof(*view));
  if (value == nullptr) {
    view->kind = 5;
  } else if (value->isTensor()) {
    const Tensor& t = value->toTensor();
    view->kind = t.dim() <= kMaxDims ? 0 : 5;
    view->dtype = static_cast<int32_t>(t.scalar_type());
    view->ndim = static_cast<int32_t>(t.dim());
    for (int i = 0; i < view->ndim && i < kMaxDims; ++i) {
      view->sizes[i] = t.size(i);
      view->dim_order[i] = static_cast<int32_t>(t.dim_order()[i]);
    }
    view->data = t.mutable_data_ptr();
    view->nbytes = t.nbytes();
  } else if (value->isInt()) {
    view->kind = 1;
    view->ival = value->toInt();
  } else if (value->isDouble()) {
    view->kind = 2;
    view->dval = value->toDouble();
  } else if (value->isBool()) {
    view->kind = 3;
    view->ival = value->toBool() ? 1 : 0;
  } else if (value->isNone()) {
    view->kind = 4;
  } else {
    view->kind = 5;
  }
}

class SimulatedBackend final : public BackendInterface {
 public:
  bool is_available() const override { return init_ != nullptr; }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    InitCall call{&context, specs};
    int64_t id = 0;
    const int32_t code = init_(slot_, &call, processed->data(), processed->size(), &id);
    processed->Free();
    if (code != 0) return static_cast<Error>(code);
    Handle* handle = new (std::nothrow) Handle{id};
    if (handle == nullptr) {
      destroy_(slot_, id);
      return Error::MemoryAllocationFailed;
    }
    return handle;
  }

  Error execute(BackendExecutionContext&, DelegateHandle* raw, Span<EValue*> args) const override {
    auto* handle = static_cast<Handle*>(raw);
    bksim_arg* views = new (std::nothrow) bksim_arg[args.size() == 0 ? 1 : args.size()];
    if (views == nullptr) return Error::MemoryAllocationFailed;
    for (size_t i = 0; i < args.size(); ++i) describe(args[i], &views[i]);
    ExecuteCall call{args, views};
    const int32_t code = execute_(slot_, handle->id, args.size(), views, &call);
    delete[] views;
    return static_cast<Error>(code);
  }

  void destroy(DelegateHandle* raw) const override {
    auto* handle = static_cast<Handle*>(raw);
    if (handle == nullptr) return;
    destroy_(slot_, handle->id);
    delete handle;
  }

  int32_t slot_ = -1;
  std::string id_;
  bksim_init_fn init_ = nullptr;
  bksim_execute_fn execute_ = nullptr;
  bksim_destroy_fn destroy_ = nullptr;
};

SimulatedBackend g_backends[kSlots];
int g_used = 0;
std::mutex g_lock;

}  // namespace

extern "C" {

/// Registers `backend_id`, served by the three callbacks, in the ExecuTorch runtime of the process: 0, or the
/// runtime's error (Error::RegistrationAlreadyRegistered for an id taken), or Error::OutOfResources after
/// kSlots ids.
__attribute__((visibility("default"))) int32_t bksim_register(const char* backend_id, bksim_init_fn init,
                                                              bksim_execute_fn execute,
                                                              bksim_destroy_fn destroy) {
  std::lock_guard<std::mutex> guard(g_lock);
  if (backend_id == nullptr || init == nullptr || execute == nullptr || destroy == nullptr) {
    return static_cast<int32_t>(Error::InvalidArgument);
  }
  if (g_used >= kSlots) return static_cast<int32_t>(Error::OutOfResources);
  SimulatedBackend& backend = g_backends[g_used];
  backend.slot_ = g_used;
  backend.id_ = backend_id;
  backend.init_ = init;
  backend.execute_ = execute;
  backend.destroy_ = destroy;
  const int code =
      backend_kit::register_backend(backend.id_.c_str(), &backend, BACKEND_KIT_EXECUTORCH_VERSION);
  if (code != 0) {
    backend.init_ = nullptr;
    return code;
  }
  ++g_used;
  return 0;
}

/// The named data `key` of the program being initialized, copied into a buffer of `capacity` bytes at `out`
/// (none if `out` is null); `*size` is set to its size. 0, Error::NotFound, or Error::InvalidArgument when it
/// does not fit.
__attribute__((visibility("default"))) int32_t bksim_named_data(void* ctx, const char* key, void* out,
                                                                uint64_t capacity, uint64_t* size) {
  auto* call = static_cast<InitCall*>(ctx);
  const auto* map = call->context->get_named_data_map();
  if (map == nullptr) return static_cast<int32_t>(Error::NotFound);
  Result<FreeableBuffer> found = map->get_data(key);
  if (!found.ok()) return static_cast<int32_t>(found.error());
  *size = found->size();
  if (out != nullptr) {
    if (capacity < found->size()) return static_cast<int32_t>(Error::InvalidArgument);
    std::memcpy(out, found->data(), found->size());
  }
  found->Free();
  return 0;
}

/// The compile spec number `index` of the delegate being initialized: its key and value (pointers into the
/// program, valid during init). Error::NotFound past the last.
__attribute__((visibility("default"))) int32_t bksim_compile_spec(void* ctx, uint64_t index, const char** key,
                                                                  const void** value, uint64_t* size) {
  auto* call = static_cast<InitCall*>(ctx);
  if (index >= call->specs.size()) return static_cast<int32_t>(Error::NotFound);
  const CompileSpec& spec = call->specs[index];
  *key = spec.key;
  *value = spec.value.buffer;
  *size = spec.value.nbytes;
  return 0;
}

/// The method being initialized (empty when the runtime does not say).
__attribute__((visibility("default"))) const char* bksim_method_name(void* ctx) {
  const char* name = static_cast<InitCall*>(ctx)->context->get_method_name();
  return name == nullptr ? "" : name;
}

/// Resizes the tensor argument `index` of the delegate call to `sizes` (its rank unchanged) and refreshes its
/// view: 0, or the runtime's error (a size past the planned bound, a static tensor).
__attribute__((visibility("default"))) int32_t bksim_resize(void* ctx, uint64_t index, int32_t ndim,
                                                            const int64_t* sizes) {
  auto* call = static_cast<ExecuteCall*>(ctx);
  if (index >= call->args.size() || call->args[index] == nullptr || !call->args[index]->isTensor() ||
      ndim < 0 || ndim > kMaxDims) {
    return static_cast<int32_t>(Error::InvalidArgument);
  }
  SizesType converted[kMaxDims];
  for (int i = 0; i < ndim; ++i) converted[i] = static_cast<SizesType>(sizes[i]);
  Tensor& tensor = call->args[index]->toTensor();
  const Error error =
      executorch::runtime::resize_tensor(tensor, ArrayRef<SizesType>(converted, static_cast<size_t>(ndim)));
  describe(call->args[index], &call->views[index]);
  return static_cast<int32_t>(error);
}

}  // extern "C"
