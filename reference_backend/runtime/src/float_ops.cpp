#include <reference_backend/float_ops.h>

#include <backend_kit/header.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace reference_backend {
namespace {

/// Pooling geometry of one spatial dimension, from the op's words.
struct Window {
  uint32_t kernel, stride, pad, dilation;
};

/// Max pool: kernel h, w; stride h, w; padding h, w; dilation h, w; ceil_mode.
/// Avg pool: kernel h, w; stride h, w; padding h, w; ceil_mode; count_include_pad; divisor.
Window window(const Op& op, const int32_t* p, uint32_t s) {
  const bool max = op.code == OpCode::kMaxPool2d;
  return {static_cast<uint32_t>(p[s]), static_cast<uint32_t>(p[2 + s]), static_cast<uint32_t>(p[4 + s]),
          max ? static_cast<uint32_t>(p[6 + s]) : 1u};
}

bool ceil_mode(const Op& op, const int32_t* p) {
  return p[op.code == OpCode::kMaxPool2d ? 8 : 6] != 0;
}

/// One output size of a pooling window, as torch's pooling_output_shape: in
/// ceil mode the last window must start inside the input or its left padding.
/// False for an empty input, a window larger than the padded input or a size
/// that does not fit 32 bits.
bool pool_out(uint64_t in, const Window& w, bool ceil, uint32_t& out) {
  const Size span = Size(w.dilation) * (w.kernel - 1) + 1;
  const Size padded = Size(in) + Size(w.pad) * 2;
  if (in == 0 || w.kernel == 0 || w.stride == 0 || !span.ok() || !padded.ok() ||
      padded.value() < span.value()) {
    return false;
  }
  Size n = (padded - span + (ceil ? w.stride - 1 : 0)) / w.stride + 1;
  if (ceil && n.ok() && ((n - 1) * w.stride).value() >= in + w.pad) n = n - 1;
  return n.to_u32(out);
}

bool flag(int32_t v) {
  return v == 0 || v == 1;
}

/// Contiguous element strides of `v`.
void strides_of(const Value& v, uint64_t* strides) {
  uint64_t s = 1;
  for (uint32_t d = v.rank; d-- > 0;) {
    strides[d] = s;
    s *= v.dims[d];
  }
}

/// out = max of each window; NaN wins, as in torch (a window of padding only: -inf).
void max_pool2d(const Op& op, const int32_t* p, const Value& vx, const float* x, const Value& vo,
                float* out) {
  const uint32_t h_in = vx.dims[vx.rank - 2], w_in = vx.dims[vx.rank - 1];
  const uint32_t h_out = vo.dims[vo.rank - 2], w_out = vo.dims[vo.rank - 1];
  const Window wh = window(op, p, 0), ww = window(op, p, 1);
  const uint64_t planes = vo.numel / (uint64_t{h_out} * w_out);
  for (uint64_t c = 0; c < planes; ++c) {
    const float* plane = x + c * h_in * w_in;
    for (uint32_t oh = 0; oh < h_out; ++oh) {
      for (uint32_t ow = 0; ow < w_out; ++ow) {
        float best = -std::numeric_limits<float>::infinity();
        for (uint32_t i = 0; i < wh.kernel; ++i) {
          const int64_t ih = int64_t{oh} * wh.stride + int64_t{i} * wh.dilation - wh.pad;
          if (ih < 0 || ih >= h_in) continue;
          for (uint32_t j = 0; j < ww.kernel; ++j) {
            const int64_t iw = int64_t{ow} * ww.stride + int64_t{j} * ww.dilation - ww.pad;
            if (iw < 0 || iw >= w_in) continue;
            const float v = plane[ih * w_in + iw];
            if (v > best || std::isnan(v)) best = v;
            if (std::isnan(best)) break;
          }
          if (std::isnan(best)) break;
        }
        out[(c * h_out + oh) * w_out + ow] = best;
      }
    }
  }
}

/// out = sum of each window / its divisor, as torch's avg_pool2d: the divisor
/// is divisor_override if set, else the window's size clipped to the padded
/// input (count_include_pad) or to the input.
void avg_pool2d(const Op& op, const int32_t* p, const Value& vx, const float* x, const Value& vo,
                float* out) {
  const int64_t h_in = vx.dims[vx.rank - 2], w_in = vx.dims[vx.rank - 1];
  const uint32_t h_out = vo.dims[vo.rank - 2], w_out = vo.dims[vo.rank - 1];
  const Window wh = window(op, p, 0), ww = window(op, p, 1);
  const bool include_pad = p[7] != 0;
  const int32_t divisor = p[8];
  const uint64_t planes = vo.numel / (uint64_t{h_out} * w_out);
  for (uint64_t c = 0; c < planes; ++c) {
    const float* plane = x + c * h_in * w_in;
    for (uint32_t oh = 0; oh < h_out; ++oh) {
      int64_t h0 = int64_t{oh} * wh.stride - wh.pad;
      int64_t h1 = std::min<int64_t>(h0 + wh.kernel, h_in + wh.pad);
      const int64_t padded_h = h1 - h0;
      h0 = std::max<int64_t>(h0, 0);
      h1 = std::min<int64_t>(h1, h_in);
      for (uint32_t ow = 0; ow < w_out; ++ow) {
        int64_t w0 = int64_t{ow} * ww.stride - ww.pad;
        int64_t w1 = std::min<int64_t>(w0 + ww.kernel, w_in + ww.pad);
        const int64_t padded_w = w1 - w0;
        w0 = std::max<int64_t>(w0, 0);
        w1 = std::min<int64_t>(w1, w_in);
        float& result = out[(c * h_out + oh) * w_out + ow];
        if (h0 >= h1 || w0 >= w1) {
          result = 0.0f;
          continue;
        }
        double sum = 0.0;
        for (int64_t ih = h0; ih < h1; ++ih) {
          for (int64_t iw = w0; iw < w1; ++iw) sum += plane[ih * w_in + iw];
        }
        const int64_t count = divisor != 0  ? divisor
                              : include_pad ? padded_h * padded_w
                                            : (h1 - h0) * (w1 - w0);
        result = static_cast<float>(sum / static_cast<double>(count));
      }
    }
  }
}

/// Softmax along `dim`, the maximum subtracted first, in double.
void softmax(const Value& vx, const float* x, uint32_t dim, float* out) {
  uint64_t outer = 1, inner = 1;
  for (uint32_t d = 0; d < dim; ++d) outer *= vx.dims[d];
  for (uint32_t d = dim + 1; d < vx.rank; ++d) inner *= vx.dims[d];
  const uint64_t len = vx.dims[dim];
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t i = 0; i < inner; ++i) {
      const float* row = x + o * len * inner + i;
      float* dst = out + o * len * inner + i;
      // The maximum of floats is a float, so it is taken in float (exact). Widening it to double in the loop
      // makes GCC 12's aarch64 vectorizer crash (an internal compiler error in vect_transform_reduction).
      // fmax skips NaN; a NaN in the row still makes every result NaN through exp(NaN).
      float top_f = -std::numeric_limits<float>::infinity();
      for (uint64_t k = 0; k < len; ++k) top_f = std::fmax(top_f, row[k * inner]);
      const double top = top_f;
      double sum = 0.0;
      for (uint64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(row[k * inner]) - top);
      for (uint64_t k = 0; k < len; ++k) {
        dst[k * inner] = static_cast<float>(std::exp(static_cast<double>(row[k * inner]) - top) / sum);
      }
    }
  }
}

