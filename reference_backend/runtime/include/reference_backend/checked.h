/*
 * Checked size arithmetic: every size, count, offset, span and product that
 * the runtime computes from blob fields goes through Size, so a hostile blob
 * (valid checksum, forged fields) cannot wrap a size past a bound or to zero,
 * or truncate it when narrowing to 32 bits or to size_t.
 *
 * A Size is a uint64 that remembers whether any operation producing it
 * overflowed, underflowed or divided by zero; the flag is sticky, so a chain
 * `Size(a) * b + c` is checked once, at the end, with ok(). Narrowing
 * (to_u32, to_size, to_i32) fails for a value that does not fit.
 *
 * Hand-written, not a library (Boost.SafeNumerics, absl): the runtime is
 * copied into embedded builds that take no dependency beyond ExecuTorch, and
 * the portable checks below compile the same with GCC, Clang and MSVC.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace reference_backend {

class Size {
 public:
  constexpr Size() = default;
  constexpr Size(uint64_t value) : value_(value) {}  // NOLINT(google-explicit-constructor): sizes mix freely

  /// A Size that has already failed (for example a count read as negative).
  static constexpr Size invalid() {
    Size s;
    s.ok_ = false;
    return s;
  }

  /// Whether no step of the computation overflowed, underflowed or divided by 0.
  constexpr bool ok() const { return ok_; }
  /// The value; meaningful only when ok().
  constexpr uint64_t value() const { return value_; }

  friend constexpr Size operator+(Size a, Size b) {
    const uint64_t r = a.value_ + b.value_;
    return Size(r, a.ok_ && b.ok_ && r >= a.value_);
  }
  /// Fails when b > a (no unsigned wrap to a huge value).
  friend constexpr Size operator-(Size a, Size b) {
    return Size(a.value_ - b.value_, a.ok_ && b.ok_ && b.value_ <= a.value_);
  }
  friend constexpr Size operator*(Size a, Size b) {
    const uint64_t r = a.value_ * b.value_;
    return Size(r, a.ok_ && b.ok_ && (a.value_ == 0 || r / a.value_ == b.value_));
  }
  /// Fails for b == 0.
  friend constexpr Size operator/(Size a, Size b) {
    return b.value_ == 0 ? invalid() : Size(a.value_ / b.value_, a.ok_ && b.ok_);
  }
  /// Fails for b == 0.
  friend constexpr Size operator%(Size a, Size b) {
    return b.value_ == 0 ? invalid() : Size(a.value_ % b.value_, a.ok_ && b.ok_);
  }
  Size& operator+=(Size b) { return *this = *this + b; }
  Size& operator*=(Size b) { return *this = *this * b; }

  /// ok() and at most `limit` (a failed Size is above every limit).
  constexpr bool at_most(uint64_t limit) const { return ok_ && value_ <= limit; }

  /// Rounds up to a multiple of `alignment` (a power of two); fails on overflow.
  constexpr Size align_up(uint64_t alignment) const {
    const Size bumped = *this + (alignment - 1);
    return Size(bumped.value_ & ~(alignment - 1), bumped.ok_);
  }

  /// Narrowing: true and `out` set when ok() and the value fits.
  bool to_u32(uint32_t& out) const { return narrow(out); }
  bool to_size(size_t& out) const { return narrow(out); }
  bool to_i32(int32_t& out) const { return narrow(out); }

 private:
  constexpr Size(uint64_t value, bool ok) : value_(value), ok_(ok) {}

  template <typename T>
  bool narrow(T& out) const {
    if (!ok_ || value_ > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    out = static_cast<T>(value_);
    return true;
  }

  uint64_t value_ = 0;
  bool ok_ = true;
};

/// A parameter word read as a size: fails for a negative word.
constexpr Size word_size(int32_t word) {
  return word < 0 ? Size::invalid() : Size(static_cast<uint64_t>(word));
}

}  // namespace reference_backend
