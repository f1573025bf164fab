/*
 * The ExecuTorch BackendInterface of the reference backend: init() judges
 * and parses the blob, checks its memory need against the blob's declared
 * limit and the application's maximum and its estimated work against the
 * application's compute maximum (compute.h), looks up and verifies its named
 * data; execute() runs it, destroy() frees it.
 *
 * Every line goes to the log through RB_LOG, which escapes each byte that is
 * not printable ASCII: ExecuTorch's Python log sink decodes lines as strict
 * UTF-8 and ends the process on a decoding error.
 */
#include <reference_backend/bind.h>
#include <reference_backend/checked.h>
#include <reference_backend/compute.h>
#include <reference_backend/executor.h>
#include <reference_backend/reference_backend.h>
#include <reference_backend/versions.h>

#include <backend_kit/register.h>

#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

/// ET_LOG of a printf-style line made safe for every log sink (backend_kit::log_safe).
#define RB_LOG(level, ...) \
  ET_LOG(level, "%s", ::backend_kit::log_safe(::backend_kit::format(__VA_ARGS__)).c_str())

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
  Handle(FreeableBuffer blob_buffer, Graph graph, NamedData named)
      : blob(std::move(blob_buffer)),
        named_data(std::move(named)),
        executor(std::move(graph)),
        inputs(executor.graph().inputs.size()),
        outputs(executor.graph().outputs.size()) {}
  /// The blob, kept while the graph reads its constants in place (empty
  /// otherwise). Declared first: destroyed after the executor.
  FreeableBuffer blob;
  NamedData named_data;
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
Error named_data_error(const Graph& g, const NamedDataRef& ref, const NamedDataMap* map, size_t found_bytes) {
  const bool external = !ref.file.empty();
  const Error code = external ? Error::InvalidExternalData : Error::InvalidProgram;
  if (found_bytes != SIZE_MAX) {
    const std::string where = external ? "'" + ref.file + "'" : std::string("the .pte");
    RB_LOG(Error,
           "%s: named data '%s' has %zu bytes, the blob expects %" PRIu64 "; %s was "
           "not written with this program: re-export both",
           kBackendId, ref.key.c_str(), found_bytes, ref.nbytes, where.c_str());
    return code;
  }
  if (!external) {
    RB_LOG(Error,
           "%s: named data '%s' (%" PRIu64 " bytes) is missing from the .pte; "
           "the program is damaged: re-export it",
           kBackendId, ref.key.c_str(), ref.nbytes);
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
    RB_LOG(Error,
           "%s: named data '%s' (%" PRIu64 " bytes) is missing from the data "
           "loaded for '%s': that file was not written with this program",
           kBackendId, ref.key.c_str(), ref.nbytes, ref.file.c_str());
  } else {
    RB_LOG(Error,
           "%s: named data '%s' (%" PRIu64 " bytes) not found: external file "
           "'%s' was not loaded; load the program with it",
           kBackendId, ref.key.c_str(), ref.nbytes, ref.file.c_str());
  }
  return code;
}

