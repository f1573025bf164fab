// A runtime for the suite's own tests that computes as the reference runtime does, but with the CPU's
// flush-to-zero and denormals-are-zero modes on while it executes (as many accelerators and some CPU
// kernels do): a subnormal operand is read as zero and a subnormal result written as zero. It forwards to
// the reference runtime compiled into the same library, unregistered (its blobs name REFERENCE_BACKEND_ID),
// and registers under FLUSH_ID alone. Whether that conforms depends on what its descriptor declares
// (OperatorDeclaration.subnormals).
#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace {

using namespace executorch::runtime;

BackendInterface* inner() {
  return &reference_backend::backend_interface();
}

/// Flush-to-zero and denormals-are-zero on for the life of the object; the caller's modes after.
class FlushingSubnormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FlushingSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ (bit 15), DAZ (bit 6)
  ~FlushingSubnormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#elif defined(__aarch64__)
  FlushingSubnormals() {
    __asm__ volatile("mrs %0, fpcr" : "=r"(saved_));
    const uint64_t flushing = saved_ | (uint64_t{1} << 24);  // FZ: both operands and results
    __asm__ volatile("msr fpcr, %0" : : "r"(flushing));
  }
  ~FlushingSubnormals() { __asm__ volatile("msr fpcr, %0" : : "r"(saved_)); }

 private:
  uint64_t saved_;
#else
#error "flushes_subnormals_backend.cpp knows the flush-to-zero control of x86 and AArch64 only"
#endif
  FlushingSubnormals(const FlushingSubnormals&) = delete;
  FlushingSubnormals& operator=(const FlushingSubnormals&) = delete;
};

class FlushingBackend final : public BackendInterface {
 public:
  bool is_available() const override { return inner() != nullptr && inner()->is_available(); }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    return inner()->init(context, processed, specs);
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle, Span<EValue*> args) const override {
    FlushingSubnormals flushing;
    return inner()->execute(context, handle, args);
  }

  void destroy(DelegateHandle* handle) const override { inner()->destroy(handle); }
};

FlushingBackend backend;
Backend registration{FLUSH_ID, &backend};
const Error registered = register_backend(registration);

}  // namespace
