/*
 * The C interface of the reference backend runtime library.
 *
 * Shared library: loading it registers the backend (a static initializer).
 * Static archive: the linker drops that initializer unless the application
 * links the archive whole, so call reference_backend_register() once before
 * loading a program.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define REFERENCE_BACKEND_API __declspec(dllexport)
#else
#define REFERENCE_BACKEND_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Registers "ReferenceBackend" with the ExecuTorch runtime. Returns 0 (also
/// when this library already registered it), else the ExecuTorch error code.
REFERENCE_BACKEND_API int reference_backend_register(void);

/// One line describing this build: backend id, versions, blob formats read.
REFERENCE_BACKEND_API const char* reference_backend_runtime_info(void);

/// Judges a processed blob as init() would, without running it. Returns the
/// verdict (0 compatible, 1 compatible with re-export recommended,
/// 2 incompatible, 3 invalid) and writes the one-line reason, plus the decoded
/// header fields as "key=value" lines, into `report` (NUL-terminated,
/// truncated to `capacity`).
REFERENCE_BACKEND_API int reference_backend_judge_blob(const uint8_t* blob, size_t size, char* report,
                                                       size_t capacity);

#ifdef __cplusplus
}
#endif
