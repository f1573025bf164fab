/*
 * backend_kit/register.h: registers a BackendInterface with the ExecuTorch
 * runtime under the backend id, after checking that the process runs the
 * ExecuTorch minor release the backend was built for. Header-only; needs the
 * ExecuTorch headers (executorch::runtime from the wheel's CMake package).
 *
 *   static MyBackend backend;
 *   int code = backend_kit::register_backend("MyBackend", &backend,
 *                                            BACKEND_KIT_EXECUTORCH_VERSION);
 *
 * BACKEND_KIT_EXECUTORCH_VERSION is defined by backend_kit_add_backend().
 */
#pragma once

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <cstdio>
#include <fstream>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#define BACKEND_KIT_HAVE_DLADDR 1
#endif

namespace backend_kit {

/// Which ExecuTorch release the process runs. ExecuTorch exports no version
/// symbol, so it is read from the package holding the loaded runtime
/// library: <executorch>/lib/libexecutorch.so sits below <executorch>/version.py
/// in the wheel. Empty for other layouts (e.g. a statically linked runtime).
struct RuntimeIdentity {
  std::string library;  // path of the library providing register_backend
  std::string version;  // e.g. "1.5.1+cpu"; empty if unknown
};

namespace detail {

inline std::string parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

/// The string assigned to __version__ in a version.py, or "".
inline std::string read_version_py(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("__version__", 0) != 0) continue;
    const size_t open = line.find_first_of("\"'");
    if (open == std::string::npos) continue;
    const size_t close = line.find(line[open], open + 1);
    if (close == std::string::npos) continue;
    return line.substr(open + 1, close - open - 1);
  }
  return "";
}

inline bool major_minor(const std::string& version, int& major, int& minor) {
  return std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2;
}

}  // namespace detail

inline RuntimeIdentity identify_runtime() {
  RuntimeIdentity id;
#ifdef BACKEND_KIT_HAVE_DLADDR
  Dl_info info{};
  auto* symbol = reinterpret_cast<void*>(&executorch::runtime::register_backend);
  if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    id.library = info.dli_fname;
    id.version = detail::read_version_py(detail::parent_dir(detail::parent_dir(id.library)) + "/version.py");
  }
#endif
  return id;
}

/// Whether a backend built for `built` may register in a runtime `running`:
/// the same major.minor (docs/version-policy.md). An unknown running version
/// passes: a statically linked runtime has no package to read it from.
inline bool same_minor_release(const std::string& built, const std::string& running) {
  int bmaj = 0, bmin = 0, rmaj = 0, rmin = 0;
  if (!detail::major_minor(built, bmaj, bmin) || !detail::major_minor(running, rmaj, rmin)) {
    return true;
  }
  return bmaj == rmaj && bmin == rmin;
}

/// Registers `backend` under `backend_id` (a string that outlives the
/// process, e.g. a literal). Returns 0, also when this same object is
/// already registered under the id, else the ExecuTorch error code:
/// InvalidArgument when another object holds the id, NotSupported when the
/// process runs another ExecuTorch minor than `built_for` (logged with both
/// versions and the library), or what register_backend returned.
inline int register_backend(const char* backend_id, executorch::runtime::BackendInterface* backend,
                            const char* built_for) {
  using executorch::runtime::Error;
  auto* existing = executorch::runtime::get_backend_class(backend_id);
  if (existing == backend) {
    return 0;
  }
  if (existing != nullptr) {
    ET_LOG(Error, "%s: another library already registered a backend with this id; load only one of them",
           backend_id);
    return static_cast<int>(Error::InvalidArgument);
  }
  const RuntimeIdentity running = identify_runtime();
  if (!same_minor_release(built_for, running.version)) {
    ET_LOG(Error, "%s: not registering: built for executorch %s, this process runs executorch %s (%s); "
           "rebuild the backend for that release",
           backend_id, built_for, running.version.c_str(), running.library.c_str());
    return static_cast<int>(Error::NotSupported);
  }
  // The record is kept for the process's lifetime, whether or not the
  // registry copies it; the registry holds at most 16 backends anyway.
  static executorch::runtime::Backend records[16];
  static size_t used = 0;
  if (used == sizeof(records) / sizeof(records[0])) {
    ET_LOG(Error, "%s: more than 16 backends registered through backend_kit", backend_id);
    return static_cast<int>(Error::InvalidArgument);
  }
  records[used] = executorch::runtime::Backend{backend_id, backend};
  const Error e = executorch::runtime::register_backend(records[used]);
  if (e == Error::Ok) {
    ++used;
  } else {
    ET_LOG(Error, "%s: register_backend failed with error 0x%x (the registry holds at most 16 backends)",
           backend_id, static_cast<unsigned>(e));
  }
  return static_cast<int>(e);
}

}  // namespace backend_kit