/// Mean over the dimensions in `mask`, summed in double; an empty reduction gives NaN (0 / 0), as torch.
void mean(const Value& vx, const float* x, uint32_t mask, float* out) {
  uint64_t strides[kMaxRank];
  strides_of(vx, strides);
  uint32_t kept[kMaxRank], reduced[kMaxRank], nk = 0, nr = 0;
  uint64_t count = 1, outputs = 1;
  for (uint32_t d = 0; d < vx.rank; ++d) {
    if ((mask >> d) & 1) {
      reduced[nr++] = d;
      count *= vx.dims[d];
    } else {
      kept[nk++] = d;
      outputs *= vx.dims[d];
    }
  }
  uint32_t ki[kMaxRank] = {};
  uint64_t base = 0;
  for (uint64_t o = 0; o < outputs; ++o) {
    double sum = 0.0;
    uint32_t ri[kMaxRank] = {};
    uint64_t off = 0;
    for (uint64_t r = 0; r < count; ++r) {
      sum += x[base + off];
      for (uint32_t k = nr; k-- > 0;) {  // odometer over the reduced dimensions
        const uint32_t d = reduced[k];
        off += strides[d];
        if (++ri[k] < vx.dims[d]) break;
        off -= strides[d] * vx.dims[d];
        ri[k] = 0;
      }
    }
    out[o] = static_cast<float>(sum / static_cast<double>(count));
    for (uint32_t k = nk; k-- > 0;) {  // odometer over the kept dimensions
      const uint32_t d = kept[k];
      base += strides[d];
      if (++ki[k] < vx.dims[d]) break;
      base -= strides[d] * vx.dims[d];
      ki[k] = 0;
    }
  }
}

