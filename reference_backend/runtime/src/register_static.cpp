/*
 * Registration by static initializer. This translation unit is compiled
 * into the shared library only: loading the library registers the backend.
 * In a static archive nothing references this object, so the linker would
 * drop it; static users call reference_backend_register() instead.
 */
#include <reference_backend/reference_backend.h>

namespace {

const int kRegistration = reference_backend_register();

}  // namespace
