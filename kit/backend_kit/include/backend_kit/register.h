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

#include <backend_kit/header.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
#define BACKEND_KIT_HAVE_DLADDR 1
#endif

namespace backend_kit {

/// One ExecuTorch runtime found in the process: a loaded object that defines
/// executorch::runtime::register_backend. ExecuTorch exports no version
/// symbol, so the version is read from the package holding the object: the
/// wheel's <executorch>/version.py sits one to four directories above its
/// libraries (lib/libexecutorch.so, extension/pybindings/_portable_lib*.so).
/// Empty for other layouts (e.g. a runtime linked into the executable).
struct RuntimeIdentity {
  std::string library;  // path of the object defining register_backend
  std::string version;  // e.g. "1.5.1+cpu"; empty if unknown
};

namespace detail {

/// The mangled name of executorch::runtime::register_backend(const Backend&).
constexpr const char* kRegisterBackendSymbol = "_ZN10executorch7runtime16register_backendERKNS0_7BackendE";

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

/// The version of the executorch package holding `library`, or "".
inline std::string package_version(const std::string& library) {
  std::string dir = parent_dir(library);
  for (int up = 0; up < 4 && dir != "." && !dir.empty(); ++up) {
    const size_t slash = dir.find_last_of('/');
    const std::string name = slash == std::string::npos ? dir : dir.substr(slash + 1);
    if (name == "executorch") return read_version_py(dir + "/version.py");
    dir = parent_dir(dir);
  }
  return "";
}

inline bool major_minor(const std::string& version, int& major, int& minor) {
  return std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2;
}

#ifdef BACKEND_KIT_HAVE_DLADDR
inline void add_runtime_at(void* address, std::vector<RuntimeIdentity>& out) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return;
  // Canonical: the loader may report ".../pybindings/../../lib/libexecutorch.so".
  char* real = realpath(info.dli_fname, nullptr);
  const std::string library = real != nullptr ? real : info.dli_fname;
  std::free(real);
  for (const RuntimeIdentity& known : out) {
    if (known.library == library) return;
  }
  out.push_back({library, package_version(library)});
}

/// dl_iterate_phdr callback: the names of the loaded objects (no dlopen
/// here, inside the loader's iteration).
inline int collect_name(struct dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
  }
  return 0;
}
#endif

}  // namespace detail

/// Every ExecuTorch runtime in the process: the one this backend's calls
/// bind to, every loaded object of an executorch package (the Python
/// extension of another release loaded with RTLD_LOCAL, say, whose runtime
/// symbols are hidden) and every loaded object exporting register_backend.
inline std::vector<RuntimeIdentity> identify_runtimes() {
  std::vector<RuntimeIdentity> found;
#ifdef BACKEND_KIT_HAVE_DLADDR
  detail::add_runtime_at(reinterpret_cast<void*>(&executorch::runtime::register_backend), found);
  std::vector<std::string> names;
  dl_iterate_phdr(&detail::collect_name, &names);
  for (const std::string& name : names) {
    // Any object of an executorch package (a release may keep its runtime's
    // symbols hidden inside its Python extension, as 1.4 does) ...
    char* real = realpath(name.c_str(), nullptr);
    const std::string path = real != nullptr ? real : name;
    std::free(real);
    const std::string version = detail::package_version(path);
    bool known = false;
    for (const RuntimeIdentity& r : found) known = known || r.library == path;
    if (!version.empty() && !known) found.push_back({path, version});
    // ... and any object exporting register_backend, wherever it lives.
    void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    detail::add_runtime_at(dlsym(handle, detail::kRegisterBackendSymbol), found);
    dlclose(handle);
  }
  detail::add_runtime_at(dlsym(RTLD_DEFAULT, detail::kRegisterBackendSymbol), found);
#endif
  return found;
}

/// The runtime this backend's calls bind to (the first of identify_runtimes()).
inline RuntimeIdentity identify_runtime() {
  const std::vector<RuntimeIdentity> all = identify_runtimes();
  return all.empty() ? RuntimeIdentity{} : all.front();
}

