#include <reference_backend/blob_header.h>

#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace reference_backend {
namespace {

// CRC-32 is written out here rather than taken from zlib: the runtime library
// is meant to be copied onto embedded targets where zlib may be absent, and a
// table-driven CRC is twenty lines. Tests check it against Python's zlib.crc32.
std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) {
      c = (c & 1u) ? (0xEDB88320u ^ (c >> 1)) : (c >> 1);
    }
    table[i] = c;
  }
  return table;
}

uint16_t read_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
      (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

uint64_t read_u64(const uint8_t* p) {
  return static_cast<uint64_t>(read_u32(p)) |
      (static_cast<uint64_t>(read_u32(p + 4)) << 32);
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

std::string format(const char* fmt, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  return std::string(buffer);
}

std::string version_string(const Version& v) {
  return format("%u.%u.%u", v.major, v.minor, v.patch);
}

/// Printable form of up to four bytes, for error messages about magic values.
std::string printable(const uint8_t* p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
      out.push_back(static_cast<char>(p[i]));
    } else {
      out += format("\\x%02x", p[i]);
    }
  }
  return out;
}

Judgement invalid(const RuntimeVersions& rt, const std::string& what) {
  Judgement j;
  j.verdict = Verdict::kInvalid;
  j.message = format("%s: invalid blob: %s", rt.backend_id, what.c_str());
  return j;
}

/// The blob's versions, shared by every verdict message. Messages stay
/// short: ExecuTorch's logger cuts a line at 255 bytes.
std::string describe_blob(const BlobHeader& h) {
  return format("format %u.%u, written by %s with executorch %s",
                h.blob_format_major, h.blob_format_minor,
                version_string(h.backend_version).c_str(),
                version_string(h.executorch_version).c_str());
}

bool newer(const Version& a, const Version& b) {
  if (a.major != b.major) return a.major > b.major;
  if (a.minor != b.minor) return a.minor > b.minor;
  return a.patch > b.patch;
}

std::string describe_runtime(const RuntimeVersions& rt) {
  return format("runtime %s for executorch %s reads formats %u.%u-%u.%u",
                version_string(rt.backend_version).c_str(),
                version_string(rt.executorch_version).c_str(),
                rt.blob_format_major, rt.blob_format_minor_min,
                rt.blob_format_major, rt.blob_format_minor);
}

}  // namespace

uint32_t crc32(uint32_t crc, const uint8_t* data, size_t size) {
  static const std::array<uint32_t, 256> table = make_crc_table();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) {
    crc = table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
  }
  return ~crc;
}

uint32_t blob_checksum(const uint8_t* blob, size_t header_length,
                       size_t payload_size) {
  static const uint8_t zeros[4] = {0, 0, 0, 0};
  uint32_t crc = crc32(0, blob, kChecksumOffset);
  crc = crc32(crc, zeros, 4);
  crc = crc32(crc, blob + kChecksumOffset + 4,
              header_length - kChecksumOffset - 4);
  return crc32(crc, blob + header_length, payload_size);
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCompatible:
      return "compatible";
    case Verdict::kCompatibleReexportRecommended:
      return "compatible, re-export recommended";
    case Verdict::kIncompatible:
      return "incompatible";
    case Verdict::kInvalid:
      return "invalid";
  }
  return "unknown";
}