/// out[i0, i1, ...] = x[index with dimension perm[k] = ik].
void permute(const Value& vx, const float* x, const int32_t* perm, const Value& vo, float* out) {
  uint64_t in_strides[kMaxRank], step[kMaxRank];
  strides_of(vx, in_strides);
  for (uint32_t k = 0; k < vo.rank; ++k) step[k] = in_strides[perm[k]];
  uint32_t index[kMaxRank] = {};
  uint64_t off = 0;
  for (uint64_t i = 0; i < vo.numel; ++i) {
    out[i] = x[off];
    for (uint32_t k = vo.rank; k-- > 0;) {
      off += step[k];
      if (++index[k] < vo.dims[k]) break;
      off -= step[k] * vo.dims[k];
      index[k] = 0;
    }
  }
}

}  // namespace

bool is_float_op(OpCode code) {
  return static_cast<uint8_t>(code) >= static_cast<uint8_t>(OpCode::kDiv) &&
         static_cast<uint8_t>(code) <= static_cast<uint8_t>(OpCode::kView);
}

uint32_t float_op_params(const Graph& g, const Op& op) {
  switch (op.code) {
    case OpCode::kClamp: return kClampWords;
    case OpCode::kMaxPool2d: return kMaxPoolWords;
    case OpCode::kAvgPool2d: return kAvgPoolWords;
    case OpCode::kSoftmax: return kSoftmaxWords;
    case OpCode::kMean: return kMeanWords;
    case OpCode::kPermute: return g.values[op.inputs[0]].rank;
    case OpCode::kView: return g.values[op.output].rank;
    default: return 0;
  }
}

bool check_float_op_params(const Op& op, const int32_t* p, std::string& why) {
  switch (op.code) {
    case OpCode::kMaxPool2d:
    case OpCode::kAvgPool2d: {
      const bool is_max = op.code == OpCode::kMaxPool2d;
      for (uint32_t s = 0; s < 2; ++s) {
        const int32_t k = p[s], stride = p[2 + s], pad = p[4 + s], dil = is_max ? p[6 + s] : 1;
        if (k < 1 || stride < 1 || dil < 1 || pad < 0 || k > kMaxPoolGeometry || stride > kMaxPoolGeometry ||
            dil > kMaxPoolGeometry || pad > ((int64_t{k} - 1) * dil + 1) / 2) {
          why = backend_kit::format(
              "pooling dimension %u has kernel %d, stride %d, padding %d, dilation %d (kernel, stride and "
              "dilation 1 to %d, padding at most half the dilated kernel)",
              s, k, stride, pad, dil, kMaxPoolGeometry);
          return false;
        }
      }
      if (is_max ? !flag(p[8]) : !flag(p[6]) || !flag(p[7]) || p[8] < 0 || p[8] > kMaxPoolGeometry) {
        why = "pooling ceil_mode and count_include_pad must be 0 or 1, divisor_override 0 (none) to 65535";
        return false;
      }
      return true;
    }
    case OpCode::kMean:
      if (p[0] < 0 || p[0] > 0xff || !flag(p[1])) {
        why = backend_kit::format("mean has dimension mask %d and keepdim %d (mask 0 to 255, keepdim 0 or 1)",
                                  p[0], p[1]);
        return false;
      }
      return true;
    default: return true;
  }
}

