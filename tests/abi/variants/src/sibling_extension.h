// Test variant: a function the split wheel's core library exports in ExecuTorch's
// namespace (as vendors ship rebuilt ExecuTorch extensions in sibling libraries).
#pragma once

namespace executorch {
namespace extension {
namespace reference_variant {

__attribute__((visibility("default"))) const char* core_description();

}  // namespace reference_variant
}  // namespace extension
}  // namespace executorch
