// The blob portability probe: runs one reference backend blob through ExecuTorch's BackendInterface
// (init, execute, destroy) with the blob placed at each offset 0..7 from a 64-byte aligned address,
// so that its constant section is 4-byte aligned at some offsets (read in place) and not at the
// others (copied), as docs/blob-header.md says. For each offset it prints one line:
//
//   offset <n> <init error code> <execute error code> <output floats as 8 hex digits each>
//
//   blob_probe BLOB_FILE IN_ROWS IN_COLS OUT_ROWS OUT_COLS < inputs (IN_ROWS*IN_COLS hex float bits)
//
// Built with -fsanitize=alignment (UBSan, no recovery), a typed access at a misaligned address in the
// backend's code stops the probe with UBSan's report.
#include <reference_backend/reference_backend.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using namespace executorch::runtime;

namespace {

constexpr size_t kOffsets = 8;
constexpr size_t kBaseAlignment = 64;

std::vector<uint8_t> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One init/execute/destroy of `blob` placed at `offset`; prints its line.
void run_at(BackendInterface* backend, const std::vector<uint8_t>& blob, size_t offset,
            std::vector<float>& in, SizesType in_rows, SizesType in_cols, SizesType out_rows,
            SizesType out_cols) {
  std::vector<uint8_t> storage(blob.size() + kBaseAlignment + kOffsets);
  const uintptr_t start = reinterpret_cast<uintptr_t>(storage.data());
  const size_t pad = (kBaseAlignment - start % kBaseAlignment) % kBaseAlignment;
  uint8_t* placed = storage.data() + pad + offset;
  std::memcpy(placed, blob.data(), blob.size());

  alignas(16) static uint8_t pool[1 << 16];
  MemoryAllocator allocator(sizeof(pool), pool);
  BackendInitContext init_context(&allocator);
  FreeableBuffer buffer(placed, blob.size(), nullptr);
  auto handle = backend->init(init_context, &buffer, ArrayRef<CompileSpec>());
  if (!handle.ok()) {
    std::printf("offset %zu %#x -\n", offset, static_cast<unsigned>(handle.error()));
    return;
  }
  SizesType in_sizes[2] = {in_rows, in_cols};
  SizesType out_sizes[2] = {out_rows, out_cols};
  std::vector<float> out(static_cast<size_t>(out_rows) * out_cols, 0.0f);
  TensorImpl in_impl(ScalarType::Float, 2, in_sizes, in.data());
  TensorImpl out_impl(ScalarType::Float, 2, out_sizes, out.data());
  EValue in_value{Tensor(&in_impl)};
  EValue out_value{Tensor(&out_impl)};
  EValue* args[2] = {&in_value, &out_value};
  BackendExecutionContext execute_context;
  const Error error = backend->execute(execute_context, *handle, Span<EValue*>(args, 2));
  backend->destroy(*handle);
  std::printf("offset %zu 0 %#x", offset, static_cast<unsigned>(error));
  for (float f : out) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    std::printf(" %08x", bits);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s BLOB_FILE IN_ROWS IN_COLS OUT_ROWS OUT_COLS < inputs\n", argv[0]);
    return 64;
  }
  runtime_init();
  const std::vector<uint8_t> blob = read_file(argv[1]);
  const auto in_rows = static_cast<SizesType>(std::atoi(argv[2]));
  const auto in_cols = static_cast<SizesType>(std::atoi(argv[3]));
  const auto out_rows = static_cast<SizesType>(std::atoi(argv[4]));
  const auto out_cols = static_cast<SizesType>(std::atoi(argv[5]));
  std::vector<float> in(static_cast<size_t>(in_rows) * in_cols);
  for (float& f : in) {
    unsigned bits = 0;
    if (std::scanf("%x", &bits) != 1) {
      std::fprintf(stderr, "blob_probe: fewer than %zu input floats on stdin\n", in.size());
      return 65;
    }
    const uint32_t b = bits;
    std::memcpy(&f, &b, sizeof f);
  }
  const int registered = reference_backend_register_linked(PROBE_EXECUTORCH_VERSION);
  BackendInterface* backend = get_backend_class("ReferenceBackend");
  if (registered != 0 || backend == nullptr) {
    std::fprintf(stderr, "blob_probe: the reference backend did not register (%#x)\n", registered);
    return 70;
  }
  for (size_t offset = 0; offset < kOffsets; ++offset) {
    run_at(backend, blob, offset, in, in_rows, in_cols, out_rows, out_cols);
  }
  return 0;
}
