/*
 * The reference runtime's BackendInterface, for a library that wraps it without registering it under
 * an id of its own (the suite's broken backends forward to it, and a library registers no id but its
 * own: C-RT-6). Not installed: the reference backend's public interface is reference_backend.h.
 */
#pragma once

#include <executorch/runtime/backend/interface.h>

namespace reference_backend {

/// The one instance the registration functions of reference_backend.h register.
executorch::runtime::BackendInterface& backend_interface();

}  // namespace reference_backend
