// The tensor file format of tensors.h.
#include "tensors.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace conformance_runner {

using executorch::aten::ScalarType;
using executorch::runtime::EValue;

namespace {

const char kMagic[4] = {'E', 'T', 'C', 'T'};

template <typename T>
bool get(std::FILE* f, T& value) {
  return std::fread(&value, sizeof(T), 1, f) == 1;
}

template <typename T>
bool put(std::FILE* f, const T& value) {
  return std::fwrite(&value, sizeof(T), 1, f) == 1;
}

bool put_tensor(std::FILE* f, int32_t type, const std::vector<int64_t>& sizes,
                const std::vector<uint8_t>& order, const void* data, uint64_t nbytes) {
  bool ok = put(f, type) && put(f, static_cast<uint32_t>(sizes.size()));
  for (int64_t s : sizes) ok = ok && put(f, s);
  for (uint8_t d : order) ok = ok && put(f, d);
  ok = ok && put(f, nbytes);
  return ok && (nbytes == 0 || std::fwrite(data, 1, nbytes, f) == nbytes);
}

}  // namespace

std::vector<executorch::extension::TensorPtr> read_tensors(const std::string& path, std::string& error) {
  std::vector<executorch::extension::TensorPtr> tensors;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return tensors;
  }
  char magic[4];
  uint32_t count = 0;
  if (std::fread(magic, 1, 4, f) != 4 || std::memcmp(magic, kMagic, 4) != 0 || !get(f, count)) {
    error = path + " is not a tensor file";
  }
  for (uint32_t i = 0; error.empty() && i < count; ++i) {
    int32_t type = 0;
    uint32_t ndim = 0;
    uint64_t nbytes = 0;
    std::vector<executorch::aten::SizesType> sizes;
    std::vector<executorch::aten::DimOrderType> order;
    bool ok = get(f, type) && get(f, ndim) && ndim <= 16;
    for (uint32_t d = 0; ok && d < ndim; ++d) {
      int64_t s = 0;
      ok = get(f, s) && s >= 0;
      sizes.push_back(static_cast<executorch::aten::SizesType>(s));
    }
    for (uint32_t d = 0; ok && d < ndim; ++d) {
      uint8_t o = 0;
      ok = get(f, o) && o < ndim;
      order.push_back(o);
    }
    ok = ok && get(f, nbytes) && nbytes < (uint64_t(1) << 34);
    std::vector<uint8_t> data(ok ? nbytes : 0);
    ok = ok && (nbytes == 0 || std::fread(data.data(), 1, nbytes, f) == nbytes);
    if (!ok) {
      error = path + ": tensor " + std::to_string(i) + " is truncated or malformed";
      break;
    }
    tensors.push_back(executorch::extension::make_tensor_ptr(
        std::move(sizes), std::move(data), std::move(order), {}, static_cast<ScalarType>(type)));
  }
  std::fclose(f);
  return tensors;
}

bool write_tensors(const std::string& path, const std::vector<EValue>& values, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(kMagic, 1, 4, f) == 4 && put(f, static_cast<uint32_t>(values.size()));
  for (const EValue& v : values) {
    if (!ok) break;
    if (v.isTensor()) {
      const auto& t = v.toTensor();
      std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
      std::vector<uint8_t> order(t.dim_order().begin(), t.dim_order().end());
      ok = put_tensor(f, static_cast<int32_t>(t.scalar_type()), sizes, order, t.const_data_ptr(), t.nbytes());
    } else if (v.isInt()) {
      const int64_t x = v.toInt();
      ok = put_tensor(f, static_cast<int32_t>(ScalarType::Long), {}, {}, &x, sizeof(x));
    } else if (v.isDouble()) {
      const double x = v.toDouble();
      ok = put_tensor(f, static_cast<int32_t>(ScalarType::Double), {}, {}, &x, sizeof(x));
    } else if (v.isBool()) {
      const uint8_t x = v.toBool() ? 1 : 0;
      ok = put_tensor(f, static_cast<int32_t>(ScalarType::Bool), {}, {}, &x, sizeof(x));
    } else {
      ok = put_tensor(f, -1, {}, {}, nullptr, 0);  // an output the format cannot carry (None, a list)
    }
  }
  const int write_errno = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    error = "cannot write " + path + ": " + std::strerror(errno);
  } else if (!ok) {
    error = "cannot write " + path + ": " + std::strerror(write_errno ? write_errno : EIO);
  }
  return ok;
}

}  // namespace conformance_runner
