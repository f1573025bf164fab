#include "sibling_extension.h"

#include <reference_backend/reference_backend.h>

namespace executorch {
namespace extension {
namespace reference_variant {

const char* core_description() {
  return reference_backend_runtime_info();
}

}  // namespace reference_variant
}  // namespace extension
}  // namespace executorch
