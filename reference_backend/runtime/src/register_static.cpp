/*
 * Registration by static initializer. Loading the shared library runs it.
 * The static archive holds this object too, but nothing references it, so a
 * plain static link drops it: static users call reference_backend_register()
 * or link the archive whole (tests/cpp/test_cpp_integration.py shows all three).
 */
#include <reference_backend/reference_backend.h>

namespace {

const int kRegistration = reference_backend_register();

}  // namespace
