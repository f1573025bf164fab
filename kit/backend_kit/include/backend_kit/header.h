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
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define BACKEND_KIT_HAVE_SSE42_CRC 1
#endif

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

/// `line` made safe for any log sink: every byte that is not printable ASCII
/// (0x20-0x7e) as \xNN. ExecuTorch 1.5's Python log sink decodes each line
/// as strict UTF-8 and a decoding error there ends the process
/// (std::terminate), so a backend passes every line it logs through this.
inline std::string log_safe(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (unsigned char c : line) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += format("\\x%02x", c);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Checksums: CRC-32 (zlib, IEEE 802.3; header format 1) and CRC-32C
// (Castagnoli; header format 2 and named data). Both table-driven, eight
// bytes per step; CRC-32C uses the SSE4.2 instruction where the CPU has it.

namespace detail {

struct CrcTables {
  uint32_t t[8][256];
};

constexpr CrcTables make_crc_tables(uint32_t reflected_poly) {
  CrcTables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ (reflected_poly & (0u - (c & 1u)));
    tables.t[0][i] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) {
      const uint32_t prev = tables.t[k - 1][i];
      tables.t[k][i] = (prev >> 8) ^ tables.t[0][prev & 0xffu];
    }
  }
  return tables;
}

inline constexpr CrcTables kCrc32Tables = make_crc_tables(0xEDB88320u);
inline constexpr CrcTables kCrc32cTables = make_crc_tables(0x82F63B78u);

/// Reflected CRC, eight bytes per step ("slicing by 8"), on the register
/// value (no pre- or post-inversion).
inline uint32_t crc_sliced(const CrcTables& tables, uint32_t reg, const uint8_t* p, size_t n) {
  const auto& t = tables.t;
  while (n >= 8) {
    const uint32_t lo = load_u32(p) ^ reg;
    const uint32_t hi = load_u32(p + 4);
    reg = t[7][lo & 0xffu] ^ t[6][(lo >> 8) & 0xffu] ^ t[5][(lo >> 16) & 0xffu] ^ t[4][lo >> 24] ^
          t[3][hi & 0xffu] ^ t[2][(hi >> 8) & 0xffu] ^ t[1][(hi >> 16) & 0xffu] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) reg = (reg >> 8) ^ t[0][(reg ^ *p++) & 0xffu];
  return reg;
}

#ifdef BACKEND_KIT_HAVE_SSE42_CRC
/// Bytes per stream in the three-stream loop of crc32c_sse42.
constexpr size_t kCrcStreamBlock = 4096;

__attribute__((target("sse4.2"))) inline uint64_t crc32c_zero_step(uint64_t r) {
  return _mm_crc32_u64(r, 0);
}

/// Shifting a CRC register over k zero bytes is linear in the register:
/// these tables hold, for k = kCrcStreamBlock and 2 * kCrcStreamBlock, the
/// shift of each byte value at each of the four byte positions.
struct CrcShift {
  uint32_t t[4][256];
};

__attribute__((target("sse4.2"))) inline const CrcShift* crc32c_shift_tables() {
  static const CrcShift* const tables = [] {
    static CrcShift s[2];
    return s;
  }();
  static const bool built = [] {
    CrcShift* s = const_cast<CrcShift*>(tables);
    for (int which = 0; which < 2; ++which) {
      const size_t zeros = kCrcStreamBlock * static_cast<size_t>(which + 1);
      for (int byte = 0; byte < 4; ++byte) {
        for (uint32_t v = 0; v < 256; ++v) {
          uint64_t r = static_cast<uint64_t>(v) << (8 * byte);
          for (size_t z = 0; z < zeros; z += 8) r = crc32c_zero_step(r);
          s[which].t[byte][v] = static_cast<uint32_t>(r);
        }
      }
    }
    return true;
  }();
  (void)built;
  return tables;
}

inline uint32_t crc_shift(const CrcShift& s, uint64_t r) {
  return s.t[0][r & 0xffu] ^ s.t[1][(r >> 8) & 0xffu] ^ s.t[2][(r >> 16) & 0xffu] ^ s.t[3][(r >> 24) & 0xffu];
}

