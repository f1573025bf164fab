// cpp_runner: loads a .pte through ExecuTorch's standard Module API, runs one
// method on float inputs and prints its outputs.
//
//   cpp_runner MODEL.pte [--data FILE.ptd ...] [--mmap] [--method NAME]
//              [--inputs FILE] [VALUE ...]
//
// --data gives a .ptd file holding data the program keeps outside the .pte
// (named data, external weights); repeat it for several files. --mmap maps
// the files instead of reading them into memory, so that processes and
// programs loading the same .ptd share its pages. Input values (whitespace-separated floats, from FILE and/or
// the command line) fill the method's float inputs in order, each with the shape the program declares.
// Outputs print as "output I shape [D, ...]: V V ...".
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/backend/interface.h>

#ifdef RUNNER_EXPLICIT_REGISTRATION
#include <reference_backend/reference_backend.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using executorch::extension::Module;
using executorch::runtime::Error;
using executorch::runtime::EValue;

namespace {

void print_registered_backends() {
  std::printf("registered backends:");
  const size_t n = executorch::runtime::get_num_registered_backends();
  for (size_t i = 0; i < n; ++i) {
    auto name = executorch::runtime::get_backend_name(i);
    if (name.ok()) std::printf(" %s", *name);
  }
  std::printf("\n");
}

int usage() {
  std::fprintf(stderr, "usage: cpp_runner MODEL.pte [--data FILE.ptd ...] [--mmap] [--method NAME] "
                       "[--inputs FILE] [VALUE ...]\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef RUNNER_EXPLICIT_REGISTRATION
  // Static archive: nothing references the library's static initializer, so
  // the linker drops it; register explicitly instead.
  if (reference_backend_register() != 0) {
    std::fprintf(stderr, "error: reference_backend_register() failed\n");
  }
#endif
  if (argc < 2) return usage();
  std::string model = argv[1];
  std::string method = "forward";
  std::vector<std::string> data_files;
  Module::LoadMode load_mode = Module::LoadMode::File;
  std::vector<float> values;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--data" && i + 1 < argc) {
      data_files.push_back(argv[++i]);
    } else if (arg == "--mmap") {
      load_mode = Module::LoadMode::Mmap;
    } else if (arg == "--method" && i + 1 < argc) {
      method = argv[++i];
    } else if (arg == "--inputs" && i + 1 < argc) {
      std::ifstream file(argv[++i]);
      if (!file) {
        std::fprintf(stderr, "error: cannot read inputs file %s\n", argv[i]);
        return 66;
      }
      float v;
      while (file >> v) values.push_back(v);
    } else {
      char* end = nullptr;
      const float v = std::strtof(arg.c_str(), &end);
      if (end == arg.c_str() || *end != '\0') return usage();
      values.push_back(v);
    }
  }
  print_registered_backends();

  // Module(pte, ptd files): the program's NamedDataMap then covers the
  // named data inside the .pte and in every file given.
  Module module(model, data_files, load_mode);
  const Error loaded = module.load_method(method);
  if (loaded != Error::Ok) {
    std::fprintf(stderr, "error: loading method '%s' of %s failed with error 0x%x\n", method.c_str(),
                 model.c_str(), static_cast<unsigned>(loaded));
    return 2;
  }
  auto meta = module.method_meta(method);
  if (!meta.ok()) return 2;

  std::vector<executorch::extension::TensorPtr> tensors;
  std::vector<EValue> inputs;
  size_t used = 0;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    auto info = meta->input_tensor_meta(i);
    if (!info.ok() || info->scalar_type() != executorch::aten::ScalarType::Float) {
      std::fprintf(stderr, "error: input %zu is not a float tensor\n", i);
      return 65;
    }
    std::vector<executorch::aten::SizesType> sizes(info->sizes().begin(), info->sizes().end());
    size_t numel = 1;
    for (auto s : sizes) numel *= static_cast<size_t>(s);
    if (used + numel > values.size()) {
      std::fprintf(stderr, "error: input %zu needs %zu values, %zu given in all\n", i, numel, values.size());
      return 65;
    }
    tensors.push_back(executorch::extension::make_tensor_ptr(
        sizes, std::vector<float>(values.begin() + used, values.begin() + used + numel)));
    used += numel;
    inputs.emplace_back(tensors.back());
  }
  if (used != values.size()) {
    std::fprintf(stderr, "error: %zu values given, the inputs take %zu\n", values.size(), used);
    return 65;
  }

  auto outputs = module.execute(method, inputs);
  if (!outputs.ok()) {
    std::fprintf(stderr, "error: executing '%s' failed with error 0x%x\n", method.c_str(),
                 static_cast<unsigned>(outputs.error()));
    return 3;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const auto& out = (*outputs)[i];
    if (!out.isTensor()) continue;
    const auto& t = out.toTensor();
    std::printf("output %zu shape [", i);
    for (ssize_t d = 0; d < t.dim(); ++d) std::printf(d ? ", %d" : "%d", static_cast<int>(t.size(d)));
    std::printf("]:");
    const float* data = t.const_data_ptr<float>();
    for (ssize_t k = 0; k < t.numel(); ++k) std::printf(" %.9g", data[k]);
    std::printf("\n");
  }
  return 0;
}
