/*
 * The contract blob header ("ECVH"), as specified in docs/blob-header.md.
 *
 * Every processed blob starts with this header. This file parses it and
 * decides, for one runtime, whether a blob may be executed. It depends only
 * on the C++ standard library so that a vendor can reuse it unchanged and a
 * fuzzer can drive it without the ExecuTorch runtime.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace reference_backend {

constexpr char kHeaderMagic[4] = {'E', 'C', 'V', 'H'};
/// Bytes of the fixed part of header format 1 (the backend id follows it).
constexpr uint16_t kHeaderFixedLength = 40;
/// The newest header format this code reads.
constexpr uint16_t kHeaderFormatVersion = 1;
/// Byte offset of the checksum field; it counts as zero when checksumming.
constexpr size_t kChecksumOffset = 32;

struct Version {
  uint16_t major = 0;
  uint16_t minor = 0;
  uint16_t patch = 0;
};

/// Decoded header fields, as stored in the blob.
struct BlobHeader {
  uint16_t header_length = 0;
  uint16_t header_format_version = 0;
  uint16_t blob_format_major = 0;
  uint16_t blob_format_minor = 0;
  Version backend_version;
  Version executorch_version;
  uint64_t payload_size = 0;
  uint32_t checksum = 0;
  uint16_t backend_id_offset = 0;
  uint16_t backend_id_length = 0;
  std::string backend_id;
};

/// What a runtime knows about itself when it judges a blob.
struct RuntimeVersions {
  const char* backend_id;
  const char* distribution;  // e.g. "executorch-reference-backend"
  Version backend_version;
  Version executorch_version;  // the ExecuTorch the runtime was built against
  uint16_t blob_format_major;
  uint16_t blob_format_minor_min;  // oldest minor still read
  uint16_t blob_format_minor;  // newest minor read (what export writes today)
  /// First backend release that writes blob_format_major.blob_format_minor.
  Version current_format_since;
};

enum class Verdict : int {
  /// The blob can run as it is.
  kCompatible = 0,
  /// The blob runs, but a re-export with a current exporter is recommended.
  kCompatibleReexportRecommended = 1,
  /// Well formed, but this runtime cannot run it (a version mismatch).
  kIncompatible = 2,
  /// Not a well-formed blob: wrong magic, truncated, or a bad checksum.
  kInvalid = 3,
};

struct Judgement {
  Verdict verdict = Verdict::kInvalid;
  BlobHeader header;  // valid when verdict is not kInvalid
  std::string message;  // one line; empty when kCompatible
};

/// CRC-32 (the zlib / IEEE 802.3 polynomial) of `size` bytes, continuing
/// from `crc` (pass 0 to start).
uint32_t crc32(uint32_t crc, const uint8_t* data, size_t size);

/// The checksum the header must carry: CRC-32 over the header with its
/// checksum field taken as zero, then the payload.
uint32_t blob_checksum(const uint8_t* blob, size_t header_length,
                       size_t payload_size);

/// Parses the header of `blob` and judges it against `runtime`. Never reads
/// outside [blob, blob + size) and never throws.
Judgement judge_blob(const uint8_t* blob, size_t size,
                     const RuntimeVersions& runtime);

const char* verdict_name(Verdict verdict);

}  // namespace reference_backend
