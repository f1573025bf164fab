#include <reference_backend/versions.h>

namespace reference_backend {

const RuntimeVersions& runtime_versions() {
  static const RuntimeVersions versions = {
      kBackendId,
      kDistribution,
      {REFERENCE_BACKEND_VERSION_MAJOR, REFERENCE_BACKEND_VERSION_MINOR,
       REFERENCE_BACKEND_VERSION_PATCH},
      {REFERENCE_BACKEND_EXECUTORCH_MAJOR, REFERENCE_BACKEND_EXECUTORCH_MINOR,
       REFERENCE_BACKEND_EXECUTORCH_PATCH},
      kBlobFormatMajor,
      kBlobFormatMinorMin,
      kBlobFormatMinor,
      kCurrentFormatSince,
  };
  return versions;
}

}  // namespace reference_backend
