/*
 * The ExecuTorch BackendInterface of the reference backend: init() judges
 * and parses the blob, execute() runs it, destroy() frees it.
 */
#include <reference_backend/blob_header.h>
#include <reference_backend/executor.h>
#include <reference_backend/reference_backend.h>
#include <reference_backend/runtime_version.h>
#include <reference_backend/versions.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace reference_backend {
namespace {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::ArrayRef;
using executorch::runtime::Backend;
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

/// What init() returns as the DelegateHandle.
struct Handle {
  explicit Handle(Graph graph)
      : executor(std::move(graph)),
        inputs(executor.graph().inputs.size()),
        outputs(executor.graph().outputs.size()) {}
  Executor executor;
  std::vector<const float*> inputs;  // scratch for execute()
  std::vector<float*> outputs;
};

std::string shape_text(const uint32_t* dims, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    s += (i ? ", " : "") + std::to_string(dims[i]);
  }
  return s + "]";
}

/// Checks that `arg` is a float32 tensor of the shape the blob declares.
Error check_tensor(const EValue* arg, const Value& expected, const char* role,
                   size_t index) {
  if (arg == nullptr || !arg->isTensor()) {
    ET_LOG(Error, "%s: execute: %s %zu is not a tensor", kBackendId, role, index);
    return Error::InvalidArgument;
  }
  const Tensor& t = arg->toTensor();
  bool same = t.scalar_type() == ScalarType::Float &&
      static_cast<uint32_t>(t.dim()) == expected.rank;
  std::vector<uint32_t> dims(t.dim());
  for (size_t d = 0; d < dims.size(); ++d) {
    dims[d] = static_cast<uint32_t>(t.size(d));
    same = same && d < expected.rank && dims[d] == expected.dims[d];
  }
  if (!same) {
    ET_LOG(Error,
           "%s: execute: %s %zu is a %s tensor of shape %s, the blob was "
           "exported for float32 %s (shapes are static: re-export for the new "
           "shape)",
           kBackendId, role, index,
           t.scalar_type() == ScalarType::Float ? "float32" : "non-float32",
           shape_text(dims.data(), dims.size()).c_str(),
           shape_text(expected.dims, expected.rank).c_str());
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

class ReferenceBackendInterface final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext& /*context*/,
                               FreeableBuffer* processed,
                               ArrayRef<CompileSpec> /*compile_specs*/) const override {
    const auto* blob = static_cast<const uint8_t*>(processed->data());
    const size_t size = processed->size();
    Judgement j = judge_blob(blob, size, runtime_versions());
    switch (j.verdict) {
      case Verdict::kInvalid:
        ET_LOG(Error, "%s", j.message.c_str());
        return Error::InvalidProgram;
      case Verdict::kIncompatible:
        ET_LOG(Error, "%s", j.message.c_str());
        return Error::DelegateInvalidCompatibility;
      case Verdict::kCompatibleReexportRecommended:
        ET_LOG(Info, "%s", j.message.c_str());
        break;
      case Verdict::kCompatible:
        break;
    }
    Graph graph;
    std::string error;
    try {
      if (!parse_graph(blob + j.header.header_length, j.header.payload_size,
                       j.header.blob_format_minor, graph, error)) {
        ET_LOG(Error, "%s: invalid blob: %s", kBackendId, error.c_str());
        return Error::InvalidProgram;
      }
      Handle* handle = new Handle(std::move(graph));
      // Everything execute() needs was copied; give the blob's memory back.
      processed->Free();
      return handle;
    } catch (const std::bad_alloc&) {
      ET_LOG(Error, "%s: out of memory while loading a %zu-byte blob", kBackendId,
             size);
      return Error::MemoryAllocationFailed;
    }
  }

  Error execute(BackendExecutionContext& /*context*/, DelegateHandle* raw,
                Span<EValue*> args) const override {
    auto* handle = static_cast<Handle*>(raw);
    const Graph& g = handle->executor.graph();
    const size_t ni = g.inputs.size();
    const size_t no = g.outputs.size();
    if (args.size() != ni + no) {
      ET_LOG(Error, "%s: execute: got %zu arguments, the blob has %zu inputs and "
             "%zu outputs", kBackendId, args.size(), ni, no);
      return Error::InvalidArgument;
    }
    for (size_t i = 0; i < ni; ++i) {
      Error e = check_tensor(args[i], g.values[g.inputs[i]], "input", i);
      if (e != Error::Ok) return e;
      handle->inputs[i] = args[i]->toTensor().const_data_ptr<float>();
    }
    for (size_t i = 0; i < no; ++i) {
      Error e = check_tensor(args[ni + i], g.values[g.outputs[i]], "output", i);
      if (e != Error::Ok) return e;
      handle->outputs[i] = args[ni + i]->toTensor().mutable_data_ptr<float>();
    }
    handle->executor.run(handle->inputs.data(), handle->outputs.data());
    return Error::Ok;
  }

  void destroy(DelegateHandle* raw) const override {
    delete static_cast<Handle*>(raw);
  }
};

ReferenceBackendInterface& instance() {
  static ReferenceBackendInterface backend;
  return backend;
}

}  // namespace
}  // namespace reference_backend

extern "C" int reference_backend_register(void) {
  using namespace reference_backend;
  using executorch::runtime::Error;
  auto* existing = executorch::runtime::get_backend_class(kBackendId);
  if (existing == &instance()) {
    return 0;
  }
  if (existing != nullptr) {
    ET_LOG(Error, "%s: another library already registered a backend with this "
           "id; load only one of them", kBackendId);
    return static_cast<int>(Error::InvalidArgument);
  }
  // Refuse a runtime of another ExecuTorch minor release: the C++ ABI is not
  // promised across minors (abi_checks/ has the measured table).
  const RuntimeVersions& rt = runtime_versions();
  const std::string built = std::to_string(rt.executorch_version.major) + "." +
      std::to_string(rt.executorch_version.minor) + "." +
      std::to_string(rt.executorch_version.patch);
  const RuntimeIdentity running = identify_runtime();
  if (!same_minor_release(built, running.version)) {
    ET_LOG(Error, "%s: not registering: built for executorch %s, this process "
           "runs executorch %s (%s); rebuild the backend for that release",
           kBackendId, built.c_str(), running.version.c_str(),
           running.library.c_str());
    return static_cast<int>(Error::NotSupported);
  }
  static executorch::runtime::Backend backend{kBackendId, &instance()};
  Error e = executorch::runtime::register_backend(backend);
  if (e != Error::Ok) {
    ET_LOG(Error, "%s: register_backend failed with error 0x%x (the registry "
           "holds at most 16 backends)", kBackendId, static_cast<unsigned>(e));
  }
  return static_cast<int>(e);
}
