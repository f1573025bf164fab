/*
 * The ExecuTorch BackendInterface of the reference backend: init() judges
 * and parses the blob and looks up its named data, execute() runs it,
 * destroy() frees it.
 */
#include <reference_backend/bind.h>
#include <reference_backend/executor.h>
#include <reference_backend/reference_backend.h>
#include <reference_backend/versions.h>

#include <backend_kit/register.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <cinttypes>
#include <cstdint>
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
using executorch::runtime::NamedDataMap;
using executorch::runtime::Result;
using executorch::runtime::Span;

/// The named data of one blob, looked up at init and kept for its lifetime.
struct NamedData {
  /// The NamedDataMap's buffers, read in place: an mmap'd .ptd is then shared
  /// by every program that loads it, instead of copied into each.
  std::vector<FreeableBuffer> buffers;
  /// Copies, only for data the map returns at an address not 4-byte aligned.
  std::vector<std::vector<float>> copies;
};

/// What init() returns as the DelegateHandle.
struct Handle {
  Handle(Graph graph, NamedData named)
      : named_data(std::move(named)),
        executor(std::move(graph)),
        inputs(executor.graph().inputs.size()),
        outputs(executor.graph().outputs.size()) {}
  NamedData named_data;  // declared first: destroyed after the executor
  Executor executor;
  std::vector<const void*> inputs;  // scratch for execute()
  std::vector<void*> outputs;
};

/// Whether `map` holds `key` (walks its key list; used on the error path only).
bool map_has_key(const NamedDataMap* map, const std::string& key) {
  if (map == nullptr) return false;
  auto count = map->get_num_keys();
  if (!count.ok()) return false;
  for (uint32_t i = 0; i < *count; ++i) {
    auto name = map->get_key(i);
    if (name.ok() && key == *name) return true;
  }
  return false;
}

/// Logs why named data `ref` is unusable and returns the error for init():
/// InvalidExternalData for data expected in a .ptd, InvalidProgram for data
/// expected inside the .pte. The line names the key and the file expected.
Error named_data_error(const Graph& g, const NamedDataRef& ref, const NamedDataMap* map,
                       size_t found_bytes) {
  const bool external = !ref.file.empty();
  const Error code = external ? Error::InvalidExternalData : Error::InvalidProgram;
  if (found_bytes != SIZE_MAX) {
    const std::string where = external ? "'" + ref.file + "'" : std::string("the .pte");
    ET_LOG(Error,
           "%s: named data '%s' has %zu bytes, the blob expects %" PRIu64 "; %s was "
           "not written with this program: re-export both",
           kBackendId, ref.key.c_str(), found_bytes, ref.nbytes, where.c_str());
    return code;
  }
  if (!external) {
    ET_LOG(Error, "%s: named data '%s' (%" PRIu64 " bytes) is missing from the .pte; "
           "the program is damaged: re-export it", kBackendId, ref.key.c_str(), ref.nbytes);
    return code;
  }
  // Is any other key of the same file present? Then a file was loaded, but
  // not the one this program was exported with.
  bool file_loaded = false;
  for (const NamedDataRef& other : g.named) {
    if (other.file == ref.file && other.key != ref.key && map_has_key(map, other.key)) {
      file_loaded = true;
      break;
    }
  }
  if (file_loaded) {
    ET_LOG(Error, "%s: named data '%s' (%" PRIu64 " bytes) is missing from the data "
           "loaded for '%s': that file was not written with this program",
           kBackendId, ref.key.c_str(), ref.nbytes, ref.file.c_str());
  } else {
    ET_LOG(Error, "%s: named data '%s' (%" PRIu64 " bytes) not found: external file "
           "'%s' was not loaded; load the program with it",
           kBackendId, ref.key.c_str(), ref.nbytes, ref.file.c_str());
  }
  return code;
}

/// Looks up every entry of g.named in the program's named data and points
/// g.named_data at it. On failure logs one line and returns the error.
Error resolve_named_data(const BackendInitContext& context, Graph& g, NamedData& out) {
  if (g.named.empty()) return Error::Ok;
  const NamedDataMap* map = context.get_named_data_map();
  g.named_data.assign(g.named.size(), nullptr);
  out.buffers.reserve(g.named.size());
  for (size_t i = 0; i < g.named.size(); ++i) {
    const NamedDataRef& ref = g.named[i];
    Result<FreeableBuffer> data =
        map != nullptr ? map->get_data(ref.key) : Result<FreeableBuffer>(Error::NotFound);
    if (!data.ok()) return named_data_error(g, ref, map, SIZE_MAX);
    if (data->size() != ref.nbytes) return named_data_error(g, ref, map, data->size());
    if (reinterpret_cast<uintptr_t>(data->data()) % alignof(float) != 0) {
      out.copies.emplace_back(ref.nbytes / sizeof(float));
      std::memcpy(out.copies.back().data(), data->data(), ref.nbytes);
      g.named_data[i] = out.copies.back().data();
      data->Free();
    } else {
      g.named_data[i] = static_cast<const float*>(data->data());
      out.buffers.push_back(std::move(*data));
    }
  }
  return Error::Ok;
}

class ReferenceBackendInterface final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext& context,
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
      NamedData named;
      const Error resolved = resolve_named_data(context, graph, named);
      if (resolved != Error::Ok) return resolved;
      Handle* handle = new Handle(std::move(graph), std::move(named));
      // The blob's constants were copied (named data is held separately);
      // give the blob's memory back.
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
    // Checks the arguments against the blob (shapes, bounds), resizes the
    // outputs of a call with dynamic sizes, runs (src/bind.cpp).
    return bind_and_run(handle->executor, args, handle->inputs, handle->outputs);
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

// Refuses a runtime of another ExecuTorch minor release (the C++ ABI is not
// promised across minors; abi_checks/ has the measured table) and a second
// library holding the id: backend_kit::register_backend.
extern "C" int reference_backend_register(void) {
  return backend_kit::register_backend(reference_backend::kBackendId, &reference_backend::instance(),
                                       BACKEND_KIT_EXECUTORCH_VERSION);
}
