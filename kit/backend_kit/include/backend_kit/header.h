/*
 * backend_kit/header.h: the contract blob header ("ECVH") and the runtime's
 * verdict, header-only, C++17 standard library only (docs/blob-header.md).
 *
 * The C++ twin of backend_kit/header.py: for every blob both give the same
 * verdict and the same one-line message (kit/vectors/blob_headers.json).
 * Also the little-endian reader and the printf-style formatter that a
 * backend's own payload parser can use.
 */
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#if defined(__GNUC__) || defined(__clang__)
#define BACKEND_KIT_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define BACKEND_KIT_PRINTF(fmt_index, first_arg)
#endif

namespace backend_kit {

// ---------------------------------------------------------------------------
// Little-endian loads, and a bounds-aware reader over a byte range.

inline uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
      (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

inline uint64_t load_u64(const uint8_t* p) {
  return static_cast<uint64_t>(load_u32(p)) | (static_cast<uint64_t>(load_u32(p + 4)) << 32);
}

inline float load_f32(const uint8_t* p) {
  const uint32_t bits = load_u32(p);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Reads little-endian scalars in sequence. The caller checks has(n) before
/// reading n bytes; the reads themselves do not check.
class LittleEndianReader {
 public:
  LittleEndianReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool has(size_t n) const { return n <= size_ - pos_; }
  size_t pos() const { return pos_; }
  size_t size() const { return size_; }
  void seek(size_t pos) { pos_ = pos; }
  void skip(size_t n) { pos_ += n; }

  uint8_t u8() { return data_[pos_++]; }
  uint16_t u16() { return advance(load_u16(data_ + pos_), 2); }
  uint32_t u32() { return advance(load_u32(data_ + pos_), 4); }
  uint64_t u64() { return advance(load_u64(data_ + pos_), 8); }
  float f32() { return advance(load_f32(data_ + pos_), 4); }

 private:
  template <typename T>
  T advance(T value, size_t n) {
    pos_ += n;
    return value;
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------
// printf into a std::string, of any length.

inline std::string vformat(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return std::string();
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&out[0], out.size(), fmt, args);
  out.resize(static_cast<size_t>(n));
  return out;
}

inline std::string format(const char* fmt, ...) BACKEND_KIT_PRINTF(1, 2);

inline std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string out = vformat(fmt, args);
  va_end(args);
  return out;
}

/// `n` bytes for a log line: printable ASCII as is, other bytes and '\' as \xNN.
inline std::string printable(const uint8_t* p, size_t n) {
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

// ---------------------------------------------------------------------------
// The header.

constexpr char kHeaderMagic[4] = {'E', 'C', 'V', 'H'};
/// Bytes of the fixed part of header format 1 (the backend id follows it).
constexpr uint16_t kHeaderFixedLength = 40;
/// The newest header format this code reads.
constexpr uint16_t kHeaderFormatVersion = 1;
/// Fewer bytes than this cannot even say which header format they are.
constexpr size_t kMinJudgeable = 8;
/// Byte offset of the checksum field; it counts as zero when checksumming.
constexpr size_t kChecksumOffset = 32;
/// Longest id a backend id prefix is printed with in messages.
constexpr size_t kMaxPrintedId = 64;

struct Version {
  uint16_t major = 0;
  uint16_t minor = 0;
  uint16_t patch = 0;
};

inline bool newer(const Version& a, const Version& b) {
  if (a.major != b.major) return a.major > b.major;
  if (a.minor != b.minor) return a.minor > b.minor;
  return a.patch > b.patch;
}

inline std::string version_string(const Version& v) {
  return format("%u.%u.%u", v.major, v.minor, v.patch);
}

/// Decoded header fields, as stored in the blob.
struct Header {
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
  kCompatible = 0,  // runs as it is
  kCompatibleReexportRecommended = 1,  // runs; an older minor than the newest read
  kIncompatible = 2,  // well formed, but this runtime cannot run it
  kInvalid = 3,  // not a well-formed blob of this backend
};

inline const char* verdict_name(Verdict verdict) {
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

struct Judgement {
  Verdict verdict = Verdict::kInvalid;
  /// All fields valid unless kInvalid; for an unknown header format
  /// (kIncompatible, empty backend_id) only the first two.
  Header header;
  std::string message;  // one line; empty when kCompatible
};

/// CRC-32 (the zlib / IEEE 802.3 polynomial, reflected 0xEDB88320) of
/// `size` bytes, continuing from `crc` (pass 0 to start). Bitwise rather
/// than table-driven: headers are small and the table would cost 1 KiB.
inline uint32_t crc32(uint32_t crc, const uint8_t* data, size_t size) {
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
  }
  return ~crc;
}

/// The checksum the header must carry: CRC-32 over the header with its
/// checksum field taken as zero, then the payload.
inline uint32_t blob_checksum(const uint8_t* blob, size_t header_length, size_t payload_size) {
  static const uint8_t zeros[4] = {0, 0, 0, 0};
  uint32_t crc = crc32(0, blob, kChecksumOffset);
  crc = crc32(crc, zeros, 4);
  crc = crc32(crc, blob + kChecksumOffset + 4, header_length - kChecksumOffset - 4);
  return crc32(crc, blob + header_length, payload_size);
}

/// Whether `n` bytes are well-formed UTF-8 (no overlongs, no surrogates).
inline bool is_utf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    size_t extra = 0;
    uint32_t cp = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07u, min = 0x10000;
    } else {
      return false;
    }
    if (n - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

namespace detail {

inline Judgement judged(Verdict verdict, const Header& h, std::string message) {
  Judgement j;
  j.verdict = verdict;
  j.header = h;
  j.message = std::move(message);
  return j;
}

inline Judgement invalid(const RuntimeVersions& rt, const std::string& problem) {
  return judged(Verdict::kInvalid, Header{}, format("%s: invalid blob: %s", rt.backend_id, problem.c_str()));
}

inline std::string describe_runtime(const RuntimeVersions& rt) {
  return format("runtime %s for executorch %s reads formats %u.%u-%u.%u",
                version_string(rt.backend_version).c_str(),
                version_string(rt.executorch_version).c_str(), rt.blob_format_major,
                rt.blob_format_minor_min, rt.blob_format_major, rt.blob_format_minor);
}

/// The blob's versions, shared by every version verdict. Messages stay
/// short: ExecuTorch's logger cuts a line at 255 bytes.
inline std::string describe_blob(const Header& h) {
  return format("format %u.%u, written by %s with executorch %s", h.blob_format_major,
                h.blob_format_minor, version_string(h.backend_version).c_str(),
                version_string(h.executorch_version).c_str());
}

}  // namespace detail

/// Parses the header of `blob` and judges it against `rt`, applying the
/// rules of docs/blob-header.md in order. Never reads outside
/// [blob, blob + size) and never throws except std::bad_alloc.
inline Judgement judge_blob(const uint8_t* blob, size_t size, const RuntimeVersions& rt) {
  using detail::invalid;
  // Rule 1.
  if (blob == nullptr || size < kMinJudgeable) {
    return invalid(rt, format("truncated: %zu bytes, the header needs at least %u", size,
                              kHeaderFixedLength));
  }
  // Rule 2.
  if (std::memcmp(blob, kHeaderMagic, 4) != 0) {
    return invalid(rt, format("wrong magic '%s' at offset 0, expected 'ECVH' "
                              "(not a blob of this backend, or corrupted)",
                              printable(blob, 4).c_str()));
  }
  Header h;
  h.header_length = load_u16(blob + 4);
  h.header_format_version = load_u16(blob + 6);
  // Rule 3: judged before the checksum, whose scope a later format may change.
  if (h.header_format_version == 0 || h.header_format_version > kHeaderFormatVersion) {
    return detail::judged(
        Verdict::kIncompatible, h,
        format("%s: incompatible blob: header format %u, this runtime reads 1-%u; %s; "
               "fix: re-export with %s==%s",
               rt.backend_id, h.header_format_version, kHeaderFormatVersion,
               detail::describe_runtime(rt).c_str(), rt.distribution,
               version_string(rt.backend_version).c_str()));
  }
  // Rule 4.
  if (h.header_length < kHeaderFixedLength || h.header_length > size) {
    return invalid(rt, format("truncated or corrupt header: header_length %u, blob size %zu, minimum %u",
                              h.header_length, size, kHeaderFixedLength));
  }
  h.blob_format_major = load_u16(blob + 8);
  h.blob_format_minor = load_u16(blob + 10);
  h.backend_version = {load_u16(blob + 12), load_u16(blob + 14), load_u16(blob + 16)};
  h.executorch_version = {load_u16(blob + 18), load_u16(blob + 20), load_u16(blob + 22)};
  h.payload_size = load_u64(blob + 24);
  h.checksum = load_u32(blob + 32);
  h.backend_id_offset = load_u16(blob + 36);
  h.backend_id_length = load_u16(blob + 38);
  // Rule 5: a blob is exactly header + payload.
  const size_t after_header = size - h.header_length;
  if (h.payload_size != after_header) {
    return invalid(rt, format("%s: header promises a %llu-byte payload after a %u-byte header, "
                              "blob has %zu bytes",
                              h.payload_size > after_header ? "truncated" : "trailing bytes",
                              static_cast<unsigned long long>(h.payload_size), h.header_length, size));
  }
  // Rule 6.
  const uint32_t actual = blob_checksum(blob, h.header_length, after_header);
  if (actual != h.checksum) {
    return invalid(rt, format("checksum mismatch: header says 0x%08x, header and payload give 0x%08x "
                              "(corrupted blob)",
                              h.checksum, actual));
  }
  // Rule 7.
  if (h.backend_id_offset < kHeaderFixedLength || h.backend_id_length == 0 ||
      static_cast<size_t>(h.backend_id_offset) + h.backend_id_length > h.header_length) {
    return invalid(rt, format("backend id [offset %u, length %u] lies outside the %u-byte header",
                              h.backend_id_offset, h.backend_id_length, h.header_length));
  }
  const uint8_t* id = blob + h.backend_id_offset;
  const size_t shown = h.backend_id_length < kMaxPrintedId ? h.backend_id_length : kMaxPrintedId;
  if (!is_utf8(id, h.backend_id_length)) {
    return invalid(rt, format("backend id '%s' is not UTF-8", printable(id, shown).c_str()));
  }
  h.backend_id.assign(reinterpret_cast<const char*>(id), h.backend_id_length);
  // Rule 8.
  if (h.backend_id != rt.backend_id) {
    return invalid(rt, format("blob was written for backend '%s', not '%s'", printable(id, shown).c_str(),
                              rt.backend_id));
  }

  const std::string written = detail::describe_blob(h);
  const std::string runtime = detail::describe_runtime(rt);
  // Rules 9 and 9a.
  if (h.blob_format_major > rt.blob_format_major ||
      (h.blob_format_major == rt.blob_format_major && h.blob_format_minor > rt.blob_format_minor)) {
    if (newer(h.backend_version, rt.backend_version)) {
      return detail::judged(
          Verdict::kIncompatible, h,
          format("%s: incompatible blob: %s; %s; fix: use a runtime from %s>=%s, or re-export with %s",
                 rt.backend_id, written.c_str(), runtime.c_str(), rt.distribution,
                 version_string(h.backend_version).c_str(), version_string(rt.backend_version).c_str()));
    }
    // A writer no newer than this runtime cannot have written a format this
    // runtime does not read: the header was edited or damaged.
    return detail::judged(
        Verdict::kIncompatible, h,
        format("%s: incompatible blob: %s; %s; fix: re-export the model, %s %s writes no format %u.%u "
               "(the blob was altered)",
               rt.backend_id, written.c_str(), runtime.c_str(), rt.distribution,
               version_string(h.backend_version).c_str(), h.blob_format_major, h.blob_format_minor));
  }
  const std::string since = version_string(rt.current_format_since);
  // Rule 10.
  if (h.blob_format_major < rt.blob_format_major || h.blob_format_minor < rt.blob_format_minor_min) {
    return detail::judged(Verdict::kIncompatible, h,
                          format("%s: incompatible blob: %s; %s; fix: re-export with %s>=%s", rt.backend_id,
                                 written.c_str(), runtime.c_str(), rt.distribution, since.c_str()));
  }
  // Rule 11.
  if (h.blob_format_minor < rt.blob_format_minor) {
    return detail::judged(Verdict::kCompatibleReexportRecommended, h,
                          format("%s: warning: old blob, runs; %s; %s; fix: re-export with %s>=%s",
                                 rt.backend_id, written.c_str(), runtime.c_str(), rt.distribution,
                                 since.c_str()));
  }
  // Rule 12.
  return detail::judged(Verdict::kCompatible, h, std::string());
}

}  // namespace backend_kit
