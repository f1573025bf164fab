// The backend's runtime: one float32 elementwise operator per delegate. The
// header, its verdict, the payload reader, logging and registration are the
// contract kit's; the payload format and the kernels are the backend's.
#include <backend_kit/backend.h>
#include <backend_kit/register.h>

#include "backend_identity.h"  // generated from python/template_backend/version.py and ops.py

#include <executorch/runtime/backend/interface.h>

#include <cmath>

namespace {

using namespace executorch::runtime;
using namespace backend_identity;

// Reads blob format major.0 to major.minor of version.py; the newest was first written by release 0.1.0.
constexpr backend_kit::BlobFormats kFormats{kBlobFormatMajor, 0, kBlobFormatMinor, {0, 1, 0}};
const backend_kit::RuntimeVersions kRuntime =
    BACKEND_KIT_RUNTIME_VERSIONS(kBackendId, kDistribution, kFormats);

// Runs opcode op (ops.py's OPS) over n elements; false for an opcode this runtime does not know.
bool run_op(uint32_t op, const float* x, float* y, uint64_t n) {
  if (op != kAtenNeg && op != kAtenAbs) return false;
  for (uint64_t i = 0; i < n; ++i) y[i] = op == kAtenNeg ? -x[i] : std::fabs(x[i]);
  return true;
}

struct Handle {
  uint32_t op;
  uint64_t numel;
};

class TemplateBackendInterface final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext&, FreeableBuffer* processed,
                               ArrayRef<CompileSpec>) const override {
    auto blob = backend_kit::accept_blob(*processed, kRuntime);
    if (!blob.ok()) return blob.error();
    backend_kit::LittleEndianReader payload = blob->reader();
    if (payload.size() != 12) {
      BACKEND_KIT_LOG(Error, "%s: invalid blob: payload of %zu bytes, expected 12", kBackendId,
                      payload.size());
      return Error::InvalidProgram;
    }
    const uint32_t op = payload.u32();
    if (!run_op(op, nullptr, nullptr, 0)) {
      BACKEND_KIT_LOG(Error, "%s: invalid blob: unknown opcode %u", kBackendId, op);
      return Error::InvalidProgram;
    }
    auto* handle = new Handle{op, payload.u64()};
    processed->Free();
    return handle;
  }

  Error execute(BackendExecutionContext&, DelegateHandle* raw, Span<EValue*> args) const override {
    const auto* handle = static_cast<const Handle*>(raw);
    if (args.size() != 2 || !args[0]->isTensor() || !args[1]->isTensor()) return Error::InvalidArgument;
    const auto& in = args[0]->toTensor();
    auto& out = args[1]->toTensor();
    if (in.scalar_type() != executorch::aten::ScalarType::Float ||
        out.scalar_type() != executorch::aten::ScalarType::Float ||
        static_cast<uint64_t>(in.numel()) != handle->numel || out.numel() != in.numel()) {
      BACKEND_KIT_LOG(Error, "%s: execute() got tensors that do not match the blob (%llu float32 elements)",
                      kBackendId, static_cast<unsigned long long>(handle->numel));
      return Error::InvalidArgument;
    }
    const float* x = in.const_data_ptr<float>();
    float* y = out.mutable_data_ptr<float>();
    run_op(handle->op, x, y, handle->numel);
    return Error::Ok;
  }

  void destroy(DelegateHandle* raw) const override { delete static_cast<Handle*>(raw); }
};

TemplateBackendInterface backend;
const int registered = backend_kit::register_backend(kBackendId, &backend, BACKEND_KIT_EXECUTORCH_VERSION);

}  // namespace
