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
/// when this library already registered it), else the ExecuTorch error code:
/// NotSupported (0x10) unless every ExecuTorch runtime in the process is of
/// the minor release this library was built for, read from its package
/// (an unreadable version is a refusal too).
REFERENCE_BACKEND_API int reference_backend_register(void);

/// As reference_backend_register(), for an application that links ExecuTorch
/// into its executable, where no version can be read: `executorch_version`
/// is the release it links ("1.5.1"), used for runtimes of unreadable version.
REFERENCE_BACKEND_API int reference_backend_register_linked(const char* executorch_version);

/// Sets the most bytes init() may allocate for one blob (its constants, copied
/// when not aligned, and buffers for its intermediate values); a blob that needs
/// more is refused before anything is allocated (Error::MemoryAllocationFailed).
/// Overrides $REFERENCE_BACKEND_MAX_MEMORY_BYTES; the default is 2 GiB.
/// Returns 0, or InvalidArgument for 0.
REFERENCE_BACKEND_API int reference_backend_set_max_memory_bytes(uint64_t bytes);

/// The maximum in force (the value set, else the environment's, else 2 GiB).
REFERENCE_BACKEND_API uint64_t reference_backend_max_memory_bytes(void);

/// Sets the most compute steps one execute() of a blob may take, as init()
/// estimates them from the blob's shapes (include/reference_backend/compute.h:
/// one step per innermost kernel iteration or element touched); a blob whose
/// estimate is larger is refused at init (Error::OutOfResources).
/// Overrides $REFERENCE_BACKEND_MAX_COMPUTE_STEPS; the default is 10^10.
/// Returns 0, or InvalidArgument for 0.
REFERENCE_BACKEND_API int reference_backend_set_max_compute_steps(uint64_t steps);

/// The compute maximum in force (the value set, else the environment's, else 10^10).
REFERENCE_BACKEND_API uint64_t reference_backend_max_compute_steps(void);

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
