#include <reference_backend/executor.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace reference_backend {
namespace {

constexpr uint64_t kNotInArena = UINT64_MAX;

template <typename F>
void binary_same_shape(const float* __restrict a, const float* __restrict b,
                       float* __restrict out, uint64_t n, F f) {
  for (uint64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

/// Element strides of `v` inside an output of rank `rank` (0 where broadcast).
void broadcast_strides(const Value& v, uint32_t rank, uint64_t* strides) {
  uint64_t stride = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    const uint32_t out_dim = rank - 1 - i;
    if (i < v.rank) {
      const uint32_t d = v.dims[v.rank - 1 - i];
      strides[out_dim] = d == 1 ? 0 : stride;
      stride *= d;
    } else {
      strides[out_dim] = 0;
    }
  }
}

template <typename F>
void binary(const Value& va, const float* a, const Value& vb, const float* b,
            const Value& vo, float* out, F f) {
  const uint64_t n = vo.numel;
  if (va.numel == n && vb.numel == n) {
    binary_same_shape(a, b, out, n, f);
  } else if (vb.numel == 1) {
    const float s = b[0];
    for (uint64_t i = 0; i < n; ++i) out[i] = f(a[i], s);  // a has the output's shape
  } else if (va.numel == 1) {
    const float s = a[0];
    for (uint64_t i = 0; i < n; ++i) out[i] = f(s, b[i]);  // b has the output's shape
  } else {
    uint64_t sa[kMaxRank], sb[kMaxRank];
    broadcast_strides(va, vo.rank, sa);
    broadcast_strides(vb, vo.rank, sb);
    uint32_t index[kMaxRank] = {};
    uint64_t ia = 0, ib = 0;
    for (uint64_t i = 0; i < n; ++i) {
      out[i] = f(a[ia], b[ib]);
      // Odometer increment of the output index, innermost dimension first.
      for (int d = static_cast<int>(vo.rank) - 1; d >= 0; --d) {
        ia += sa[d];
        ib += sb[d];
        if (++index[d] < vo.dims[d]) break;
        ia -= sa[d] * vo.dims[d];
        ib -= sb[d] * vo.dims[d];
        index[d] = 0;
      }
    }
  }
}

void linear(const Value& vx, const float* __restrict x, const Value& vw,
            const float* __restrict w, const float* __restrict bias,
            float* __restrict out) {
  const uint64_t k_dim = vw.dims[1];
  const uint64_t n_dim = vw.dims[0];
  const uint64_t rows = k_dim == 0 ? 0 : vx.numel / k_dim;
  for (uint64_t m = 0; m < rows; ++m) {
    const float* xr = x + m * k_dim;
    for (uint64_t n = 0; n < n_dim; ++n) {
      const float* wr = w + n * k_dim;
      // Four partial sums let the compiler vectorize without -ffast-math.
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      uint64_t k = 0;
      for (; k + 4 <= k_dim; k += 4) {
        s0 += xr[k] * wr[k];
        s1 += xr[k + 1] * wr[k + 1];
        s2 += xr[k + 2] * wr[k + 2];
        s3 += xr[k + 3] * wr[k + 3];
      }
      for (; k < k_dim; ++k) s0 += xr[k] * wr[k];
      out[m * n_dim + n] = (s0 + s1) + (s2 + s3) + (bias ? bias[n] : 0.0f);
    }
  }
}

}  // namespace

Executor::Executor(Graph graph)
    : graph_(std::move(graph)),
      arena_offset_(graph_.values.size(), kNotInArena),
      slots_(graph_.values.size(), nullptr) {
  // Every op result gets its own arena slot; results that are graph outputs
  // are written straight into the caller's output tensor by run() instead.
  uint64_t total = 0;
  for (const Op& op : graph_.ops) {
    arena_offset_[op.output] = total;
    total += (graph_.values[op.output].numel + 15) & ~uint64_t{15};
  }
  arena_.resize(total);
}

void Executor::run(const float* const* inputs, float* const* outputs) {
  const Graph& g = graph_;
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (v.kind == ValueKind::kConstant) {
      slots_[i] = const_cast<float*>(g.constants.data()) + v.constant_offset / 4;
    } else if (v.kind == ValueKind::kNamed) {
      // Read in place (the NamedDataMap's buffer, e.g. mmap'd .ptd pages).
      slots_[i] = const_cast<float*>(g.named_data[v.constant_offset]);
    } else if (arena_offset_[i] != kNotInArena) {
      slots_[i] = arena_.data() + arena_offset_[i];
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    slots_[g.inputs[i]] = const_cast<float*>(inputs[i]);
  }
  // direct[i]: output i is computed in place, so needs no copy afterwards.
  bool direct[64] = {};
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const uint32_t id = g.outputs[i];
    if (arena_offset_[id] == kNotInArena || i >= 64) continue;
    bool first = true;
    for (size_t j = 0; j < i; ++j) first = first && g.outputs[j] != id;
    if (first) {
      slots_[id] = outputs[i];
      direct[i] = true;
    }
  }

  for (const Op& op : g.ops) {
    float* out = slots_[op.output];
    const Value& vo = g.values[op.output];
    const Value& va = g.values[op.inputs[0]];
    const float* a = slots_[op.inputs[0]];
    switch (op.code) {
      case OpCode::kAdd: {
        const float alpha = op.alpha;
        if (alpha == 1.0f) {
          binary(va, a, g.values[op.inputs[1]], slots_[op.inputs[1]], vo, out,
                 [](float x, float y) { return x + y; });
        } else {
          binary(va, a, g.values[op.inputs[1]], slots_[op.inputs[1]], vo, out,
                 [alpha](float x, float y) { return x + alpha * y; });
        }
        break;
      }
      case OpCode::kSub: {
        const float alpha = op.alpha;
        if (alpha == 1.0f) {
          binary(va, a, g.values[op.inputs[1]], slots_[op.inputs[1]], vo, out,
                 [](float x, float y) { return x - y; });
        } else {
          binary(va, a, g.values[op.inputs[1]], slots_[op.inputs[1]], vo, out,
                 [alpha](float x, float y) { return x - alpha * y; });
        }
        break;
      }
      case OpCode::kMul:
        binary(va, a, g.values[op.inputs[1]], slots_[op.inputs[1]], vo, out,
               [](float x, float y) { return x * y; });
        break;
      case OpCode::kRelu:
        for (uint64_t i = 0; i < vo.numel; ++i) out[i] = a[i] > 0.0f ? a[i] : 0.0f;
        break;
      case OpCode::kLinear:
        linear(va, a, g.values[op.inputs[1]], slots_[op.inputs[1]],
               op.num_inputs == 3 ? slots_[op.inputs[2]] : nullptr, out);
        break;
    }
  }

  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (i < 64 && direct[i]) continue;
    const uint32_t id = g.outputs[i];
    std::memmove(outputs[i], slots_[id], g.values[id].numel * sizeof(float));
  }
}

}  // namespace reference_backend
