// The runner as a shared library (built with -DRUNNER_IN_PROCESS=ON): a process that already runs
// ExecuTorch's runtime, with the vendor's backend registered, runs a bundle's entries in itself, on
// threads of its own (conformance/vendor/in_process_runner.py loads it with ctypes, which releases the
// GIL for the call).
#include "entries.h"

#include <executorch/runtime/platform/runtime.h>

#include <cstddef>
#include <cstring>
#include <string>

// Runs the bundle in `dir` as conformance_runner does; returns its exit code (main.cpp) and, unless it is
// 0, copies the reason into `error` (at most `size` bytes, NUL-terminated).
extern "C" int conformance_runner_run_bundle(const char* dir, char* error, size_t size) {
  executorch::runtime::runtime_init();
  std::string why;
  const int code = conformance_runner::run_bundle(dir, why);
  if (code != conformance_runner::kOk && error != nullptr && size > 0) {
    std::strncpy(error, why.c_str(), size - 1);
    error[size - 1] = '\0';
  }
  return code;
}
