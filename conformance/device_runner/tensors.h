// Tensor files of a bundle: the inputs the host sends, the outputs the runner
// writes back. Little-endian:
//
//   "ETCT" u32 count
//   count x { i32 scalar_type (ExecuTorch's ScalarType), u32 ndim,
//             i64 sizes[ndim], u8 dim_order[ndim], u64 nbytes,
//             nbytes bytes (laid out in that dim order) }
#pragma once

#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/core/evalue.h>

#include <string>
#include <vector>

namespace conformance_runner {

// Reads the tensors of `path` (empty `error` on success).
std::vector<executorch::extension::TensorPtr> read_tensors(const std::string& path, std::string& error);

// Writes the tensor (or scalar, as a 0-dim tensor) outputs; false with `error` (e.g. a full disk).
bool write_tensors(const std::string& path, const std::vector<executorch::runtime::EValue>& values,
                   std::string& error);

}  // namespace conformance_runner
