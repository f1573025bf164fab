// XnnpackAdapterBackend: judges the contract header of each blob, then hands
// XNNPACK's own blob to the XNNPACK backend registered in the process.
#include <backend_kit/adapter.h>
#include <backend_kit/register.h>

namespace {

// Reads blob format 1.0 (python/xnnpack_adapter/version.py), first written by 0.1.0.
constexpr backend_kit::BlobFormats kFormats{1, 0, 0, {0, 1, 0}};
backend_kit::HeaderAdapter adapter(BACKEND_KIT_RUNTIME_VERSIONS("XnnpackAdapterBackend",
                                                                "executorch-xnnpack-adapter", kFormats),
                                   "XnnpackBackend");
const int registered =
    backend_kit::register_backend("XnnpackAdapterBackend", &adapter, BACKEND_KIT_EXECUTORCH_VERSION);

}  // namespace
