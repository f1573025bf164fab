/*
 * Which ExecuTorch release the process runs. ExecuTorch exports no version
 * symbol, so it is read from the package that holds the loaded runtime
 * library: <executorch>/lib/libexecutorch.so sits below <executorch>/version.py
 * in the wheel layout. Unknown (empty) for other layouts, e.g. a static runtime.
 */
#pragma once

#include <string>

namespace reference_backend {

struct RuntimeIdentity {
  std::string library;  // path of the library providing register_backend
  std::string version;  // e.g. "1.5.1+cpu"; empty if unknown
};

RuntimeIdentity identify_runtime();

/// Whether a backend built for `built` may register in a runtime `running`:
/// the same major.minor (docs/version-policy.md). Unknown versions pass.
bool same_minor_release(const std::string& built, const std::string& running);

}  // namespace reference_backend