/// CRC-32C register update with the SSE4.2 crc32 instruction. Large inputs
/// run three independent streams (the instruction's latency is about three
/// times its throughput), whose registers are then combined by shifting the
/// first two over the bytes that follow them (crc32c_shift_tables).
__attribute__((target("sse4.2"))) inline uint32_t crc32c_sse42(uint32_t reg, const uint8_t* p, size_t n) {
  uint64_t c = reg;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  if (n >= 3 * kCrcStreamBlock) {
    const CrcShift* shifts = crc32c_shift_tables();
    while (n >= 3 * kCrcStreamBlock) {
      uint64_t c1 = 0, c2 = 0;
      const uint8_t* p1 = p + kCrcStreamBlock;
      const uint8_t* p2 = p + 2 * kCrcStreamBlock;
      for (size_t i = 0; i < kCrcStreamBlock; i += 8) {
        uint64_t v0, v1, v2;
        std::memcpy(&v0, p + i, 8);
        std::memcpy(&v1, p1 + i, 8);
        std::memcpy(&v2, p2 + i, 8);
        c = _mm_crc32_u64(c, v0);
        c1 = _mm_crc32_u64(c1, v1);
        c2 = _mm_crc32_u64(c2, v2);
      }
      c = crc_shift(shifts[1], c) ^ crc_shift(shifts[0], c1) ^ c2;
      p += 3 * kCrcStreamBlock;
      n -= 3 * kCrcStreamBlock;
    }
  }
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
  return static_cast<uint32_t>(c);
}

inline bool have_sse42() {
  static const bool yes = __builtin_cpu_supports("sse4.2");
  return yes;
}
#endif

}  // namespace detail

/// CRC-32 (the zlib / IEEE 802.3 polynomial, reflected 0xEDB88320) of
/// `size` bytes, continuing from `crc` (pass 0 to start).
inline uint32_t crc32(uint32_t crc, const uint8_t* data, size_t size) {
  return ~detail::crc_sliced(detail::kCrc32Tables, ~crc, data, size);
}

/// CRC-32C (Castagnoli, reflected 0x82F63B78) of `size` bytes, continuing
/// from `crc` (pass 0 to start): hardware where available, else tables.
inline uint32_t crc32c(uint32_t crc, const uint8_t* data, size_t size) {
#ifdef BACKEND_KIT_HAVE_SSE42_CRC
  if (detail::have_sse42()) return ~detail::crc32c_sse42(~crc, data, size);
#endif
  return ~detail::crc_sliced(detail::kCrc32cTables, ~crc, data, size);
}

/// CRC-32C without the hardware path (for tests and for comparison).
inline uint32_t crc32c_portable(uint32_t crc, const uint8_t* data, size_t size) {
  return ~detail::crc_sliced(detail::kCrc32cTables, ~crc, data, size);
}

namespace detail {

/// The reflected CRC-32C polynomial: bit 31 stands for x^0, bit 0 for x^31.
constexpr uint32_t kCrc32cPoly = 0x82F63B78u;

/// a * b modulo the CRC-32C polynomial, both in the reflected representation.
constexpr uint32_t crc32c_multiply(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = 0x80000000u; bit != 0; bit >>= 1) {  // from x^0 up
    if (a & bit) product ^= b;
    b = (b & 1u) ? (b >> 1) ^ kCrc32cPoly : b >> 1;  // b *= x
  }
  return product;
}

/// x^(8 * bytes) modulo the polynomial: what passing `bytes` zero bytes
/// through the CRC register multiplies the register by (square and multiply).
constexpr uint32_t crc32c_zeros_operator(uint64_t bytes) {
  uint32_t result = 0x80000000u;  // x^0
  uint32_t power = 0x00800000u;  // x^8: one zero byte
  for (; bytes != 0; bytes >>= 1) {
    if (bytes & 1u) result = crc32c_multiply(result, power);
    power = crc32c_multiply(power, power);
  }
  return result;
}

}  // namespace detail

/// The CRC-32C of A followed by B from crc32c(0, A) and crc32c(0, B) and the
/// length of B: a CRC is linear in its input, so the register after A only
/// needs carrying across B's length (O(log len_b), no data read).
constexpr uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  // crc32c(crc, data) = ~R(~crc, data), R(r, B) = r * x^(8|B|) ^ R(0, B) and
  // R(0, B) = ~crc_b ^ ~0 * x^(8|B|): the inversions cancel to this.
  return detail::crc32c_multiply(crc_a, detail::crc32c_zeros_operator(len_b)) ^ crc_b;
}

