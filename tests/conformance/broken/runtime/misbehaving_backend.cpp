// A defective runtime for the suite's own tests: it crashes, hangs or lies where
// the environment variable MISBEHAVE says ("init:segv", "execute:hang",
// "execute:exit0", "init:later-terminate", ...: WHERE:HOW, see misbehave() and
// corrupt_outputs() for every HOW), and otherwise forwards to the reference
// runtime compiled into the same library, unregistered (its blobs name the id
// "MisbehavingInner", which only this library's inner runtime reads). The
// suite must turn each fault into a failed check of its own, never into a dead
// or hanging run, and never into a pass.
#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace executorch::runtime;

[[noreturn]] void hang() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

int recurse(int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  return depth > 0 ? recurse(depth + 1) + frame[0] : 0;
}

// The time of the runtime's last call (init, execute, destroy), for MISBEHAVE=init:kill-when-idle.
std::atomic<long long> last_call_ms{0};

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void misbehave(const char* where) {
  last_call_ms = now_ms();
  const char* what = std::getenv("MISBEHAVE");
  if (what == nullptr) return;
  const size_t n = std::strlen(where);
  if (std::strncmp(what, where, n) != 0 || what[n] != ':') return;
  const char* how = what + n + 1;
  ET_LOG(Error, "MisbehavingBackend: %s is about to %s", where, how);
  if (std::strcmp(how, "segv") == 0) {
    std::raise(SIGSEGV);
  } else if (std::strcmp(how, "abort") == 0) {
    std::abort();
  } else if (std::strcmp(how, "hang") == 0) {
    hang();
  } else if (std::strcmp(how, "exit0") == 0) {  // a clean exit in the middle of a task
    std::exit(0);
  } else if (std::strcmp(how, "_exit0") == 0) {
    _exit(0);
  } else if (std::strcmp(how, "quick_exit") == 0) {
    std::quick_exit(0);
  } else if (std::strcmp(how, "sigkill") == 0) {
    std::raise(SIGKILL);
  } else if (std::strcmp(how, "sigbus") == 0) {
    std::raise(SIGBUS);
  } else if (std::strcmp(how, "sigfpe") == 0) {
    std::raise(SIGFPE);
  } else if (std::strcmp(how, "stack-overflow") == 0) {
    std::fprintf(stderr, "%d\n", recurse(1));
  } else if (std::strcmp(how, "later-terminate") == 0) {  // fires during a later task
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      std::terminate();
    }).detach();
  } else if (std::strcmp(how, "kill-when-idle") == 0) {  // after the last call: no later task meets it
    static std::once_flag started;
    std::call_once(started, [] {
      std::thread([] {
        for (;;) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          if (now_ms() - last_call_ms > 1000) std::raise(SIGKILL);
        }
      }).detach();
    });
  } else if (std::strcmp(how, "spew") == 0) {  // 300 MB of log, then carries on
    std::string line(1023, 'x');
    line += '\n';
    for (int i = 0; i < 300 * 1024; ++i) ::write(2, line.data(), line.size());
  } else if (std::strcmp(how, "imitate-then-segv") == 0) {  // text that looks like the suite's markers
    std::fprintf(stderr, "\n[executorch-conformance step] eager forward of sample model 'nothing'\n");
    std::fflush(stderr);
    std::raise(SIGSEGV);
  } else if (std::strcmp(how, "close-fds-then-segv") == 0) {
    ::close(1);
    ::close(2);
    std::raise(SIGSEGV);
  } else if (std::strcmp(how, "ignore-term-hang") == 0) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::signal(SIGTERM, SIG_IGN);
    hang();
  } else if (std::strcmp(how, "fork-hang") == 0) {  // a child keeps every descriptor open, then a hang
    if (::fork() == 0) {
      std::signal(SIGTERM, SIG_IGN);
      for (int i = 0; i < 120; ++i) ::sleep(1);
      _exit(0);
    }
    hang();
  } else if (std::strcmp(how, "close-all-fds") == 0) {  // daemon-style clean-up: the pipes to the suite too
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
  } else if (std::strcmp(how, "garbage-to-fds") == 0) {  // writes junk into every open descriptor
    const char junk[] = "\x80\x04garbage that is no pickle\n";
    for (int fd = 3; fd < 64; ++fd) ::write(fd, junk, sizeof junk - 1);
  } else if (std::strcmp(how, "slow") == 0) {  // a correct init() that compiles for MISBEHAVE_SLOW_S seconds
    const char* seconds = std::getenv("MISBEHAVE_SLOW_S");
    std::this_thread::sleep_for(std::chrono::seconds(seconds != nullptr ? std::atoi(seconds) : 10));
  } else if (std::strcmp(how, "leak") == 0) {  // keeps 1 MiB per call, never freed (untouched: not resident)
    static std::mutex kept_mutex;
    static std::vector<void*> kept;
    std::lock_guard<std::mutex> lock(kept_mutex);
    kept.push_back(std::malloc(1 << 20));
  } else if (std::strcmp(how, "memory-bomb") == 0) {  // allocates (and touches) until it is stopped
    for (;;) {
      auto* block = static_cast<char*>(std::malloc(64 << 20));
      if (block == nullptr) {
        ET_LOG(Error, "MisbehavingBackend: out of memory");
        std::abort();
      }
      std::memset(block, 1, 64 << 20);
    }
  }
}