bool infer_float_op_shape(const Op& op, const int32_t* p, const Value& x, Value& out, std::string& why) {
  out.rank = x.rank;
  for (uint32_t d = 0; d < x.rank; ++d) out.dims[d] = x.dims[d];
  switch (op.code) {
    case OpCode::kMaxPool2d:
    case OpCode::kAvgPool2d:
      if (x.rank != 3 && x.rank != 4) {
        why = backend_kit::format("pooling needs a 3-D or 4-D input, got rank %u", x.rank);
        return false;
      }
      for (uint32_t s = 0; s < 2; ++s) {
        const uint32_t d = x.rank - 2 + s;
        if (!pool_out(x.dims[d], window(op, p, s), ceil_mode(op, p), out.dims[d])) {
          why = backend_kit::format("pooling window larger than the padded input (dimension %u is %u)", d,
                                    x.dims[d]);
          return false;
        }
      }
      return true;
    case OpCode::kSoftmax:
      if (p[0] < 0 || static_cast<uint32_t>(p[0]) >= x.rank) {
        why = backend_kit::format("softmax dim %d of a rank-%u input", p[0], x.rank);
        return false;
      }
      return true;
    case OpCode::kMean: {
      const uint32_t mask = static_cast<uint32_t>(p[0]);
      if (x.rank < 8 && (mask >> x.rank) != 0) {
        why = backend_kit::format("mean dimension mask 0x%02x names a dimension of a rank-%u input", mask,
                                  x.rank);
        return false;
      }
      out.rank = 0;
      for (uint32_t d = 0; d < x.rank; ++d) {
        if (!((mask >> d) & 1)) {
          out.dims[out.rank++] = x.dims[d];
        } else if (p[1] != 0) {
          out.dims[out.rank++] = 1;
        }
      }
      return true;
    }
    case OpCode::kPermute: {
      uint32_t seen = 0;
      for (uint32_t k = 0; k < x.rank; ++k) {
        const int32_t d = p[k];
        if (d < 0 || static_cast<uint32_t>(d) >= x.rank || ((seen >> d) & 1)) {
          why =
              backend_kit::format("permute word %u is %d: not a permutation of %u dimensions", k, d, x.rank);
          return false;
        }
        seen |= 1u << d;
        out.dims[k] = x.dims[d];
      }
      return true;
    }
    case OpCode::kView: {
      if (op.param_count > kMaxRank) {
        why = backend_kit::format("view to rank %u, at most %u", op.param_count, kMaxRank);
        return false;
      }
      out.rank = op.param_count;
      Size numel = 1;
      for (uint32_t k = 0; k < op.param_count; ++k) {
        if (p[k] < 0) {
          why = backend_kit::format("view size %u is %d", k, p[k]);
          return false;
        }
        out.dims[k] = static_cast<uint32_t>(p[k]);
        numel *= out.dims[k];
      }
      if (!numel.ok() || numel.value() != x.numel) {
        why = backend_kit::format("view of %llu elements as %llu", static_cast<unsigned long long>(x.numel),
                                  static_cast<unsigned long long>(numel.value()));
        return false;
      }
      return true;
    }
    default: return true;  // elementwise: the input's shape
  }
}

Size float_op_steps(const Graph& g, const Op& op) {
  const Value& x = g.values[op.inputs[0]];
  const Value& out = g.values[op.output];
  const Size n = out.numel;
  const int32_t* p = g.params.data() + op.param_offset;
  switch (op.code) {
    case OpCode::kDiv: return n * 4;  // as add: two reads, one write, the broadcast carry
    case OpCode::kSigmoid:
    case OpCode::kTanh:
    case OpCode::kClamp:
    case OpCode::kPermute:  // one read, one write (and the odometer's carry, amortized)
    case OpCode::kView: return n * 2;
    case OpCode::kMaxPool2d:
    case OpCode::kAvgPool2d: {
      // Per output element: per kernel row (a bounds check), per kernel column (a read).
      const Size per_window = word_size(p[0]) * (word_size(p[1]) + 1) + 1;
      return n * (per_window + 1);
    }
    case OpCode::kSoftmax: return Size(x.numel) * 4;  // max, sum of exp, exp and divide; per row
    case OpCode::kMean: return Size(x.numel) + n * 2;  // every input read once, each output written
    default: return Size::invalid();
  }
}

void run_float_op(const Op& op, const int32_t* p, const Value& vx, const float* x, const Value& vo,
                  float* out) {
  const uint64_t n = vo.numel;
  switch (op.code) {
    case OpCode::kSigmoid:
      for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<float>(1.0 / (1.0 + std::exp(-double{x[i]})));
      break;
    case OpCode::kTanh:
      for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<float>(std::tanh(double{x[i]}));
      break;
    case OpCode::kClamp: {
      float lo, hi;
      std::memcpy(&lo, &p[0], sizeof lo);
      std::memcpy(&hi, &p[1], sizeof hi);
      // NaN stays NaN (neither comparison holds); lo > hi gives hi everywhere, as torch.clamp.
      for (uint64_t i = 0; i < n; ++i) {
        const float v = x[i] < lo ? lo : x[i];
        out[i] = v > hi ? hi : v;
      }
      break;
    }
    case OpCode::kMaxPool2d: max_pool2d(op, p, vx, x, vo, out); break;
    case OpCode::kAvgPool2d: avg_pool2d(op, p, vx, x, vo, out); break;
    case OpCode::kSoftmax: softmax(vx, x, static_cast<uint32_t>(p[0]), out); break;
    case OpCode::kMean: mean(vx, x, static_cast<uint32_t>(p[0]), out); break;
    case OpCode::kPermute: permute(vx, x, p, vo, out); break;
    case OpCode::kView:
      if (n > 0) std::memcpy(out, x, n * sizeof(float));
      break;
    default: break;
  }
}

}  // namespace reference_backend