/// Looks up every entry of g.named in the program's named data, verifies it
/// against the blob's named-data checksums (header format 2) and points
/// g.named_data at it. On failure logs one line and returns the error.
Error resolve_named_data(const BackendInitContext& context, const backend_kit::Header& header, Graph& g,
                         NamedData& out) {
  if (header.has_named_data_checksums && header.named_data_checksums.size() != g.named.size()) {
    RB_LOG(Error,
           "%s: invalid blob: the header records %zu named-data checksums, the payload's "
           "named-data table has %zu entries",
           kBackendId, header.named_data_checksums.size(), g.named.size());
    return Error::InvalidProgram;
  }
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
    if (header.has_named_data_checksums) {
      const uint32_t expected = header.named_data_checksums[i];
      const uint32_t actual =
          runtime_versions().crc32c_function(0, static_cast<const uint8_t*>(data->data()), data->size());
      if (actual != expected) {
        const bool external = !ref.file.empty();
        const std::string where = external ? "'" + ref.file + "'" : std::string("the .pte");
        RB_LOG(Error,
               "%s: named data '%s' in %s fails its checksum: the blob records CRC-32C 0x%08x, the "
               "data gives 0x%08x; %s is damaged or was not written with this program: re-export it",
               kBackendId, ref.key.c_str(), where.c_str(), expected, actual, where.c_str());
        return external ? Error::InvalidExternalData : Error::InvalidProgram;
      }
    }
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

/// Bytes init() and the Executor allocate for `g` beyond the blob itself:
/// the copied constants and one buffer per op result (64-byte rounded, as
/// the Executor's arena). Keep it covering every allocation whose size
/// comes from the blob: it is compared with the limits before allocating.
/// A failed Size (more than 2^64 bytes) is above every limit.
Size memory_need(const Graph& g) {
  // The constants count even when read in place: an unaligned payload copies them.
  Size total = g.constant_bytes;
  for (const Op& op : g.ops) {
    total += (Size(g.values[op.output].numel) * sizeof(float)).align_up(64);
  }
  return total;
}

/// One of the application's maxima: the value set through the C API, else
/// the environment's (read once), else the default.
struct Maximum {
  const char* env;
  uint64_t fallback;
  const char* unit;  // "bytes", "steps"
  const char* what;  // "a byte count", "a step count"
  std::atomic<uint64_t> value{0};  // 0 until set or read

  uint64_t get() {
    uint64_t limit = value.load(std::memory_order_relaxed);
    if (limit != 0) return limit;
    limit = fallback;
    if (const char* text = std::getenv(env)) {
      char* end = nullptr;
      errno = 0;
      const unsigned long long parsed = std::strtoull(text, &end, 10);
      if (errno == 0 && end != text && *end == '\0' && parsed > 0 && text[0] != '-') {
        limit = parsed;
      } else {
        RB_LOG(Error, "%s: %s='%s' is not %s; using the default maximum of %" PRIu64 " %s", kBackendId, env,
               text, what, fallback, unit);
      }
    }
    uint64_t unset = 0;
    value.compare_exchange_strong(unset, limit);
    return value.load();
  }
};

Maximum g_max_memory{kMaxMemoryEnv, kDefaultMaxMemoryBytes, "bytes", "a byte count"};
Maximum g_max_compute{kMaxComputeEnv, kDefaultMaxComputeSteps, "steps", "a step count"};

/// Refuses a graph whose memory need exceeds what the blob's header declares
/// (format 2: then the payload was altered) or the application's maximum.
Error check_memory(const backend_kit::Header& header, const Graph& g) {
  const Size need = memory_need(g);
  const unsigned long long shown = need.ok() ? need.value() : UINT64_MAX;
  if (header.has_memory_limit && !need.at_most(header.memory_limit)) {
    RB_LOG(Error,
           "%s: invalid blob: the payload needs %llu bytes of memory, more than the %" PRIu64
           " bytes its header declares (the blob was altered)",
           kBackendId, shown, header.memory_limit);
    return Error::InvalidProgram;
  }
  const uint64_t limit = g_max_memory.get();
  size_t addressable = 0;
  if (!need.at_most(limit) || !need.to_size(addressable)) {
    RB_LOG(Error,
           "%s: refusing a blob that needs %llu bytes of memory, more than this application "
           "allows (%" PRIu64 " bytes; raise it with %s or reference_backend_set_max_memory_bytes)",
           kBackendId, shown, limit, kMaxMemoryEnv);
    return Error::MemoryAllocationFailed;
  }
  return Error::Ok;
}

/// Refuses a graph whose estimated work per execute() (compute.h) exceeds
/// the application's maximum: one line naming the estimate, the maximum and
/// the op with the most steps.
Error check_compute(const Graph& g) {
  const ComputeNeed need = compute_need(g);
  const uint64_t limit = g_max_compute.get();
  if (need.total.at_most(limit)) return Error::Ok;
  const Op& op = g.ops[need.largest_op];
  const auto show = [](Size s) { return s.ok() ? static_cast<unsigned long long>(s.value()) : ULLONG_MAX; };
  // ExecuTorch cuts log lines at 256 bytes: this one stays below with 20-digit numbers.
  RB_LOG(
      Error,
      "%s: refusing a blob needing ~%llu compute steps per execute (op %zu, %s: %llu), more than the %" PRIu64
      " allowed (raise it with %s)",
      kBackendId, show(need.total), need.largest_op, op_name(op.code), show(need.largest), limit,
      kMaxComputeEnv);
  return Error::OutOfResources;
}

class ReferenceBackendInterface final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> /*compile_specs*/) const override {
    const auto* blob = static_cast<const uint8_t*>(processed->data());
    const size_t size = processed->size();
    Judgement j = judge_blob(blob, size, runtime_versions());
    switch (j.verdict) {
      case Verdict::kInvalid: RB_LOG(Error, "%s", j.message.c_str()); return Error::InvalidProgram;
      case Verdict::kIncompatible:
        RB_LOG(Error, "%s", j.message.c_str());
        return Error::DelegateInvalidCompatibility;
      case Verdict::kCompatibleReexportRecommended: RB_LOG(Info, "%s", j.message.c_str()); break;
      case Verdict::kCompatible: break;
    }
    Graph graph;
    std::string error;
    try {
      if (!parse_graph(blob + j.header.header_length, j.header.payload_size, j.header.blob_format_minor,
                       graph, error)) {
        RB_LOG(Error, "%s: invalid blob: %s", kBackendId, error.c_str());
        return Error::InvalidProgram;
      }
      const Error fits = check_memory(j.header, graph);
      if (fits != Error::Ok) return fits;
      const Error bounded = check_compute(graph);
      if (bounded != Error::Ok) return bounded;
      NamedData named;
      const Error resolved = resolve_named_data(context, j.header, graph, named);
      if (resolved != Error::Ok) return resolved;
      // The handle keeps the blob while the graph reads constants from it;
      // otherwise everything was copied out and the blob's memory goes back.
      FreeableBuffer kept = graph.borrows_payload() ? std::move(*processed) : FreeableBuffer();
      processed->Free();  // a no-op once moved from
      return new Handle(std::move(kept), std::move(graph), std::move(named));
    } catch (const std::bad_alloc&) {
      RB_LOG(Error, "%s: out of memory while loading a %zu-byte blob", kBackendId, size);
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

  void destroy(DelegateHandle* raw) const override { delete static_cast<Handle*>(raw); }
};

ReferenceBackendInterface& instance() {
  static ReferenceBackendInterface backend;
  return backend;
}

}  // namespace

