// A defective runtime for the suite's own tests that computes right while its named data fits in 4 GiB
// but keeps offsets into it in 32 bits (C-NDATA-5). At init it packs every named blob of the program's
// data map into one weight arena of its own, in key order, as runtimes that hand a device one weight
// buffer do; the arena is laid out with 64-bit sizes, but the offset the runtime keeps for each key is
// narrowed to NARROW_OFFSET_BITS bits (32 unless the variable says less, so the suite's quick tests can
// cross 2^24 instead of 2^32): a key stored past 2^bits is read from the start of the arena, another
// key's weights. It forwards to the reference runtime compiled into the same library, unregistered (its
// blobs name REFERENCE_BACKEND_ID, written without named-data checksums), and registers under
// "NarrowOffsetsBackend" alone.
#include "backend_interface.h"

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/log.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace executorch::runtime;

BackendInterface* inner() {
  return &reference_backend::backend_interface();
}

uint64_t offset_mask() {
  const char* bits = std::getenv("NARROW_OFFSET_BITS");
  const int n = bits != nullptr ? std::atoi(bits) : 32;
  return (n >= 16 && n < 32) ? ((uint64_t{1} << n) - 1) : uint64_t{0xffffffff};
}

// The named data of one init, packed into one arena: key -> narrowed offset.
class PackedNamedData final : public NamedDataMap {
 public:
  explicit PackedNamedData(const NamedDataMap* source) : source_(source) {}

  Error pack() {
    Result<uint32_t> count = source_->get_num_keys();
    if (!count.ok()) return count.error();
    std::vector<std::pair<std::string, FreeableBuffer>> found;
    uint64_t total = 0;
    for (uint32_t i = 0; i < *count; ++i) {
      Result<const char*> key = source_->get_key(i);
      if (!key.ok()) return key.error();
      Result<FreeableBuffer> data = source_->get_data(*key);
      if (!data.ok()) return data.error();
      total += data->size();
      found.emplace_back(*key, std::move(*data));
    }
    arena_.reset(new (std::nothrow) char[total]);
    if (!arena_ && total != 0) return Error::MemoryAllocationFailed;
    uint64_t at = 0;
    const uint64_t mask = offset_mask();
    for (auto& [key, data] : found) {
      std::memcpy(arena_.get() + at, data.data(), data.size());
      entries_[key] = {static_cast<uint64_t>(at & mask), data.size()};  // the defect: the offset narrowed
      at += data.size();
      data.Free();
    }
    return Error::Ok;
  }

  Result<const TensorLayout> get_tensor_layout(std::string_view key) const override {
    return source_->get_tensor_layout(key);
  }
  Result<FreeableBuffer> get_data(std::string_view key) const override {
    auto it = entries_.find(std::string(key));
    if (it == entries_.end()) return Error::NotFound;
    return FreeableBuffer(arena_.get() + it->second.first, it->second.second, nullptr);
  }
  Error load_data_into(std::string_view key, void* buffer, size_t size) const override {
    Result<FreeableBuffer> data = get_data(key);
    if (!data.ok()) return data.error();
    if (size > data->size()) return Error::InvalidArgument;
    std::memcpy(buffer, data->data(), size);
    return Error::Ok;
  }
  Result<uint32_t> get_num_keys() const override { return source_->get_num_keys(); }
  Result<const char*> get_key(uint32_t index) const override { return source_->get_key(index); }

 private:
  const NamedDataMap* source_;
  std::unique_ptr<char[]> arena_;
  std::map<std::string, std::pair<uint64_t, size_t>> entries_;
};

std::mutex packed_mutex;
std::map<DelegateHandle*, std::unique_ptr<PackedNamedData>> packed;  // handle -> the arena it reads

class NarrowOffsetsBackend final : public BackendInterface {
 public:
  bool is_available() const override { return inner() != nullptr && inner()->is_available(); }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    const NamedDataMap* source = context.get_named_data_map();
    if (source == nullptr) return inner()->init(context, processed, specs);
    auto map = std::make_unique<PackedNamedData>(source);
    const Error packed_ok = map->pack();
    if (packed_ok != Error::Ok) return packed_ok;
    BackendInitContext narrowed(context.get_runtime_allocator(), context.event_tracer(),
                                context.get_method_name(), map.get(), context.runtime_specs());
    Result<DelegateHandle*> made = inner()->init(narrowed, processed, specs);
    if (!made.ok()) return made.error();
    std::lock_guard<std::mutex> lock(packed_mutex);
    packed[*made] = std::move(map);
    return *made;
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle, Span<EValue*> args) const override {
    return inner()->execute(context, handle, args);
  }

  void destroy(DelegateHandle* handle) const override {
    inner()->destroy(handle);
    std::lock_guard<std::mutex> lock(packed_mutex);
    packed.erase(handle);
  }
};

NarrowOffsetsBackend backend;
Backend registration{"NarrowOffsetsBackend", &backend};
const Error registered = register_backend(registration);

}  // namespace
