// conformance_runner: runs the runtime checks' entries of a bundle on the
// target, through ExecuTorch's standard Module API, with the vendor's backend
// linked in (docs/device-runner.md).
//
//   conformance_runner [--timeout SECONDS] BUNDLE_DIR
//   conformance_runner --version
//
// --version prints the runner's version and the executorch it was built
// against, then `machine <uname -m of this process>` (under user-mode
// emulation, the emulated machine) and `built-for <architecture>`.
// Reads BUNDLE_DIR/manifest.txt, runs each entry and writes
// BUNDLE_DIR/results/<id>.txt (and the outputs as .bin tensor files). What
// the runtime logs goes to stderr, with a step line before each load and
// execute. Exit codes: 0 every result written (a runtime error is a result),
// 64 usage, 65 a malformed bundle, 74 a result could not be written (a full
// disk), 124 the timeout passed (the process is stopped by SIGALRM).
#include "entries.h"
#include "manifest.h"

#include <executorch/runtime/platform/runtime.h>

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#ifndef CONFORMANCE_RUNNER_VERSION
#define CONFORMANCE_RUNNER_VERSION "0.0.0"
#endif
#ifndef CONFORMANCE_RUNNER_EXECUTORCH_VERSION
#define CONFORMANCE_RUNNER_EXECUTORCH_VERSION "unknown"
#endif

// The architecture this runner's code is for, named as `uname -m` names it.
#if defined(__aarch64__)
#define CONFORMANCE_RUNNER_ARCH "aarch64"
#elif defined(__x86_64__)
#define CONFORMANCE_RUNNER_ARCH "x86_64"
#elif defined(__arm__)
#define CONFORMANCE_RUNNER_ARCH "arm"
#elif defined(__riscv) && __riscv_xlen == 64
#define CONFORMANCE_RUNNER_ARCH "riscv64"
#elif defined(__i386__)
#define CONFORMANCE_RUNNER_ARCH "i686"
#else
#define CONFORMANCE_RUNNER_ARCH "unknown"
#endif

namespace {

int version() {
  std::printf("conformance_runner %s (executorch %s)\n", CONFORMANCE_RUNNER_VERSION,
              CONFORMANCE_RUNNER_EXECUTORCH_VERSION);
  struct utsname name{};
  std::printf("machine %s\nbuilt-for %s\n", ::uname(&name) == 0 ? name.machine : "unknown",
              CONFORMANCE_RUNNER_ARCH);
  return 0;
}

void on_alarm(int) {
  static const char message[] = "\n[executorch-conformance runner] the timeout passed; stopping\n";
  (void)!::write(2, message, sizeof message - 1);
  ::_exit(124);
}

int usage() {
  std::fprintf(stderr, "usage: conformance_runner [--timeout SECONDS] BUNDLE_DIR | --version\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  long timeout = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--version") {
      return version();
    } else if (arg == "--timeout" && i + 1 < argc) {
      char* end = nullptr;
      timeout = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || timeout < 0) return usage();
    } else if (dir.empty() && arg[0] != '-') {
      dir = arg;
    } else {
      return usage();
    }
  }
  if (dir.empty()) return usage();
  if (timeout > 0) {
    std::signal(SIGALRM, on_alarm);
    ::alarm(static_cast<unsigned>(timeout));
  }
  executorch::runtime::runtime_init();
  std::string error;
  const int code = conformance_runner::run_bundle(dir, error);
  if (code != conformance_runner::kOk) std::fprintf(stderr, "conformance_runner: %s\n", error.c_str());
  return code;
}
