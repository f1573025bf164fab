#include <reference_backend/versions.h>

#if REFERENCE_BACKEND_PARALLEL_CRC
#include <backend_kit/parallel_crc.h>
#endif

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
#if REFERENCE_BACKEND_PARALLEL_CRC
      &backend_kit::crc32c_parallel,
#else
      &backend_kit::crc32c,
#endif
  };
  return versions;
}

}  // namespace reference_backend
