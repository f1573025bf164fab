// concurrency MODEL.pte THREADS RUNS
// Each thread loads the program into its own Module and executes "forward"
// RUNS times on inputs of its own; every output must equal the output the
// same inputs give when run alone on the main thread first. The threads
// start executing together (after every one has loaded its method), and the
// most executions in flight at once is printed, so a run that happened to be
// serial shows.
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using executorch::extension::Module;
using executorch::runtime::Error;
using executorch::runtime::EValue;

namespace {

struct Case {
  std::vector<std::vector<float>> inputs;
  std::vector<std::vector<float>> expected;
};

std::vector<std::vector<float>> run_once(Module& module, const std::vector<std::vector<float>>& values,
                                         bool& ok) {
  auto meta = module.method_meta("forward");
  std::vector<executorch::extension::TensorPtr> tensors;
  std::vector<EValue> inputs;
  for (size_t i = 0; i < meta->num_inputs(); ++i) {
    auto info = meta->input_tensor_meta(i);
    std::vector<executorch::aten::SizesType> sizes(info->sizes().begin(), info->sizes().end());
    tensors.push_back(executorch::extension::make_tensor_ptr(sizes, values[i]));
    inputs.emplace_back(tensors.back());
  }
  auto result = module.execute("forward", inputs);
  std::vector<std::vector<float>> outputs;
  ok = result.ok();
  if (!ok) return outputs;
  for (const auto& out : *result) {
    const auto& t = out.toTensor();
    outputs.emplace_back(t.const_data_ptr<float>(), t.const_data_ptr<float>() + t.numel());
  }
  return outputs;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: concurrency MODEL.pte THREADS RUNS\n");
    return 64;
  }
  const std::string path = argv[1];
  const int threads = std::atoi(argv[2]);
  const int runs = std::atoi(argv[3]);

  // Expected outputs, computed alone on this thread.
  Module reference(path);
  if (reference.load_method("forward") != Error::Ok) return 2;
  auto meta = reference.method_meta("forward");
  std::vector<Case> cases(threads);
  for (int t = 0; t < threads; ++t) {
    for (size_t i = 0; i < meta->num_inputs(); ++i) {
      auto info = meta->input_tensor_meta(i);
      size_t numel = 1;
      for (auto s : info->sizes()) numel *= static_cast<size_t>(s);
      std::vector<float> v(numel);
      for (size_t k = 0; k < numel; ++k) v[k] = std::sin(0.37f * (k + 1) * (t + 1) + i);
      cases[t].inputs.push_back(std::move(v));
    }
    bool ok = false;
    cases[t].expected = run_once(reference, cases[t].inputs, ok);
    if (!ok) return 2;
  }

  std::atomic<int> failures{0};
  std::atomic<int> executions{0};
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  // Start barrier: no thread executes before all have loaded (C++17 has no std::barrier).
  std::mutex mutex;
  std::condition_variable all_loaded;
  int loaded = 0;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Module module(path);  // each thread loads the program itself
      const bool ready = module.load_method("forward") == Error::Ok;
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (++loaded == threads) all_loaded.notify_all();
        all_loaded.wait(lock, [&] { return loaded == threads; });
      }
      if (!ready) {
        ++failures;
        return;
      }
      for (int r = 0; r < runs; ++r) {
        bool ok = false;
        const int now = ++in_flight;
        int most = most_in_flight.load();
        while (now > most && !most_in_flight.compare_exchange_weak(most, now)) {
        }
        auto outputs = run_once(module, cases[t].inputs, ok);
        --in_flight;
        ++executions;
        if (!ok || outputs != cases[t].expected) ++failures;
      }
    });
  }
  for (auto& th : pool) th.join();
  std::printf("%d threads x %d runs: %d executions, %d wrong or failed; at most %d executing at once\n",
              threads, runs, executions.load(), failures.load(), most_in_flight.load());
  return failures.load() == 0 ? 0 : 1;
}
