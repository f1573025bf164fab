// A defective runtime for the suite's own tests: it crashes or hangs where the
// environment variable MISBEHAVE says ("init:segv", "init:abort", "init:hang",
// "execute:segv", "execute:abort", "execute:hang"), and otherwise forwards to
// the reference runtime compiled into the same library under the id
// "MisbehavingInner". The suite must turn each fault into a failed check of
// its own, never into a dead or hanging run.
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using namespace executorch::runtime;

void misbehave(const char* where) {
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
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
}

BackendInterface* inner() {
  return get_backend_class("MisbehavingInner");
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
    return inner()->execute(context, handle, args);
  }

  void destroy(DelegateHandle* handle) const override { inner()->destroy(handle); }
};

MisbehavingBackend backend;
Backend registration{"MisbehavingBackend", &backend};
const Error registered = register_backend(registration);

}  // namespace
