/*
 * The float32 operators of blob format 1.4 (opcodes 13 to 22): div, sigmoid,
 * tanh, clamp/hardtanh, max_pool2d, avg_pool2d, softmax, mean, permute and
 * view. Their parameter words (graph.h, kClampWords...) are checked by
 * check_float_op_params at parse time; shapes come from infer_float_op_shape
 * (at parse time on the declared shapes, and at every call); run_float_op
 * computes every one but div (a broadcast binary op, run by the executor).
 *
 * Transcendental functions, sums and averages are computed in double and
 * rounded once to float32, so each result is within about one rounding of
 * the exact value (the corpus's tolerances allow eager PyTorch's error on
 * top of that).
 */
#pragma once

#include <reference_backend/checked.h>
#include <reference_backend/graph.h>

#include <string>

namespace reference_backend {

/// Whether `code` is one of format 1.4's float32 operators.
bool is_float_op(OpCode code);

/// Words of Graph::params `op` takes (permute: the input's rank; view: the output's).
uint32_t float_op_params(const Graph& g, const Op& op);

/// The values of the parameters `p` of `op` that do not depend on shapes
/// (pool geometry in range, flags 0 or 1). False, with `why`, otherwise.
bool check_float_op_params(const Op& op, const int32_t* p, std::string& why);

/// out's rank and dims for `op` (not div) on the input shape `x`; false, with
/// `why`, when the parameters `p` do not fit it (a dim out of range, a view
/// of another element count, a pooling window larger than the padded input).
bool infer_float_op_shape(const Op& op, const int32_t* p, const Value& x, Value& out, std::string& why);

/// Steps of `op` on its declared shapes, for the compute bound (compute.h):
/// an upper bound of its kernel's loop iterations.
Size float_op_steps(const Graph& g, const Op& op);

/// Computes `op` (not div) from x (shape vx) into out (shape vo).
void run_float_op(const Op& op, const int32_t* p, const Value& vx, const float* x, const Value& vo,
                  float* out);

}  // namespace reference_backend