// What MISBEHAVE=execute:HOW does to outputs that the reference runtime computed correctly.
void corrupt_outputs(Span<EValue*> args, size_t first_output) {
  const char* what = std::getenv("MISBEHAVE");
  if (what == nullptr || std::strncmp(what, "outputs:", 8) != 0) return;
  const char* how = what + 8;
  static int calls = 0;
  ++calls;
  for (size_t i = first_output; i < args.size(); ++i) {
    if (args[i] == nullptr || !args[i]->isTensor()) continue;
    auto& t = args[i]->toTensor();
    if (t.scalar_type() != executorch::aten::ScalarType::Float) continue;
    float* data = t.mutable_data_ptr<float>();
    if (std::strcmp(how, "nan") == 0) {
      data[0] = std::nanf("");
    } else if (std::strcmp(how, "flaky") == 0 && calls % 3 == 0) {  // every third execution is off
      data[0] += 1.0f;
    }
  }
}

// MISBEHAVE=execute:segv-on-17: crashes only on an execution with a 17-element tensor among its arguments
// (the operator corpus's 'rank1_odd' cases), so that a crash must be isolated to the cases that cause it.
void crash_on_17_elements(Span<EValue*> args) {
  const char* what = std::getenv("MISBEHAVE");
  if (what == nullptr || std::strcmp(what, "execute:segv-on-17") != 0) return;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != nullptr && args[i]->isTensor() && args[i]->toTensor().numel() == 17) {
      ET_LOG(Error, "MisbehavingBackend: execute of a 17-element tensor is about to segv");
      std::raise(SIGSEGV);
    }
  }
}

// MISBEHAVE=execute:shared-scratch: every handle's outputs pass through one static scratch buffer, with no
// lock, as a runtime keeping its intermediate values in a global would. Alone each execute is right; two
// methods executing at once on two threads read each other's values (the window is widened to make the race
// likely; the defect is the sharing, not the wait).
void through_shared_scratch(Span<EValue*> args, size_t first_output) {
  const char* what = std::getenv("MISBEHAVE");
  if (what == nullptr || std::strcmp(what, "execute:shared-scratch") != 0) return;
  static unsigned char scratch[1 << 16];
  for (size_t i = first_output; i < args.size(); ++i) {
    if (args[i] == nullptr || !args[i]->isTensor()) continue;
    auto& t = args[i]->toTensor();
    const size_t n = t.nbytes() < sizeof scratch ? t.nbytes() : sizeof scratch;
    std::memcpy(scratch, t.const_data_ptr(), n);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::memcpy(t.mutable_data_ptr(), scratch, n);
  }
}

BackendInterface* inner() {
  return &reference_backend::backend_interface();
}

class MisbehavingBackend final : public BackendInterface {
 public:
  bool is_available() const override { return inner() != nullptr && inner()->is_available(); }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    misbehave("init");
    return inner()->init(context, processed, specs);
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle, Span<EValue*> args) const override {
    misbehave("execute");
    crash_on_17_elements(args);
    const Error error = inner()->execute(context, handle, args);
    if (error == Error::Ok) corrupt_outputs(args, outputs_from(args));
    if (error == Error::Ok) through_shared_scratch(args, outputs_from(args));
    return error;
  }

  void destroy(DelegateHandle* handle) const override {
    misbehave("destroy");
    inner()->destroy(handle);
  }

 private:
  // The delegate's arguments are its inputs then its outputs; the reference samples have one output.
  static size_t outputs_from(Span<EValue*> args) { return args.size() > 0 ? args.size() - 1 : 0; }
};

MisbehavingBackend backend;
Backend registration{"MisbehavingBackend", &backend};
const Error registered = register_backend(registration);

}  // namespace
