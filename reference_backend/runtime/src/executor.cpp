#include <reference_backend/checked.h>
#include <reference_backend/executor.h>
#include <reference_backend/float_ops.h>

#include <backend_kit/header.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

namespace reference_backend {
namespace {

constexpr uint64_t kNotInArena = UINT64_MAX;

template <typename T, typename F>
void binary_same_shape(const T* __restrict a, const T* __restrict b, T* __restrict out, uint64_t n, F f) {
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

template <typename T, typename F>
void binary(const Value& va, const T* a, const Value& vb, const T* b, const Value& vo, T* out, F f) {
  const uint64_t n = vo.numel;
  if (va.numel == n && vb.numel == n) {
    binary_same_shape(a, b, out, n, f);
  } else if (vb.numel == 1) {
    const T s = b[0];
    for (uint64_t i = 0; i < n; ++i) out[i] = f(a[i], s);  // a has the output's shape
  } else if (va.numel == 1) {
    const T s = a[0];
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

void linear(const Value& vx, const float* __restrict x, const Value& vw, const float* __restrict w,
            const float* __restrict bias, float* __restrict out) {
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

int32_t clamp_q(int64_t v, int32_t lo, int32_t hi) {
  return static_cast<int32_t>(v < lo ? lo : v > hi ? hi : v);
}

float param_float(const int32_t* p) {
  float f;
  std::memcpy(&f, p, sizeof f);
  return f;
}

/// Rounding right shift, round half up (arithmetic shift: floor for negatives).
int64_t shift_round(int64_t v, int32_t shift) {
  return (v + (int64_t{1} << (shift - 1))) >> shift;
}

/// Conv geometry from the op's first seven parameter words.
struct ConvGeometry {
  uint32_t stride[2], pad[2], dil[2], groups;
  explicit ConvGeometry(const int32_t* p)
      : stride{static_cast<uint32_t>(p[0]), static_cast<uint32_t>(p[1])},
        pad{static_cast<uint32_t>(p[2]), static_cast<uint32_t>(p[3])},
        dil{static_cast<uint32_t>(p[4]), static_cast<uint32_t>(p[5])},
        groups(static_cast<uint32_t>(p[6])) {}
};

/// Direct NCHW convolution. `Acc` sums products of (x - x_zero) and w; each
/// output element goes through `finish(channel, sum)`. Padding reads as
/// x_zero, so it contributes nothing.
template <typename In, typename Acc, typename Out, typename Finish>
void conv2d(const Value& vx, const In* x, const Value& vw, const In* w, const Value& vo, Out* out,
            const ConvGeometry& g, Acc x_zero, Finish finish) {
  const uint32_t n_dim = vx.dims[0], c_dim = vx.dims[1], h_in = vx.dims[2], w_in = vx.dims[3];
  const uint32_t o_dim = vw.dims[0], c_per = vw.dims[1], kh = vw.dims[2], kw = vw.dims[3];
  const uint32_t h_out = vo.dims[2], w_out = vo.dims[3];
  const uint32_t o_per = o_dim / g.groups;
  (void)c_dim;
  for (uint32_t n = 0; n < n_dim; ++n) {
    for (uint32_t o = 0; o < o_dim; ++o) {
      const uint32_t c0 = (o / o_per) * c_per;
      for (uint32_t oh = 0; oh < h_out; ++oh) {
        for (uint32_t ow = 0; ow < w_out; ++ow) {
          Acc sum = 0;
          for (uint32_t c = 0; c < c_per; ++c) {
            const In* xc = x + ((static_cast<uint64_t>(n) * vx.dims[1] + c0 + c) * h_in) * w_in;
            const In* wc = w + ((static_cast<uint64_t>(o) * c_per + c) * kh) * kw;
            for (uint32_t i = 0; i < kh; ++i) {
              const int64_t ih =
                  static_cast<int64_t>(oh) * g.stride[0] + static_cast<int64_t>(i) * g.dil[0] - g.pad[0];
              if (ih < 0 || ih >= h_in) continue;
              for (uint32_t j = 0; j < kw; ++j) {
                const int64_t iw =
                    static_cast<int64_t>(ow) * g.stride[1] + static_cast<int64_t>(j) * g.dil[1] - g.pad[1];
                if (iw < 0 || iw >= w_in) continue;
                sum += (static_cast<Acc>(xc[ih * w_in + iw]) - x_zero) * static_cast<Acc>(wc[i * kw + j]);
              }
            }
          }
          out[((static_cast<uint64_t>(n) * o_dim + o) * h_out + oh) * w_out + ow] = finish(o, sum);
        }
      }
    }
  }
}

void qlinear(const Value& vx, const int8_t* __restrict x, const Value& vw, const int8_t* __restrict w,
             const int32_t* __restrict bias, int8_t* __restrict out, const int32_t* p) {
  const int32_t zx = p[0], zo = p[1], lo = p[2], hi = p[3];
  const uint64_t k_dim = vw.dims[1];
  const uint64_t n_dim = vw.dims[0];
  const int32_t* mult = p + kQLinearFixedWords;
  const int32_t* shift = mult + n_dim;
  const uint64_t rows = k_dim == 0 ? 0 : vx.numel / k_dim;
  for (uint64_t m = 0; m < rows; ++m) {
    const int8_t* xr = x + m * k_dim;
    for (uint64_t n = 0; n < n_dim; ++n) {
      const int8_t* wr = w + n * k_dim;
      int64_t acc = bias ? bias[n] : 0;
      for (uint64_t k = 0; k < k_dim; ++k)
        acc += (static_cast<int32_t>(xr[k]) - zx) * static_cast<int32_t>(wr[k]);
      out[m * n_dim + n] =
          static_cast<int8_t>(clamp_q(zo + int64_t{requantize(acc, mult[n], shift[n])}, lo, hi));
    }
  }
}

}  // namespace

int32_t requantize(int64_t acc, int32_t multiplier, int32_t shift) {
  const int64_t a = acc < INT32_MIN ? INT32_MIN : acc > INT32_MAX ? INT32_MAX : acc;
  const int64_t r = shift_round(a * multiplier, shift);
  return static_cast<int32_t>(r < INT32_MIN ? INT32_MIN : r > INT32_MAX ? INT32_MAX : r);
}

namespace {}  // namespace

Executor::Executor(Graph graph)
    : graph_(std::move(graph)),
      arena_offset_(graph_.values.size(), kNotInArena),
      slots_(graph_.values.size(), nullptr),
      shapes_(graph_.values) {
  // Every op result gets its own arena slot, sized for the bounds; results
  // that are graph outputs are written straight into the caller's output
  // tensor by run() instead.
  // The total is at most the memory need init() checked (backend.cpp:
  // memory_need, in checked arithmetic, and narrowed to size_t there).
  Size total = 0;
  for (const Op& op : graph_.ops) {
    const Value& v = graph_.values[op.output];
    arena_offset_[op.output] = total.value();
    total += (Size(v.numel) * dtype_size(v.dtype)).align_up(64);
  }
  arena_.resize(static_cast<size_t>(total.value() / 8));
}

bool Executor::prepare(const uint32_t* const* input_dims, std::string& error) {
  const Graph& g = graph_;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& declared = g.values[g.inputs[i]];
    Value& v = shapes_[g.inputs[i]];
    Size numel = 1;
    for (uint32_t d = 0; d < declared.rank; ++d) {
      const uint32_t size = input_dims[i][d];
      const bool dynamic = (declared.dynamic_mask >> d) & 1;
      if (dynamic ? size > declared.dims[d] : size != declared.dims[d]) {
        error = dynamic ? backend_kit::format(
                              "input %zu dimension %u is %u, above its upper bound %u (the bound given to "
                              "torch.export.Dim at export)",
                              i, d, size, declared.dims[d])
                        : backend_kit::format(
                              "input %zu dimension %u is %u, the blob was exported for %u (a static "
                              "dimension: re-export with a torch.export.Dim for it)",
                              i, d, size, declared.dims[d]);
        return false;
      }
      v.dims[d] = size;
      numel *= size;
    }
    v.numel = numel.value();  // at most the declared bound's, which init() checked
  }
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const Value* in[3] = {};
    for (uint32_t k = 0; k < op.num_inputs; ++k) in[k] = &shapes_[op.inputs[k]];
    Value& out = shapes_[op.output];
    std::string why;
    if (!infer_shape(g, op, in, out, why)) {
      error = backend_kit::format("op %zu (opcode %u) cannot take these input sizes: %s", i,
                                  static_cast<unsigned>(op.code), why.c_str());
      return false;
    }
    const Value& bound = g.values[op.output];
    for (uint32_t d = 0; d < out.rank; ++d) {
      if (out.dims[d] > bound.dims[d]) {
        error =
            backend_kit::format("op %zu (opcode %u) would compute dimension %u of size %u, above the %u its "
                                "result was exported for",
                                i, static_cast<unsigned>(op.code), d, out.dims[d], bound.dims[d]);
        return false;
      }
    }
  }
  return true;
}

void Executor::run(const void* const* inputs, void* const* outputs) {
  const Graph& g = graph_;
  auto* arena = reinterpret_cast<uint8_t*>(arena_.data());
  auto* constants = const_cast<uint8_t*>(g.constants());
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (v.kind == ValueKind::kConstant) {
      slots_[i] = constants + v.constant_offset;
    } else if (v.kind == ValueKind::kNamed) {
      // Read in place (the NamedDataMap's buffer, e.g. mmap'd .ptd pages).
      slots_[i] = reinterpret_cast<uint8_t*>(const_cast<float*>(g.named_data[v.constant_offset]));
    } else if (arena_offset_[i] != kNotInArena) {
      slots_[i] = arena + arena_offset_[i];
    }
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    slots_[g.inputs[i]] = static_cast<uint8_t*>(const_cast<void*>(inputs[i]));
  }
  // direct[i]: output i is computed in place, so needs no copy afterwards.
  bool direct[64] = {};
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const uint32_t id = g.outputs[i];
    if (arena_offset_[id] == kNotInArena || i >= 64) continue;
    bool first = true;
    for (size_t j = 0; j < i; ++j) first = first && g.outputs[j] != id;
    if (first) {
      slots_[id] = static_cast<uint8_t*>(outputs[i]);
      direct[i] = true;
    }
  }