/// Whether a backend built for `built` may register in a runtime `running`:
/// the same major.minor (docs/version-policy.md). Fails closed: an
/// unreadable version on either side is a refusal.
inline bool same_minor_release(const std::string& built, const std::string& running) {
  int bmaj = 0, bmin = 0, rmaj = 0, rmin = 0;
  if (!detail::major_minor(built, bmaj, bmin) || !detail::major_minor(running, rmaj, rmin)) {
    return false;
  }
  return bmaj == rmaj && bmin == rmin;
}

/// Why a backend built for `built_for` must not register in a process
/// running `runtimes`, or "" when it may: every runtime found must have a
/// readable version of the same minor release, and there must be one.
/// `asserted` (may be null) is the release an application that links
/// ExecuTorch into its executable states it links, used for runtimes whose
/// version cannot be read.
inline std::string registration_refusal(const char* built_for, const std::vector<RuntimeIdentity>& runtimes,
                                        const char* asserted = nullptr) {
  if (runtimes.empty()) {
    return format("built for executorch %s, but no ExecuTorch runtime (register_backend) was found in this "
                  "process, so the pairing cannot be checked",
                  built_for);
  }
  for (const RuntimeIdentity& r : runtimes) {
    const std::string running = !r.version.empty() ? r.version : (asserted != nullptr ? asserted : "");
    if (running.empty()) {
      return format("built for executorch %s, the ExecuTorch runtime in %s has no readable version "
                    "(executorch/version.py), so the pairing cannot be checked",
                    built_for, r.library.c_str());
    }
    if (!same_minor_release(built_for, running)) {
      return format("built for executorch %s, this process runs executorch %s (%s)", built_for,
                    running.c_str(), r.library.c_str());
    }
  }
  return std::string();
}

/// Registers `backend` under `backend_id` (a string that outlives the
/// process, e.g. a literal). Returns 0, also when this same object is
/// already registered under the id, else the ExecuTorch error code:
/// InvalidArgument when another object holds the id, NotSupported when the
/// process runs another ExecuTorch minor than `built_for`, or a runtime
/// whose version cannot be read (logged with the versions and libraries),
/// or what register_backend returned. `asserted_executorch_version`: for an
/// application that links ExecuTorch into its executable, the release it
/// links (used only where no version can be read).
inline int register_backend(const char* backend_id, executorch::runtime::BackendInterface* backend,
                            const char* built_for, const char* asserted_executorch_version = nullptr) {
  using executorch::runtime::Error;
  const std::string refusal =
      registration_refusal(built_for, identify_runtimes(), asserted_executorch_version);
  if (!refusal.empty()) {
    ET_LOG(Error, "%s",
           log_safe(format("%s: not registering: %s; rebuild the backend for the release this process "
                           "runs",
                           backend_id, refusal.c_str()))
               .c_str());
    return static_cast<int>(Error::NotSupported);
  }
  auto* existing = executorch::runtime::get_backend_class(backend_id);
  if (existing == backend) {
    return 0;
  }
  if (existing != nullptr) {
    ET_LOG(Error, "%s",
           log_safe(format("%s: another library already registered a backend with this id; load "
                           "only one of them",
                           backend_id))
               .c_str());
    return static_cast<int>(Error::InvalidArgument);
  }
  // The record is kept for the process's lifetime, whether or not the
  // registry copies it; the registry holds at most 16 backends anyway.
  static executorch::runtime::Backend records[16];
  static size_t used = 0;
  if (used == sizeof(records) / sizeof(records[0])) {
    ET_LOG(Error, "%s",
           log_safe(format("%s: more than 16 backends registered through backend_kit", backend_id)).c_str());
    return static_cast<int>(Error::InvalidArgument);
  }
  records[used] = executorch::runtime::Backend{backend_id, backend};
  const Error e = executorch::runtime::register_backend(records[used]);
  if (e == Error::Ok) {
    ++used;
  } else {
    ET_LOG(Error, "%s",
           log_safe(format("%s: register_backend failed with error 0x%x (the registry holds at most "
                           "16 backends)",
                           backend_id, static_cast<unsigned>(e)))
               .c_str());
  }
  return static_cast<int>(e);
}

}  // namespace backend_kit
