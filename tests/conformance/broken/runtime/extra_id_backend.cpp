// A defective runtime for the suite's own tests: the reference runtime, registered under its own id
// ("ExtraIdBackend", by register_static.cpp) and under a generic id as well, "GenericNpuBackend", as a
// library might to serve programs exported for an older name. Every program of its own runs right; a
// program naming "GenericNpuBackend", meant for another vendor's library, would reach this one instead of
// failing with NotFound (C-RT-6: a library registers no id but its own).
#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>

namespace {

using namespace executorch::runtime;

Backend generic{"GenericNpuBackend", &reference_backend::backend_interface()};
const Error registered_generic = register_backend(generic);

}  // namespace