  auto f32 = [&](uint32_t id) { return reinterpret_cast<float*>(slots_[id]); };
  auto i8 = [&](uint32_t id) { return reinterpret_cast<int8_t*>(slots_[id]); };
  auto i32 = [&](uint32_t id) { return reinterpret_cast<int32_t*>(slots_[id]); };
  for (const Op& op : g.ops) {
    const Value& vo = shapes_[op.output];
    const Value& va = shapes_[op.inputs[0]];
    const Value& vb = shapes_[op.inputs[op.num_inputs > 1 ? 1 : 0]];
    const int32_t* p = g.params.data() + op.param_offset;
    const uint32_t a = op.inputs[0], b = op.inputs[1];
    switch (op.code) {
      case OpCode::kAdd: {
        const float alpha = op.alpha;
        if (alpha == 1.0f) {
          binary(va, f32(a), vb, f32(b), vo, f32(op.output), [](float x, float y) { return x + y; });
        } else {
          binary(va, f32(a), vb, f32(b), vo, f32(op.output),
                 [alpha](float x, float y) { return x + alpha * y; });
        }
        break;
      }
      case OpCode::kSub: {
        const float alpha = op.alpha;
        if (alpha == 1.0f) {
          binary(va, f32(a), vb, f32(b), vo, f32(op.output), [](float x, float y) { return x - y; });
        } else {
          binary(va, f32(a), vb, f32(b), vo, f32(op.output),
                 [alpha](float x, float y) { return x - alpha * y; });
        }
        break;
      }
      case OpCode::kMul:
        binary(va, f32(a), vb, f32(b), vo, f32(op.output), [](float x, float y) { return x * y; });
        break;
      case OpCode::kRelu: {
        const float* x = f32(a);
        float* out = f32(op.output);
        for (uint64_t i = 0; i < vo.numel; ++i) out[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
      }
      case OpCode::kLinear:
        linear(va, f32(a), vb, f32(b), op.num_inputs == 3 ? f32(op.inputs[2]) : nullptr, f32(op.output));
        break;
      case OpCode::kConv2d: {
        const float* bias = op.num_inputs == 3 ? f32(op.inputs[2]) : nullptr;
        conv2d(va, f32(a), vb, f32(b), vo, f32(op.output), ConvGeometry(p), 0.0f,
               [bias](uint32_t o, float sum) { return sum + (bias ? bias[o] : 0.0f); });
        break;
      }
      case OpCode::kQuantize: {
        const float inv = param_float(p);  // float32(1 / scale), as torch.quantize_per_tensor
        const int32_t zp = p[1], lo = p[2], hi = p[3];
        const float* x = f32(a);
        int8_t* out = i8(op.output);
        for (uint64_t i = 0; i < vo.numel; ++i) {
          // nearbyint: round half to even, as torch.round and numpy.rint.
          const float r = std::nearbyint(x[i] * inv);
          const float c = r < -1e9f ? -1e9f : r > 1e9f ? 1e9f : r;  // NaN is caught below
          const int64_t q = c == c ? static_cast<int64_t>(c) + zp : zp;
          out[i] = static_cast<int8_t>(clamp_q(q, lo, hi));
        }
        break;
      }
      case OpCode::kDequantize: {
        const float scale = param_float(p);
        const int32_t zp = p[1];
        const int8_t* x = i8(a);
        float* out = f32(op.output);
        for (uint64_t i = 0; i < vo.numel; ++i) out[i] = static_cast<float>(x[i] - zp) * scale;
        break;
      }
      case OpCode::kQLinear:
        qlinear(va, i8(a), vb, i8(b), op.num_inputs == 3 ? i32(op.inputs[2]) : nullptr, i8(op.output), p);
        break;
      case OpCode::kQConv2d: {
        const int32_t* q = p + kConvGeometryWords;
        const int32_t zx = q[0], zo = q[1], lo = q[2], hi = q[3];
        const int32_t* mult = q + 4;
        const int32_t* shift = mult + vb.dims[0];
        const int32_t* bias = op.num_inputs == 3 ? i32(op.inputs[2]) : nullptr;
        conv2d(
            va, i8(a), vb, i8(b), vo, i8(op.output), ConvGeometry(p), int64_t{zx},
            [=](uint32_t o, int64_t sum) {
              const int64_t acc = sum + (bias ? bias[o] : 0);
              return static_cast<int8_t>(clamp_q(zo + int64_t{requantize(acc, mult[o], shift[o])}, lo, hi));
            });
        break;
      }
      case OpCode::kQAdd: {
        const int32_t za = p[0], zb = p[1], zo = p[2], lo = p[3], hi = p[4], ma = p[5], mb = p[6], s = p[7];
        binary(va, i8(a), vb, i8(b), vo, i8(op.output), [=](int8_t x, int8_t y) {
          const int64_t acc = int64_t{x - za} * ma + int64_t{y - zb} * mb;
          return static_cast<int8_t>(clamp_q(zo + shift_round(acc, s), lo, hi));
        });
        break;
      }
      case OpCode::kQRelu: {
        const int32_t zx = p[0], zo = p[1], lo = p[2], hi = p[3], m = p[4], s = p[5];
        const int8_t* x = i8(a);
        int8_t* out = i8(op.output);
        for (uint64_t i = 0; i < vo.numel; ++i) {
          const int32_t v = x[i] - zx;
          out[i] = static_cast<int8_t>(clamp_q(zo + int64_t{requantize(v > 0 ? v : 0, m, s)}, lo, hi));
        }
        break;
      }
      case OpCode::kDiv:
        binary(va, f32(a), vb, f32(b), vo, f32(op.output), [](float x, float y) { return x / y; });
        break;
      default: run_float_op(op, p, va, f32(a), vo, f32(op.output)); break;  // format 1.4 (float_ops.h)
    }
  }

  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (i < 64 && direct[i]) continue;
    const uint32_t id = g.outputs[i];
    std::memmove(outputs[i], slots_[id], shapes_[id].numel * dtype_size(shapes_[id].dtype));
  }
}

}  // namespace reference_backend
