/*
 * Between ExecuTorch's tensors and an Executor: checks each argument of
 * execute() against the blob's declared dtypes and shapes (or bounds),
 * resizes the outputs to the sizes this call computes, and runs.
 */
#pragma once

#include <reference_backend/executor.h>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>

#include <vector>

namespace reference_backend {

/// Runs `executor` on the method's arguments (inputs, then outputs). On a
/// mismatch logs one line naming the argument and returns InvalidArgument;
/// nothing is computed then. `inputs` and `outputs` are scratch space.
executorch::runtime::Error bind_and_run(Executor& executor,
                                        executorch::runtime::Span<executorch::runtime::EValue*> args,
                                        std::vector<const void*>& inputs, std::vector<void*>& outputs);

}  // namespace reference_backend