/// A CRC-32C function of the shape of crc32c(): continues from `crc`.
using Crc32cFunction = uint32_t (*)(uint32_t crc, const uint8_t* data, size_t size);

// ---------------------------------------------------------------------------
// The header.

constexpr char kHeaderMagic[4] = {'E', 'C', 'V', 'H'};
/// Bytes of the fixed part of header format 1 (the backend id follows it).
constexpr uint16_t kHeaderFixedLength = 40;
/// The newest header format this code reads (and writes, in Python): 2.
constexpr uint16_t kHeaderFormatVersion = 2;
/// Header format 1: CRC-32, no extension records. Still read.
constexpr uint16_t kHeaderFormatCrc32 = 1;
/// Format 2 extension record: u16 tag, u16 flags, u32 length, value, zeros to 8.
constexpr size_t kExtensionHeaderSize = 8;
/// Flag bit 0: a runtime that does not know the tag must refuse the blob.
constexpr uint16_t kExtensionRequired = 1;
/// u64: the most bytes the runtime may allocate to load and run the blob.
constexpr uint16_t kTagMemoryLimit = 1;
/// u32 per named-data entry: its CRC-32C, in the backend's named-data table order.
constexpr uint16_t kTagNamedDataChecksums = 2;
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
  /// Format 2, extension tag 1: the most bytes the runtime may allocate for this blob.
  bool has_memory_limit = false;
  uint64_t memory_limit = 0;
  /// Format 2, extension tag 2: the CRC-32C of each named-data entry.
  bool has_named_data_checksums = false;
  std::vector<uint32_t> named_data_checksums;
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
  /// Optional: computes the CRC-32C of header format 2 instead of crc32c()
  /// (e.g. crc32c_parallel from <backend_kit/parallel_crc.h>); must give the
  /// same values. Null: crc32c().
  Crc32cFunction crc32c_function = nullptr;
};

enum class Verdict : int {
  kCompatible = 0,  // runs as it is
  kCompatibleReexportRecommended = 1,  // runs; an older minor than the newest read
  kIncompatible = 2,  // well formed, but this runtime cannot run it
  kInvalid = 3,  // not a well-formed blob of this backend
};

inline const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kCompatible: return "compatible";
    case Verdict::kCompatibleReexportRecommended: return "compatible, re-export recommended";
    case Verdict::kIncompatible: return "incompatible";
    case Verdict::kInvalid: return "invalid";
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

