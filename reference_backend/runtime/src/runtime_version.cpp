#include <reference_backend/runtime_version.h>

#include <executorch/runtime/backend/interface.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#define REFERENCE_BACKEND_HAVE_DLADDR 1
#endif

namespace reference_backend {
namespace {

std::string parent_dir(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

/// The string assigned to __version__ in a version.py, or "".
std::string read_version_py(const std::string& path) {
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

bool major_minor(const std::string& version, int& major, int& minor) {
  return std::sscanf(version.c_str(), "%d.%d", &major, &minor) == 2;
}

}  // namespace

RuntimeIdentity identify_runtime() {
  RuntimeIdentity id;
#ifdef REFERENCE_BACKEND_HAVE_DLADDR
  Dl_info info{};
  auto* symbol = reinterpret_cast<void*>(&executorch::runtime::register_backend);
  if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr) {
    id.library = info.dli_fname;
    id.version = read_version_py(parent_dir(parent_dir(id.library)) + "/version.py");
  }
#endif
  return id;
}

bool same_minor_release(const std::string& built, const std::string& running) {
  int bmaj = 0, bmin = 0, rmaj = 0, rmin = 0;
  if (!major_minor(built, bmaj, bmin) || !major_minor(running, rmaj, rmin)) {
    return true;
  }
  return bmaj == rmaj && bmin == rmin;
}

}  // namespace reference_backend
