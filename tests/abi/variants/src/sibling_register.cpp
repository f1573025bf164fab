/*
 * Test variant: the split wheel's registering library. It holds no backend code:
 * loading it registers the backend of its sibling libreference_core.so, whose
 * symbols (one of them in ExecuTorch's namespace) it imports.
 */
#include <reference_backend/reference_backend.h>

#include "sibling_extension.h"

extern "C" __attribute__((visibility("default"))) const char* reference_variant_info(void) {
  return executorch::extension::reference_variant::core_description();
}

namespace {

const int kRegistration = reference_backend_register();

}  // namespace
