#include <reference_backend/bind.h>
#include <reference_backend/checked.h>
#include <reference_backend/versions.h>

#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/platform/log.h>

#include <limits>
#include <string>

namespace reference_backend {
namespace {

using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::ArrayRef;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Span;

const char* dtype_name(uint8_t dtype) {
  return dtype == kDtypeFloat32 ? "float32"
         : dtype == kDtypeInt8  ? "int8"
         : dtype == kDtypeInt32 ? "int32"
                                : "other";
}

uint8_t dtype_of(ScalarType t) {
  switch (t) {
    case ScalarType::Float: return kDtypeFloat32;
    case ScalarType::Char: return kDtypeInt8;
    case ScalarType::Int: return kDtypeInt32;
    default: return 0;
  }
}

std::string shape_text(const Value& v, bool bounds) {
  std::string s = "[";
  for (uint32_t d = 0; d < v.rank; ++d) {
    s += d ? ", " : "";
    if (bounds && ((v.dynamic_mask >> d) & 1)) s += "<=";
    s += std::to_string(v.dims[d]);
  }
  return s + "]";
}

/// Checks that `arg` is a tensor of the value's dtype and rank; fills `dims`.
Error check_tensor(const EValue* arg, const Value& expected, const char* role, size_t index, uint32_t* dims) {
  if (arg == nullptr || !arg->isTensor()) {
    ET_LOG(Error, "%s: execute: %s %zu is not a tensor", kBackendId, role, index);
    return Error::InvalidArgument;
  }
  const Tensor& t = arg->toTensor();
  Value got;
  got.rank = static_cast<uint32_t>(t.dim());
  got.dtype = dtype_of(t.scalar_type());
  bool same = got.dtype == expected.dtype && got.rank == expected.rank;
  for (uint32_t d = 0; d < got.rank && d < kMaxRank; ++d) {
    const auto size = t.size(d);
    same = same && size >= 0;  // a negative size is no shape the blob declares
    got.dims[d] = size < 0 ? 0 : static_cast<uint32_t>(size);
    if (d < expected.rank) dims[d] = got.dims[d];
  }
  if (!same) {
    ET_LOG(Error, "%s: execute: %s %zu is a %s tensor of shape %s, the blob was exported for %s %s",
           kBackendId, role, index, dtype_name(got.dtype), shape_text(got, false).c_str(),
           dtype_name(expected.dtype), shape_text(expected, true).c_str());
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

}  // namespace

Error bind_and_run(Executor& executor, Span<EValue*> args, std::vector<const void*>& inputs,
                   std::vector<void*>& outputs) {
  const Graph& g = executor.graph();
  const size_t ni = g.inputs.size();
  const size_t no = g.outputs.size();
  if (args.size() != ni + no) {
    ET_LOG(Error, "%s: execute: got %zu arguments, the blob has %zu inputs and %zu outputs", kBackendId,
           args.size(), ni, no);
    return Error::InvalidArgument;
  }
  std::vector<uint32_t> dims(ni * kMaxRank, 0);
  std::vector<const uint32_t*> dim_ptrs(ni);
  for (size_t i = 0; i < ni; ++i) {
    dim_ptrs[i] = dims.data() + i * kMaxRank;
    Error e = check_tensor(args[i], g.values[g.inputs[i]], "input", i, dims.data() + i * kMaxRank);
    if (e != Error::Ok) return e;
    inputs[i] = args[i]->toTensor().const_data_ptr();
  }
  std::string error;
  if (!executor.prepare(dim_ptrs.data(), error)) {
    ET_LOG(Error, "%s: execute: refused: %s", kBackendId, error.c_str());
    return Error::InvalidArgument;
  }
  for (size_t i = 0; i < no; ++i) {
    uint32_t unused[kMaxRank];
    const Value& declared = g.values[g.outputs[i]];
    Error e = check_tensor(args[ni + i], declared, "output", i, unused);
    if (e != Error::Ok) return e;
    Tensor& t = args[ni + i]->toTensor();
    const Value& shape = executor.shape(g.outputs[i]);
    SizesType sizes[kMaxRank];
    bool differs = false;
    for (uint32_t d = 0; d < shape.rank; ++d) {
      int32_t size = 0;
      if (!Size(shape.dims[d]).to_i32(size) || size > std::numeric_limits<SizesType>::max()) {
        ET_LOG(Error, "%s: execute: output %zu dimension %u is %u, more than an ExecuTorch size holds",
               kBackendId, i, d, shape.dims[d]);
        return Error::InvalidArgument;
      }
      sizes[d] = static_cast<SizesType>(size);
      differs = differs || t.size(d) != sizes[d];
    }
    if (differs) {
      // ExecuTorch planned the output for the bounds; give it this call's sizes.
      Error resized = executorch::runtime::resize_tensor(t, ArrayRef<SizesType>(sizes, shape.rank));
      if (resized != Error::Ok) {
        ET_LOG(Error, "%s: execute: cannot resize output %zu to %s (error 0x%x)", kBackendId, i,
               shape_text(shape, false).c_str(), static_cast<unsigned>(resized));
        return resized;
      }
    }
    outputs[i] = t.mutable_data_ptr();
  }
  executor.run(inputs.data(), outputs.data());
  return Error::Ok;
}

}  // namespace reference_backend
