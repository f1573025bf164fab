#include <reference_backend/versions.h>

namespace reference_backend {

const RuntimeVersions& runtime_versions() {
  static const RuntimeVersions versions = {
      kBackendId,
      kDistribution,
      {BACKEND_KIT_BACKEND_VERSION_MAJOR, BACKEND_KIT_BACKEND_VERSION_MINOR,
       BACKEND_KIT_BACKEND_VERSION_PATCH},
      {BACKEND_KIT_EXECUTORCH_VERSION_MAJOR, BACKEND_KIT_EXECUTORCH_VERSION_MINOR,
       BACKEND_KIT_EXECUTORCH_VERSION_PATCH},
      kBlobFormatMajor,
      kBlobFormatMinorMin,
      kBlobFormatMinor,
      kCurrentFormatSince,
  };
  return versions;
}

}  // namespace reference_backend
