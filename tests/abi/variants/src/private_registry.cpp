/*
 * Test variant: a backend registry inside the backend library, which is what a
 * static link of the runtime's core (executorch_core.a) puts there. The backend's
 * register_backend() call binds to this table, not to libexecutorch.so's, so the
 * Python runtime never sees the backend. Written for the test, not copied.
 */
#include <executorch/runtime/backend/interface.h>

#include <cstring>

#if defined(VARIANT_EXPORT_REGISTRY)
#define VARIANT_REGISTRY_API __attribute__((visibility("default")))
#else
#define VARIANT_REGISTRY_API
#endif

namespace executorch {
namespace ET_RUNTIME_NAMESPACE {
namespace {
constexpr size_t kCapacity = 16;
Backend g_table[kCapacity];
size_t g_count = 0;
}  // namespace

VARIANT_REGISTRY_API Error register_backend(const Backend& backend) {
  if (g_count == kCapacity) return Error::Internal;
  g_table[g_count++] = backend;
  return Error::Ok;
}

VARIANT_REGISTRY_API BackendInterface* get_backend_class(const char* name) {
  for (size_t i = 0; i < g_count; ++i) {
    if (std::strcmp(g_table[i].name, name) == 0) return g_table[i].backend;
  }
  return nullptr;
}

}  // namespace ET_RUNTIME_NAMESPACE
}  // namespace executorch
