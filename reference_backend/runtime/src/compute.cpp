#include <reference_backend/compute.h>
#include <reference_backend/float_ops.h>

namespace reference_backend {

Size op_steps(const Graph& g, const Op& op) {
  const Value& out = g.values[op.output];
  const Value& x = g.values[op.inputs[0]];
  const Size n = out.numel;
  switch (op.code) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
    case OpCode::kQAdd:
      // Two reads and one write per element; broadcasting's index carry is
      // amortized below one more step per element.
      return n * 4;
    case OpCode::kRelu:
    case OpCode::kQuantize:
    case OpCode::kDequantize:
    case OpCode::kQRelu: return n * 2;
    case OpCode::kLinear:
    case OpCode::kQLinear: {
      // rows x N outputs, each a K-long dot product plus its write.
      const Value& w = g.values[op.inputs[1]];
      const Size k = w.dims[1];
      const Size rows = k.value() == 0 ? Size(0) : Size(x.numel) / k;
      return rows * w.dims[0] * (k + 1);
    }
    case OpCode::kConv2d:
    case OpCode::kQConv2d: {
      // Per output element: per input channel of its group, per kernel row
      // (a bounds check), per kernel column (a multiply-accumulate).
      const Value& w = g.values[op.inputs[1]];
      const Size per_channel = Size(w.dims[2]) * (Size(w.dims[3]) + 1) + 1;
      return n * (Size(w.dims[1]) * per_channel + 1);
    }
    default: return is_float_op(op.code) ? float_op_steps(g, op) : Size::invalid();  // format 1.4
  }
}

ComputeNeed compute_need(const Graph& g) {
  ComputeNeed need;
  need.total = 0;
  need.largest = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Size steps = op_steps(g, g.ops[i]) + 1;  // + 1: the op's own dispatch
    if (need.largest.ok() && (!steps.ok() || steps.value() > need.largest.value())) {
      need.largest = steps;
      need.largest_op = i;
    }
    need.total += steps;
  }
  for (uint32_t id : g.outputs) need.total += g.values[id].numel;  // copied out when not computed in place
  return need;
}

}  // namespace reference_backend
