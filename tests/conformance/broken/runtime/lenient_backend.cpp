// A defective runtime for the suite's own tests: it never refuses a blob for
// its version, so the conformance check RT-5 must catch it. With
// LENIENT_MINOR_ONLY set it refuses a blob of another header format or blob
// format major, as it should, but runs a newer minor it cannot know.
#include <reference_backend/bind.h>
#include <reference_backend/executor.h>
#include <reference_backend/versions.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <cstdlib>

#include <vector>

namespace {

using namespace executorch::runtime;
using reference_backend::Executor;

class LenientBackend final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext&, FreeableBuffer* processed,
                               ArrayRef<CompileSpec>) const override {
    const auto* blob = static_cast<const uint8_t*>(processed->data());
    auto j = reference_backend::judge_blob(blob, processed->size(), reference_backend::runtime_versions());
    if (j.verdict == reference_backend::Verdict::kInvalid) {
      return Error::InvalidProgram;
    }
    if (j.verdict == reference_backend::Verdict::kIncompatible &&
        std::getenv("LENIENT_MINOR_ONLY") != nullptr &&
        (j.header.header_format_version == 0 ||
         j.header.header_format_version > backend_kit::kHeaderFormatVersion ||
         j.header.blob_format_major != reference_backend::runtime_versions().blob_format_major)) {
      ET_LOG(Error, "%s", j.message.c_str());
      return Error::DelegateInvalidCompatibility;
    }
    // The defect: kIncompatible is run as if it were compatible.
    reference_backend::Graph graph;
    std::string error;
    if (!reference_backend::parse_graph(blob + j.header.header_length, j.header.payload_size,
                                        j.header.blob_format_minor, graph, error)) {
      return Error::InvalidProgram;
    }
    return new Executor(std::move(graph));
  }

  Error execute(BackendExecutionContext&, DelegateHandle* handle, Span<EValue*> args) const override {
    // Runs as the reference runtime does (argument checks, output resizing).
    auto& exec = *static_cast<Executor*>(handle);
    std::vector<const void*> in(exec.graph().inputs.size());
    std::vector<void*> out(exec.graph().outputs.size());
    return reference_backend::bind_and_run(exec, args, in, out);
  }

  void destroy(DelegateHandle* handle) const override { delete static_cast<Executor*>(handle); }
};

LenientBackend backend;
Backend registration{"LenientBackend", &backend};
const Error registered = register_backend(registration);

}  // namespace
