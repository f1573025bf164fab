// judge_blob() on arbitrary bytes: never reads out of bounds (ASan), never
// hits undefined behaviour (UBSan), and its result is self-consistent.
#include <reference_backend/versions.h>

#include <cstdlib>

using namespace reference_backend;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Judgement j = judge_blob(data, size, runtime_versions());
  const bool compatible = j.verdict == Verdict::kCompatible;
  // A verdict other than "compatible" always carries its reason; a message
  // is one log line.
  if (compatible != j.message.empty()) std::abort();
  if (j.message.find('\n') != std::string::npos) std::abort();
  if (j.verdict == Verdict::kCompatible || j.verdict == Verdict::kCompatibleReexportRecommended) {
    // Runnable blobs are fully inside the buffer.
    if (j.header.header_length > size || j.header.payload_size > size - j.header.header_length) {
      std::abort();
    }
  }
  return 0;
}