executorch::runtime::BackendInterface& backend_interface() {
  return instance();
}

}  // namespace reference_backend

// Refuses a runtime of another ExecuTorch minor release (the C++ ABI is not
// promised across minors; abi_checks/ has the measured table) and a second
// library holding the id: backend_kit::register_backend.
extern "C" int reference_backend_set_max_memory_bytes(uint64_t bytes) {
  if (bytes == 0) return static_cast<int>(executorch::runtime::Error::InvalidArgument);
  reference_backend::g_max_memory.value.store(bytes);
  return 0;
}

extern "C" uint64_t reference_backend_max_memory_bytes(void) {
  return reference_backend::g_max_memory.get();
}

extern "C" int reference_backend_set_max_compute_steps(uint64_t steps) {
  if (steps == 0) return static_cast<int>(executorch::runtime::Error::InvalidArgument);
  reference_backend::g_max_compute.value.store(steps);
  return 0;
}

extern "C" uint64_t reference_backend_max_compute_steps(void) {
  return reference_backend::g_max_compute.get();
}

extern "C" int reference_backend_register(void) {
  return backend_kit::register_backend(reference_backend::kBackendId, &reference_backend::instance(),
                                       BACKEND_KIT_EXECUTORCH_VERSION);
}

extern "C" int reference_backend_register_linked(const char* executorch_version) {
  return backend_kit::register_backend(reference_backend::kBackendId, &reference_backend::instance(),
                                       BACKEND_KIT_EXECUTORCH_VERSION, executorch_version);
}
