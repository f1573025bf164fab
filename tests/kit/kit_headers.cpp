// Compiled by tests/kit/test_kit_api.py with -Wall -Wextra -Werror against the
// executorch wheel's headers: the kit's ExecuTorch-facing headers build cleanly
// together, and BACKEND_KIT_RUNTIME_VERSIONS fills in what the positional
// RuntimeVersions spelling spells out (checked at compile time).
#include <backend_kit/adapter.h>
#include <backend_kit/backend.h>
#include <backend_kit/register.h>

namespace {

constexpr backend_kit::BlobFormats kFormats{1, 2, 3, {0, 4, 0}};
constexpr backend_kit::RuntimeVersions kNamed =
    BACKEND_KIT_RUNTIME_VERSIONS("KitBackend", "kit-backend", kFormats);
constexpr backend_kit::RuntimeVersions kPositional = {
    "KitBackend", "kit-backend", {0, 5, 7}, {1, 5, 1}, 1, 2, 3, {0, 4, 0},
};

constexpr bool same(const backend_kit::Version& a, const backend_kit::Version& b) {
  return a.major == b.major && a.minor == b.minor && a.patch == b.patch;
}

static_assert(same(kNamed.backend_version, kPositional.backend_version), "the build's backend version");
static_assert(same(kNamed.executorch_version, kPositional.executorch_version),
              "the build's executorch version");
static_assert(kNamed.blob_format_major == 1 && kNamed.blob_format_minor_min == 2 &&
                  kNamed.blob_format_minor == 3,
              "the formats read");
static_assert(same(kNamed.current_format_since, kPositional.current_format_since),
              "the newest format's release");
static_assert(kNamed.crc32c_function == nullptr, "the default CRC");

}  // namespace

int main() {
  using executorch::runtime::Error;
  const bool errors =
      backend_kit::error_for(backend_kit::Verdict::kInvalid) == Error::InvalidProgram &&
      backend_kit::error_for(backend_kit::Verdict::kIncompatible) == Error::DelegateInvalidCompatibility &&
      backend_kit::error_for(backend_kit::Verdict::kCompatibleReexportRecommended) == Error::Ok &&
      backend_kit::error_for(backend_kit::Verdict::kCompatible) == Error::Ok;
  backend_kit::HeaderAdapter adapter(kNamed, "NoSuchBackend");
  return errors && adapter.wrapped_id()[0] == 'N' ? 0 : 1;
}
