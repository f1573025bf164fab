/*
 * The compute bound (issue 31): init() estimates the work a graph does per
 * execute() from its declared shapes (the upper bounds of dynamic dimensions)
 * and refuses a graph whose estimate exceeds the application's maximum, so
 * that a blob with a valid checksum cannot make execute() run for hours.
 *
 * A step is one iteration of a kernel's innermost loop body or one element
 * read or written (docs/blob-header.md, "Compute bound at init()"); each
 * estimate is an upper bound of the loop iterations of the kernel in
 * executor.cpp at those shapes, in checked arithmetic (checked.h).
 */
#pragma once

#include <reference_backend/checked.h>
#include <reference_backend/graph.h>

#include <cstddef>

namespace reference_backend {

/// Steps of op `op` of `g` on its declared shapes (a failed Size when the
/// count does not fit 64 bits: above every limit).
Size op_steps(const Graph& g, const Op& op);

struct ComputeNeed {
  Size total;  // every op, plus the copies of the graph outputs
  size_t largest_op = 0;  // index of the op with the most steps
  Size largest;  // its steps
};

/// The steps of one execute() of `g`.
ComputeNeed compute_need(const Graph& g);

}  // namespace reference_backend