Judgement judge_blob(const uint8_t* blob, size_t size,
                     const RuntimeVersions& rt) {
  if (blob == nullptr || size < 8) {
    return invalid(rt, format("truncated: %zu bytes, the header needs at least %u",
                              size, kHeaderFixedLength));
  }
  if (std::memcmp(blob, kHeaderMagic, 4) != 0) {
    return invalid(rt, format("wrong magic '%s' at offset 0, expected 'ECVH' "
                              "(not a blob of this backend, or corrupted)",
                              printable(blob, 4).c_str()));
  }
  BlobHeader h;
  h.header_length = read_u16(blob + 4);
  h.header_format_version = read_u16(blob + 6);
  if (h.header_format_version == 0 ||
      h.header_format_version > kHeaderFormatVersion) {
    Judgement j;
    j.verdict = Verdict::kIncompatible;
    j.header = h;
    j.message = format(
        "%s: incompatible blob: header format %u, this runtime reads 1-%u; %s; "
        "fix: re-export with %s==%s",
        rt.backend_id, h.header_format_version, kHeaderFormatVersion,
        describe_runtime(rt).c_str(), rt.distribution,
        version_string(rt.backend_version).c_str());
    return j;
  }
  if (h.header_length < kHeaderFixedLength || h.header_length > size) {
    return invalid(rt, format("truncated or corrupt header: header_length %u, "
                              "blob size %zu, minimum %u",
                              h.header_length, size, kHeaderFixedLength));
  }
  h.blob_format_major = read_u16(blob + 8);
  h.blob_format_minor = read_u16(blob + 10);
  h.backend_version = {read_u16(blob + 12), read_u16(blob + 14), read_u16(blob + 16)};
  h.executorch_version = {read_u16(blob + 18), read_u16(blob + 20),
                          read_u16(blob + 22)};
  h.payload_size = read_u64(blob + 24);
  h.checksum = read_u32(blob + 32);
  h.backend_id_offset = read_u16(blob + 36);
  h.backend_id_length = read_u16(blob + 38);
  if (h.payload_size > size - h.header_length) {
    return invalid(rt, format("truncated: header promises a %llu-byte payload "
                              "after a %u-byte header, blob has %zu bytes",
                              static_cast<unsigned long long>(h.payload_size),
                              h.header_length, size));
  }
  uint32_t actual = blob_checksum(blob, h.header_length, h.payload_size);
  if (actual != h.checksum) {
    return invalid(rt, format("checksum mismatch: header says 0x%08x, "
                              "header and payload give 0x%08x (corrupted blob)",
                              h.checksum, actual));
  }
  if (h.backend_id_offset < kHeaderFixedLength || h.backend_id_length == 0 ||
      static_cast<size_t>(h.backend_id_offset) + h.backend_id_length >
          h.header_length) {
    return invalid(rt, format("backend id [offset %u, length %u] lies outside "
                              "the %u-byte header",
                              h.backend_id_offset, h.backend_id_length,
                              h.header_length));
  }
  h.backend_id.assign(reinterpret_cast<const char*>(blob + h.backend_id_offset),
                      h.backend_id_length);
  if (h.backend_id != rt.backend_id) {
    return invalid(rt, format("blob was written for backend '%s', not '%s'",
                              printable(blob + h.backend_id_offset,
                                        h.backend_id_length < 64 ? h.backend_id_length : 64)
                                  .c_str(),
                              rt.backend_id));
  }

  Judgement j;
  j.header = h;
  const std::string blob_text = describe_blob(h);
  const std::string runtime_text = describe_runtime(rt);
  if (h.blob_format_major > rt.blob_format_major ||
      (h.blob_format_major == rt.blob_format_major &&
       h.blob_format_minor > rt.blob_format_minor)) {
    j.verdict = Verdict::kIncompatible;
    if (!newer(h.backend_version, rt.backend_version)) {
      // A writer no newer than this runtime cannot have written a format this
      // runtime does not read: the header was edited or damaged.
      j.message = format(
          "%s: incompatible blob: %s; %s; fix: re-export the model, %s %s "
          "writes no format %u.%u (the blob was altered)",
          rt.backend_id, blob_text.c_str(), runtime_text.c_str(), rt.distribution,
          version_string(h.backend_version).c_str(), h.blob_format_major,
          h.blob_format_minor);
    } else {
      j.message = format(
          "%s: incompatible blob: %s; %s; fix: use a runtime from %s>=%s, or "
          "re-export with %s",
          rt.backend_id, blob_text.c_str(), runtime_text.c_str(), rt.distribution,
          version_string(h.backend_version).c_str(),
          version_string(rt.backend_version).c_str());
    }
  } else if (h.blob_format_major < rt.blob_format_major ||
             h.blob_format_minor < rt.blob_format_minor_min) {
    j.verdict = Verdict::kIncompatible;
    j.message = format("%s: incompatible blob: %s; %s; fix: re-export with %s>=%s",
                       rt.backend_id, blob_text.c_str(), runtime_text.c_str(),
                       rt.distribution,
                       version_string(rt.current_format_since).c_str());
  } else if (h.blob_format_minor < rt.blob_format_minor) {
    j.verdict = Verdict::kCompatibleReexportRecommended;
    j.message = format("%s: warning: old blob, runs; %s; %s; fix: re-export "
                       "with %s>=%s",
                       rt.backend_id, blob_text.c_str(), runtime_text.c_str(),
                       rt.distribution,
                       version_string(rt.current_format_since).c_str());
  } else {
    j.verdict = Verdict::kCompatible;
  }
  return j;
}

}  // namespace reference_backend
