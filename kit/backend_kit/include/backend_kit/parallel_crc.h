/*
 * CRC-32C of a large buffer on several threads (C++17, needs <thread>).
 *
 * Kept apart from header.h so that a runtime for a target without threads
 * includes only that. A runtime that wants it sets
 * RuntimeVersions::crc32c_function = &backend_kit::crc32c_parallel.
 *
 * Contract: crc32c_parallel(crc, data, size) == crc32c(crc, data, size) for
 * every input. Inputs under kParallelCrcMinBytes, a machine with one
 * hardware thread, or a thread that cannot be started: it computes the CRC
 * on the calling thread. The threads it starts are joined before it returns.
 */
#pragma once

#include <backend_kit/header.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace backend_kit {

/// Below this many bytes one thread is faster than starting others.
constexpr size_t kParallelCrcMinBytes = size_t{32} << 20;
/// Each thread takes at least this much, and at most kParallelCrcMaxThreads run.
constexpr size_t kParallelCrcChunkBytes = size_t{16} << 20;
constexpr unsigned kParallelCrcMaxThreads = 8;

/// How many threads crc32c_parallel would use for `size` bytes on this machine.
inline unsigned crc32c_parallel_threads(size_t size) {
  if (size < kParallelCrcMinBytes) return 1;
  unsigned hardware = std::thread::hardware_concurrency();
  if (hardware == 0) hardware = 1;  // unknown
  size_t by_size = size / kParallelCrcChunkBytes;
  size_t n = hardware < by_size ? hardware : by_size;
  if (n > kParallelCrcMaxThreads) n = kParallelCrcMaxThreads;
  return n < 1 ? 1 : static_cast<unsigned>(n);
}

/// CRC-32C of `size` bytes continuing from `crc`, the chunks of the buffer
/// computed on separate threads and joined with crc32c_combine.
inline uint32_t crc32c_parallel(uint32_t crc, const uint8_t* data, size_t size) {
  const unsigned n = crc32c_parallel_threads(size);
  if (n <= 1) return crc32c(crc, data, size);
  const size_t chunk = size / n;
  std::vector<uint32_t> parts(n, 0);
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  unsigned started = 1;  // chunk 0 is this thread's
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
#endif
    for (; started < n; ++started) {
      const uint8_t* begin = data + chunk * started;
      const size_t length = started + 1 == n ? size - chunk * started : chunk;
      uint32_t* out = &parts[started];
      threads.emplace_back([begin, length, out] { *out = crc32c(0, begin, length); });
    }
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  } catch (...) {  // no thread could be started (std::system_error): the rest runs here
  }
#endif
  uint32_t result = crc32c(crc, data, chunk);
  for (unsigned i = started; i < n; ++i) {  // the chunks no thread took
    const size_t length = i + 1 == n ? size - chunk * i : chunk;
    parts[i] = crc32c(0, data + chunk * i, length);
  }
  for (std::thread& t : threads) t.join();
  for (unsigned i = 1; i < n; ++i) {
    const size_t length = i + 1 == n ? size - chunk * i : chunk;
    result = crc32c_combine(result, parts[i], length);
  }
  return result;
}

}  // namespace backend_kit
