// The example vendor's runtime: float32 negation. The header, its verdict,
// the little-endian reader and the registration are the contract kit's.
#include <backend_kit/header.h>
#include <backend_kit/register.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

namespace {

using namespace executorch::runtime;

constexpr const char* kBackendId = "ExampleNegBackend";
const backend_kit::RuntimeVersions kRuntime = {
    kBackendId,
    "example-vendor",
    {BACKEND_KIT_BACKEND_VERSION_MAJOR, BACKEND_KIT_BACKEND_VERSION_MINOR, BACKEND_KIT_BACKEND_VERSION_PATCH},
    {BACKEND_KIT_EXECUTORCH_VERSION_MAJOR, BACKEND_KIT_EXECUTORCH_VERSION_MINOR,
     BACKEND_KIT_EXECUTORCH_VERSION_PATCH},
    1,
    0,
    0,  // reads blob format 1.0 only
    {0, 1, 0},
};

struct Handle {
  uint64_t numel;
};

class NegBackend final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext&, FreeableBuffer* processed,
                               ArrayRef<CompileSpec>) const override {
    const auto* blob = static_cast<const uint8_t*>(processed->data());
    const backend_kit::Judgement j = backend_kit::judge_blob(blob, processed->size(), kRuntime);
    if (j.verdict == backend_kit::Verdict::kInvalid || j.verdict == backend_kit::Verdict::kIncompatible) {
      ET_LOG(Error, "%s", j.message.c_str());
      return j.verdict == backend_kit::Verdict::kInvalid ? Error::InvalidProgram
                                                         : Error::DelegateInvalidCompatibility;
    }
    backend_kit::LittleEndianReader payload(blob + j.header.header_length, j.header.payload_size);
    if (!payload.has(8)) {
      ET_LOG(Error, "%s: invalid blob: payload of %zu bytes, expected 8", kBackendId, payload.size());
      return Error::InvalidProgram;
    }
    auto* handle = new Handle{payload.u64()};
    processed->Free();
    return handle;
  }

  Error execute(BackendExecutionContext&, DelegateHandle* raw, Span<EValue*> args) const override {
    const auto* handle = static_cast<Handle*>(raw);
    if (args.size() != 2 || !args[0]->isTensor() || !args[1]->isTensor()) return Error::InvalidArgument;
    const auto& in = args[0]->toTensor();
    auto& out = args[1]->toTensor();
    if (static_cast<uint64_t>(in.numel()) != handle->numel || out.numel() != in.numel()) {
      return Error::InvalidArgument;
    }
    const float* x = in.const_data_ptr<float>();
    float* y = out.mutable_data_ptr<float>();
    for (uint64_t i = 0; i < handle->numel; ++i) y[i] = -x[i];
    return Error::Ok;
  }

  void destroy(DelegateHandle* raw) const override { delete static_cast<Handle*>(raw); }
};

NegBackend backend;
const int registered = backend_kit::register_backend(kBackendId, &backend, BACKEND_KIT_EXECUTORCH_VERSION);

}  // namespace
