/*
 * backend_kit/backend.h: the kit's part of a backend's init(). Header-only;
 * needs the ExecuTorch headers (executorch::runtime from the wheel's CMake
 * package) and the definitions backend_kit_add_backend() compiles in.
 *
 *   constexpr backend_kit::BlobFormats kFormats{1, 0, 0, {0, 1, 0}};
 *   const backend_kit::RuntimeVersions kRuntime =
 *       BACKEND_KIT_RUNTIME_VERSIONS("MyBackend", "my-backend", kFormats);
 *
 *   Result<DelegateHandle*> init(BackendInitContext&, FreeableBuffer* processed, ...) const override {
 *     auto blob = backend_kit::accept_blob(*processed, kRuntime);  // judged and logged
 *     if (!blob.ok()) return blob.error();
 *     backend_kit::LittleEndianReader payload = blob->reader();
 *     ...
 *   }
 */
#pragma once

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/platform/log.h>

#include <backend_kit/header.h>

#include <cstddef>
#include <cstdint>
#include <utility>

/// ET_LOG of a printf-style line made safe for every log sink (backend_kit::log_safe):
/// BACKEND_KIT_LOG(Error, "%s: invalid blob: %s", kBackendId, why).
#define BACKEND_KIT_LOG(level, ...) \
  ET_LOG(level, "%s", ::backend_kit::log_safe(::backend_kit::format(__VA_ARGS__)).c_str())

/// The backend's own version, as backend_kit_add_backend() (or
/// backend_kit_target_versions()) compiled it in from the project's VERSION.
#define BACKEND_KIT_BUILT_BACKEND_VERSION                                                       \
  (::backend_kit::Version{BACKEND_KIT_BACKEND_VERSION_MAJOR, BACKEND_KIT_BACKEND_VERSION_MINOR, \
                          BACKEND_KIT_BACKEND_VERSION_PATCH})

/// The ExecuTorch release the library was built against, as backend_kit_add_backend() found it.
#define BACKEND_KIT_BUILT_EXECUTORCH_VERSION                                                          \
  (::backend_kit::Version{BACKEND_KIT_EXECUTORCH_VERSION_MAJOR, BACKEND_KIT_EXECUTORCH_VERSION_MINOR, \
                          BACKEND_KIT_EXECUTORCH_VERSION_PATCH})

/// The RuntimeVersions of this build: `backend_id`, `distribution` and the
/// BlobFormats it reads, with the backend and ExecuTorch versions compiled in.
/// A macro so that the versions are those of the library that uses it.
#define BACKEND_KIT_RUNTIME_VERSIONS(backend_id, distribution, formats)                             \
  (::backend_kit::runtime_versions((backend_id), (distribution), BACKEND_KIT_BUILT_BACKEND_VERSION, \
                                   BACKEND_KIT_BUILT_EXECUTORCH_VERSION, (formats)))

namespace backend_kit {

/// The blob formats a runtime reads: major.oldest_minor to major.newest_minor,
/// and the first backend release that writes major.newest_minor (named in the
/// "re-export with ...>=" fixes).
struct BlobFormats {
  uint16_t major = 1;
  uint16_t oldest_minor = 0;
  uint16_t newest_minor = 0;
  Version newest_since;
};

/// RuntimeVersions from named parts (BACKEND_KIT_RUNTIME_VERSIONS fills in the two versions).
constexpr RuntimeVersions runtime_versions(const char* backend_id, const char* distribution,
                                           Version backend_version, Version executorch_version,
                                           const BlobFormats& formats,
                                           Crc32cFunction crc32c_function = nullptr) {
  return RuntimeVersions{backend_id,           distribution,         backend_version,
                         executorch_version,   formats.major,        formats.oldest_minor,
                         formats.newest_minor, formats.newest_since, crc32c_function};
}

/// What init() may use of a blob the runtime accepted.
struct AcceptedBlob {
  Header header;
  /// Compatible, or compatible with re-export recommended (logged at Info).
  Verdict verdict = Verdict::kCompatible;
  const uint8_t* payload = nullptr;
  size_t payload_size = 0;

  LittleEndianReader reader() const { return LittleEndianReader(payload, payload_size); }
};

/// The ExecuTorch error init() returns for a blob judged `verdict`: InvalidProgram
/// for an invalid blob, DelegateInvalidCompatibility for an incompatible one, Ok otherwise.
inline executorch::runtime::Error error_for(Verdict verdict) {
  using executorch::runtime::Error;
  switch (verdict) {
    case Verdict::kInvalid: return Error::InvalidProgram;
    case Verdict::kIncompatible: return Error::DelegateInvalidCompatibility;
    case Verdict::kCompatibleReexportRecommended:
    case Verdict::kCompatible: return Error::Ok;
  }
  return Error::InvalidProgram;
}

/// Judges the header of `processed` against `rt` (judge_blob) and logs the
/// verdict's one line: at Error for a refusal, at Info for an old blob that
/// still runs. Returns the accepted blob, or the error init() must return.
/// `processed` is not freed: its payload stays readable until the caller frees it.
inline executorch::runtime::Result<AcceptedBlob> accept_blob(
    const executorch::runtime::FreeableBuffer& processed, const RuntimeVersions& rt) {
  const auto* data = static_cast<const uint8_t*>(processed.data());
  Judgement j = judge_blob(data, processed.size(), rt);
  const executorch::runtime::Error error = error_for(j.verdict);
  if (error != executorch::runtime::Error::Ok) {
    BACKEND_KIT_LOG(Error, "%s", j.message.c_str());
    return error;
  }
  if (j.verdict == Verdict::kCompatibleReexportRecommended) {
    BACKEND_KIT_LOG(Info, "%s", j.message.c_str());
  }
  AcceptedBlob blob;
  blob.verdict = j.verdict;
  blob.payload = data + j.header.header_length;
  blob.payload_size = static_cast<size_t>(j.header.payload_size);
  blob.header = std::move(j.header);
  return blob;
}

}  // namespace backend_kit
