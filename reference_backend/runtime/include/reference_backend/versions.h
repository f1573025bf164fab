/*
 * What this runtime build is and which blobs it reads. The numeric versions
 * come from CMake (backend_kit_target_versions: the package version and the
 * ExecuTorch it was built against); the blob format range is owned by this
 * file and must match reference_backend/version.py (a test compares them).
 * The header and its verdict are the contract kit's (<backend_kit/header.h>).
 */
#pragma once

#include <backend_kit/header.h>

namespace reference_backend {

using backend_kit::judge_blob;
using backend_kit::Judgement;
using backend_kit::RuntimeVersions;
using backend_kit::Verdict;
using backend_kit::verdict_name;
using backend_kit::Version;

// The id stored in the .pte and registered with the runtime: the name of the
// Python BackendDetails subclass. A vendor copying this backend renames it
// here and in Python (the conformance suite's own tests build variants).
#ifndef REFERENCE_BACKEND_ID
#define REFERENCE_BACKEND_ID "ReferenceBackend"
#endif
constexpr const char* kBackendId = REFERENCE_BACKEND_ID;
constexpr const char* kDistribution = "executorch-reference-backend";
constexpr uint16_t kBlobFormatMajor = 1;
constexpr uint16_t kBlobFormatMinorMin = 0;  // 1.0: add/sub alpha implied 1
constexpr uint16_t kBlobFormatMinor = 4;  // 1.1: ops carry an alpha scalar; 1.2: named data;
                                          // 1.3: int8/int32 values, quantized ops, conv2d, dynamic dims;
                                          // 1.4: float32 div, sigmoid, tanh, clamp, pools, softmax, mean,
                                          // permute, view (opcodes 13-22)
/// The first release that writes blob format kBlobFormatMajor.kBlobFormatMinor.
constexpr Version kCurrentFormatSince = {0, 4, 0};

/// The most bytes init() allocates for one blob unless the application says
/// otherwise (environment variable kMaxMemoryEnv, or
/// reference_backend_set_max_memory_bytes()): 2 GiB.
constexpr uint64_t kDefaultMaxMemoryBytes = uint64_t{2} << 30;
constexpr const char* kMaxMemoryEnv = "REFERENCE_BACKEND_MAX_MEMORY_BYTES";

/// The most compute steps (include/reference_backend/compute.h) one execute()
/// of a blob may take unless the application says otherwise (environment
/// variable kMaxComputeEnv, or reference_backend_set_max_compute_steps()):
/// 10^10, tens of seconds on one core; every model of the conformance suite
/// takes less than 10^7.
constexpr uint64_t kDefaultMaxComputeSteps = 10000000000ull;
constexpr const char* kMaxComputeEnv = "REFERENCE_BACKEND_MAX_COMPUTE_STEPS";

/// This build's versions, for judge_blob().
const RuntimeVersions& runtime_versions();

}  // namespace reference_backend