/// The checksum the header must carry: over the header with its checksum
/// field taken as zero, then the payload; CRC-32 when the header says format
/// 1, CRC-32C otherwise. `header_length` is at least 40.
inline uint32_t blob_checksum(const uint8_t* blob, size_t header_length, size_t payload_size,
                              Crc32cFunction crc32c_function = nullptr) {
  static const uint8_t zeros[4] = {0, 0, 0, 0};
  Crc32cFunction crc_of = load_u16(blob + 6) == kHeaderFormatCrc32 ? &crc32
                          : crc32c_function != nullptr             ? crc32c_function
                                                                   : &crc32c;
  uint32_t crc = crc_of(0, blob, kChecksumOffset);
  crc = crc_of(crc, zeros, 4);
  crc = crc_of(crc, blob + kChecksumOffset + 4, header_length - kChecksumOffset - 4);
  return crc_of(crc, blob + header_length, payload_size);
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

/// Reads the format-2 extension records in [kHeaderFixedLength, id_offset)
/// into `h`. Returns "" when they are well formed; otherwise the problem, and
/// `required_unknown` tells whether it is an unknown required record
/// (incompatible) rather than a malformed one (invalid).
inline std::string read_extensions(const uint8_t* blob, Header& h, bool& required_unknown) {
  required_unknown = false;
  const size_t end = h.backend_id_offset;
  size_t pos = kHeaderFixedLength;
  bool seen_limit = false, seen_named = false;
  while (pos < end) {
    if (end - pos < kExtensionHeaderSize) {
      return format("header extension at offset %zu runs into the backend id at offset %zu", pos, end);
    }
    const uint16_t tag = load_u16(blob + pos);
    const uint16_t flags = load_u16(blob + pos + 2);
    const uint64_t size = load_u32(blob + pos + 4);
    const uint64_t padded = (size + 7u) & ~uint64_t{7};
    if (padded > end - pos - kExtensionHeaderSize) {
      return format("header extension %u at offset %zu (%llu bytes) runs into the backend id at offset %zu",
                    tag, pos, static_cast<unsigned long long>(size), end);
    }
    const uint8_t* value = blob + pos + kExtensionHeaderSize;
    if ((tag == kTagMemoryLimit && seen_limit) || (tag == kTagNamedDataChecksums && seen_named)) {
      return format("header extension %u at offset %zu appears twice", tag, pos);
    }
    if (tag == kTagMemoryLimit) {
      if (size != 8) {
        return format("header extension 1 (memory limit) at offset %zu has %llu bytes, not 8", pos,
                      static_cast<unsigned long long>(size));
      }
      seen_limit = h.has_memory_limit = true;
      h.memory_limit = load_u64(value);
    } else if (tag == kTagNamedDataChecksums) {
      if (size % 4 != 0) {
        return format(
            "header extension 2 (named-data checksums) at offset %zu has %llu bytes, not a multiple of 4",
            pos, static_cast<unsigned long long>(size));
      }
      seen_named = h.has_named_data_checksums = true;
      h.named_data_checksums.resize(size / 4);
      for (size_t i = 0; i < size / 4; ++i) h.named_data_checksums[i] = load_u32(value + 4 * i);
    } else if ((flags & kExtensionRequired) != 0) {
      required_unknown = true;
      return format("header extension %u at offset %zu is required and unknown to this runtime", tag, pos);
    } else {
      // Another tag, skipped. A duplicate of it is not this runtime's business.
    }
    pos += kExtensionHeaderSize + padded;
  }
  return std::string();
}

inline std::string describe_runtime(const RuntimeVersions& rt) {
  return format("runtime %s for executorch %s reads formats %u.%u-%u.%u",
                version_string(rt.backend_version).c_str(), version_string(rt.executorch_version).c_str(),
                rt.blob_format_major, rt.blob_format_minor_min, rt.blob_format_major, rt.blob_format_minor);
}

/// The blob's versions, shared by every version verdict. Messages stay
/// short: ExecuTorch's logger cuts a line at 255 bytes.
inline std::string describe_blob(const Header& h) {
  return format("format %u.%u, written by %s with executorch %s", h.blob_format_major, h.blob_format_minor,
                version_string(h.backend_version).c_str(), version_string(h.executorch_version).c_str());
}

}  // namespace detail

/// Parses the header of `blob` and judges it against `rt`, applying the
/// rules of docs/blob-header.md in order. Never reads outside
/// [blob, blob + size) and never throws except std::bad_alloc.
inline Judgement judge_blob(const uint8_t* blob, size_t size, const RuntimeVersions& rt) {
  using detail::invalid;
  // Rule 1.
  if (blob == nullptr || size < kMinJudgeable) {
    return invalid(rt,
                   format("truncated: %zu bytes, the header needs at least %u", size, kHeaderFixedLength));
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
    return detail::judged(Verdict::kIncompatible, h,
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
  const uint32_t actual = blob_checksum(blob, h.header_length, after_header, rt.crc32c_function);
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
  // Rule 7a: format 2's extension records, between the fixed part and the id.
  if (h.header_format_version >= 2) {
    bool required_unknown = false;
    const std::string problem = detail::read_extensions(blob, h, required_unknown);
    if (required_unknown) {
      Header first;  // as for rule 3: only the first two fields
      first.header_length = h.header_length;
      first.header_format_version = h.header_format_version;
      return detail::judged(Verdict::kIncompatible, first,
                            format("%s: incompatible blob: %s; %s; fix: re-export with %s==%s", rt.backend_id,
                                   problem.c_str(), detail::describe_runtime(rt).c_str(), rt.distribution,
                                   version_string(rt.backend_version).c_str()));
    }
    if (!problem.empty()) return invalid(rt, problem);
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
    return detail::judged(
        Verdict::kCompatibleReexportRecommended, h,
        format("%s: warning: old blob, runs; %s; %s; fix: re-export with %s>=%s", rt.backend_id,
               written.c_str(), runtime.c_str(), rt.distribution, since.c_str()));
  }
  // Rule 12.
  return detail::judged(Verdict::kCompatible, h, std::string());
}

}  // namespace backend_kit
