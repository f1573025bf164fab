// The registered backend's init() and destroy() on arbitrary blobs, through
// the real ExecuTorch BackendInterface. The header checksum is repaired
// first, so mutations reach the payload parser instead of stopping at the
// CRC. Accepted graphs with small tensors are then run on zeros.
#include <reference_backend/executor.h>
#include <reference_backend/graph.h>
#include <reference_backend/reference_backend.h>
#include <reference_backend/versions.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/platform/platform.h>

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace executorch::runtime;

// Silence ExecuTorch's log: every rejected blob logs a line, which would
// dominate the fuzzing time.
extern "C" void et_pal_emit_log_message(et_timestamp_t, et_pal_log_level_t, const char*, const char*, size_t,
                                        const char*, size_t) {}

namespace {

void repair_checksum(std::vector<uint8_t>& blob) {
  if (blob.size() < backend_kit::kHeaderFixedLength) return;
  if (std::memcmp(blob.data(), backend_kit::kHeaderMagic, 4) != 0) return;
  const size_t header_length = blob[4] | (blob[5] << 8);
  uint64_t payload_size = 0;
  for (int i = 7; i >= 0; --i) payload_size = (payload_size << 8) | blob[24 + i];
  if (header_length < backend_kit::kHeaderFixedLength || header_length > blob.size() ||
      payload_size > blob.size() - header_length) {
    return;
  }
  const uint32_t crc = backend_kit::blob_checksum(blob.data(), header_length, payload_size);
  for (int i = 0; i < 4; ++i) blob[32 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

void run_small_graph(const std::vector<uint8_t>& blob) {
  auto j = reference_backend::judge_blob(blob.data(), blob.size(), reference_backend::runtime_versions());
  if (j.verdict != reference_backend::Verdict::kCompatible &&
      j.verdict != reference_backend::Verdict::kCompatibleReexportRecommended) {
    return;
  }
  reference_backend::Graph graph;
  std::string error;
  if (!reference_backend::parse_graph(blob.data() + j.header.header_length, j.header.payload_size,
                                      j.header.blob_format_minor, graph, error)) {
    return;
  }
  // Named data (format 1.2) comes from the program's NamedDataMap, which
  // this harness has none of: init() refused such blobs already.
  if (!graph.named.empty()) return;
  uint64_t total = 0;
  for (const auto& v : graph.values) total += v.numel;
  if (total > (1u << 16)) return;  // keep each run fast
  std::vector<std::vector<float>> in(graph.inputs.size()), out(graph.outputs.size());
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].assign(graph.values[graph.inputs[i]].numel + 1, 0.5f);
    in_ptrs.push_back(in[i].data());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].assign(graph.values[graph.outputs[i]].numel + 1, 0.0f);
    out_ptrs.push_back(out[i].data());
  }
  reference_backend::Executor executor(std::move(graph));
  executor.run(in_ptrs.data(), out_ptrs.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int registered = reference_backend_register();
  if (registered != 0) std::abort();
  static BackendInterface* backend = get_backend_class(reference_backend::kBackendId);

  std::vector<uint8_t> blob(data, data + size);
  repair_checksum(blob);
  alignas(16) static uint8_t pool[1 << 12];
  MemoryAllocator allocator(sizeof(pool), pool);
  BackendInitContext context(&allocator);
  FreeableBuffer buffer(blob.data(), blob.size(), nullptr);
  auto handle = backend->init(context, &buffer, ArrayRef<CompileSpec>());
  if (handle.ok()) {
    backend->destroy(*handle);
    run_small_graph(blob);
  }
  return 0;
}
