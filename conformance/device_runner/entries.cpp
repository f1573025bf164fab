// The entry kinds of a bundle (manifest.h):
//   describe  the registered backends and whether each is available, and the
//             shared libraries mapped into this process (/proc/self/maps)
//   execute   load the program (with its .ptd) and execute forward once
//   try_load  load the program, and with inputs execute it: the error, or the output count
//   repeat    load every program `copies` times, all alive together, and execute
//             each once per round with that round's inputs
//   concurrent `threads` threads at once, thread t loading its own Module of
//             input set t mod sets and executing it `iterations` times; the
//             outputs of all its executes in one tensor file per thread
//   methods   load one program, every method its calls name (in order of first
//             call), all alive together (sharing their arenas with share_arenas),
//             then execute the calls in order: call k runs method <name> of round k;
//             the outputs and the seconds of each call
#include "entries.h"

#include "tensors.h"

#include <executorch/extension/module/module.h>
#include <executorch/runtime/backend/interface.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <type_traits>

namespace conformance_runner {

using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;

namespace {
int steps_fd = -1;
}  // namespace

bool open_steps(const std::string& path) {
  steps_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  return steps_fd >= 0;
}

void step(const std::string& what) {
  std::string line = what;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line += '\n';
  (void)!::write(steps_fd, line.data(), line.size());
}

namespace {

std::string hex(Error e) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(e));
  return buf;
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// Accumulates a result file and writes it at the end.
struct Result {
  std::ostringstream text;

  void error(const std::string& at, const std::string& message) {
    text << "status error\nstep " << one_line(at) << "\nerror " << one_line(message) << "\n";
  }

  bool write(const std::string& path, std::string& err) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text.str();
    out.flush();
    if (!out) {
      err = "cannot write " + path + ": " + std::strerror(errno ? errno : EIO);
      return false;
    }
    return true;
  }
};

std::unique_ptr<Module> open_module(const std::string& dir, const std::string& file,
                                    const std::string& data) {
  std::vector<std::string> data_files;
  if (!data.empty()) data_files.push_back(dir + "/" + data);
  return std::make_unique<Module>(dir + "/" + file, data_files, Module::LoadMode::File);
}

std::vector<EValue> as_values(const std::vector<TensorPtr>& tensors) {
  std::vector<EValue> values;
  for (const auto& t : tensors) values.emplace_back(t);
  return values;
}

void describe(Result& result) {
  const size_t n = executorch::runtime::get_num_registered_backends();
  for (size_t i = 0; i < n; ++i) {
    auto name = executorch::runtime::get_backend_name(i);
    if (!name.ok()) continue;
    step(std::string("is_available() of ") + *name);
    auto* backend = executorch::runtime::get_backend_class(*name);
    result.text << "registered " << *name << " " << (backend != nullptr && backend->is_available() ? 1 : 0)
                << "\n";
  }
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> seen;
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (seen.insert(path).second) result.text << "mapped " << path << "\n";
  }
  result.text << "status ok\n";
}

void execute(const std::string& dir, const Entry& entry, bool trial, Result& result, const std::string& out) {
  if (entry.programs.empty()) return result.error("bundle", "entry " + entry.id + " names no program");
  std::string error;
  std::vector<TensorPtr> inputs;
  if (!entry.inputs.empty()) {
    inputs = read_tensors(dir + "/" + entry.inputs, error);
    if (!error.empty()) return result.error("bundle", error);
  }
  const std::string load = "load of " + entry.what;
  step(load);
  auto module = open_module(dir, entry.programs[0].file, entry.data);
  const Error loaded = module->load_method("forward");
  if (loaded != Error::Ok)
    return result.error(load, "loading method 'forward' failed with error " + hex(loaded));
  if (trial && entry.inputs.empty()) {
    result.text << "status ok\noutputs none\n";
    return;
  }
  const std::string run = "execute of " + entry.what;
  step(run);
  auto outputs = module->execute("forward", as_values(inputs));
  if (!outputs.ok())
    return result.error(run, "executing method 'forward' failed with error " + hex(outputs.error()));
  if (!trial && !write_tensors(out, *outputs, error)) return result.error("writing the outputs", error);
  result.text << "status ok\noutputs " << outputs->size() << "\n";
}

void repeat(const std::string& dir, const Entry& entry, Result& result) {
  struct Loaded {
    std::string name;
    int copy;
    std::unique_ptr<Module> module;
  };
  std::vector<Loaded> loaded;
  for (const auto& program : entry.programs) {
    for (int copy = 0; copy < entry.copies; ++copy) {
      const std::string what = "load of sample '" + program.name + "' (copy " + std::to_string(copy + 1) +
                               " of " + std::to_string(entry.copies) + ")";
      step(what);
      auto module = open_module(dir, program.file, "");
      const Error e = module->load_method("forward");
      if (e != Error::Ok) return result.error(what, "loading method 'forward' failed with error " + hex(e));
      loaded.push_back({program.name, copy, std::move(module)});
    }
  }
  int last_round = -1;
  for (const auto& r : entry.rounds) last_round = r.index > last_round ? r.index : last_round;
  for (int round = 0; round <= last_round; ++round) {
    for (auto& m : loaded) {
      const Round* inputs_of = nullptr;
      for (const auto& r : entry.rounds) {
        if (r.index == round && r.name == m.name) inputs_of = &r;
      }
      if (inputs_of == nullptr) continue;
      std::string error;
      auto inputs = read_tensors(dir + "/" + inputs_of->file, error);
      if (!error.empty()) return result.error("bundle", error);
      const std::string what = "execute of sample '" + m.name + "' (copy " + std::to_string(m.copy + 1) +
                               ", round " + std::to_string(round + 1) + ")";
      step(what);
      auto outputs = m.module->execute("forward", as_values(inputs));
      if (!outputs.ok())
        return result.error(what, "executing method 'forward' failed with error " + hex(outputs.error()));
      const std::string file =
          entry.id + "-" + m.name + "-" + std::to_string(m.copy) + "-" + std::to_string(round) + ".bin";
      if (!write_tensors(dir + "/results/" + file, *outputs, error))
        return result.error("writing the outputs", error);
      result.text << "output " << m.name << " " << m.copy << " " << round << " " << file << "\n";
    }
  }
  result.text << "status ok\n";
}

// One thread of a concurrent entry: its input set, what it did, and the outputs of every execute.
struct Worker {
  const Round* set = nullptr;
  int index = 0;
  std::string step;  // where it stopped, if it failed
  std::string error;  // empty: every execute succeeded
  std::vector<TensorPtr> kept;
  std::vector<EValue> outputs;
};

// Waits until every thread has arrived, so that the threads' loads and executes overlap.
class StartLine {
 public:
  explicit StartLine(int n) : waiting_(n) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--waiting_ == 0) {
      go_.notify_all();
    } else {
      go_.wait(lock, [this] { return waiting_ == 0; });
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable go_;
  int waiting_;
};

void run_worker(const std::string& dir, const Entry& entry, Worker& w, StartLine& start) {
  const Program* program = nullptr;
  for (const auto& p : entry.programs) {
    if (p.name == w.set->name) program = &p;
  }
  std::string error;
  auto inputs = read_tensors(dir + "/" + w.set->file, error);
  std::vector<std::vector<uint8_t>> pristine;
  for (const auto& t : inputs) {
    const auto* bytes = static_cast<const uint8_t*>(t->const_data_ptr());
    pristine.emplace_back(bytes, bytes + t->nbytes());
  }
  const std::string of = "sample '" + w.set->name + "' (thread " + std::to_string(w.index + 1) + " of " +
                         std::to_string(entry.threads) + ", input set " + std::to_string(w.set->index + 1) +
                         ")";
  start.arrive_and_wait();
  if (program == nullptr || !error.empty()) {
    w.step = "bundle";
    w.error = program == nullptr ? "input set of an unknown program '" + w.set->name + "'" : error;
    return;
  }
  auto module = open_module(dir, program->file, "");
  const Error loaded = module->load_method("forward");
  if (loaded != Error::Ok) {
    w.step = "load of " + of;
    w.error = "loading method 'forward' failed with error " + hex(loaded);
    return;
  }
  for (int i = 0; i < entry.iterations; ++i) {
    for (size_t k = 0; k < inputs.size(); ++k) {  // a runtime that writes its inputs is RT-8's to judge
      if (!pristine[k].empty())
        std::memcpy(inputs[k]->mutable_data_ptr(), pristine[k].data(), pristine[k].size());
    }
    auto outputs = module->execute("forward", as_values(inputs));
    if (!outputs.ok()) {
      w.step = "execute " + std::to_string(i + 1) + " of " + of;
      w.error = "executing method 'forward' failed with error " + hex(outputs.error());
      return;
    }
    for (const EValue& v : *outputs) {
      if (v.isTensor()) {
        w.kept.push_back(executorch::extension::clone_tensor_ptr(v.toTensor()));
        w.outputs.emplace_back(w.kept.back());
      } else {
        w.outputs.push_back(v);
      }
    }
  }
}

void concurrent(const std::string& dir, const Entry& entry, Result& result) {
  if (entry.rounds.empty()) return result.error("bundle", "entry " + entry.id + " names no input set");
  std::vector<Worker> workers(entry.threads);
  for (int t = 0; t < entry.threads; ++t) {
    workers[t].index = t;
    workers[t].set = &entry.rounds[t % entry.rounds.size()];
  }
  step("concurrent loads and executes of " + entry.what + " (" + std::to_string(entry.threads) +
       " threads x " + std::to_string(entry.iterations) + " executes)");
  StartLine start(entry.threads);
  std::vector<std::thread> threads;
  for (auto& w : workers)
    threads.emplace_back([&dir, &entry, &w, &start] { run_worker(dir, entry, w, start); });
  for (auto& thread : threads) thread.join();
  for (const auto& w : workers) {
    if (!w.error.empty()) return result.error(w.step, w.error);
  }
  for (const auto& w : workers) {
    std::string error;
    const std::string file = entry.id + "-thread-" + std::to_string(w.index) + ".bin";
    if (!write_tensors(dir + "/results/" + file, w.outputs, error))
      return result.error("writing the outputs", error);
    result.text << "output " << w.set->name << " " << w.index << " " << w.set->index << " " << file << "\n";
  }
  result.text << "status ok\n";
}

// A Module whose methods share their memory-planned arenas (Module's share_memory_arenas), or null when
// the ExecuTorch this runner is built against has no such Module constructor.
template <typename M>
std::unique_ptr<M> open_sharing(const std::string& path, std::vector<std::string> data_files) {
  using executorch::runtime::EventTracer;
  using executorch::runtime::MemoryAllocator;
  if constexpr (std::is_constructible_v<M, const std::string&, std::vector<std::string>, typename M::LoadMode,
                                        std::unique_ptr<EventTracer>, std::unique_ptr<MemoryAllocator>,
                                        std::unique_ptr<MemoryAllocator>, bool>) {
    return std::make_unique<M>(path, std::move(data_files), M::LoadMode::File, nullptr, nullptr, nullptr,
                               true);
  } else {
    return nullptr;
  }
}

void methods(const std::string& dir, const Entry& entry, Result& result) {
  if (entry.programs.empty()) return result.error("bundle", "entry " + entry.id + " names no program");
  if (entry.rounds.empty()) return result.error("bundle", "entry " + entry.id + " names no call");
  std::vector<Round> calls = entry.rounds;
  std::stable_sort(calls.begin(), calls.end(),
                   [](const Round& a, const Round& b) { return a.index < b.index; });
  const std::string& file = entry.programs[0].file;
  std::unique_ptr<Module> module;
  if (entry.share_arenas) {
    std::vector<std::string> data_files;
    if (!entry.data.empty()) data_files.push_back(dir + "/" + entry.data);
    module = open_sharing<Module>(dir + "/" + file, std::move(data_files));
    if (!module)
      return result.error(
          "load of " + entry.what,
          "this runner is built against an ExecuTorch whose Module cannot share memory arenas "
          "between methods (share_memory_arenas); rebuild it against executorch 1.5 or later");
  } else {
    module = open_module(dir, file, entry.data);
  }
  std::set<std::string> loaded;
  for (const auto& call : calls) {
    if (!loaded.insert(call.name).second) continue;
    const std::string what = "load of method '" + call.name + "' of " + entry.what;
    step(what);
    const Error e = module->load_method(call.name);
    if (e != Error::Ok)
      return result.error(what, "loading method '" + call.name + "' failed with error " + hex(e));
  }
  for (const auto& call : calls) {
    std::string error;
    auto inputs = read_tensors(dir + "/" + call.file, error);
    if (!error.empty()) return result.error("bundle", error);
    const std::string what = "execute of method '" + call.name + "' of " + entry.what + " (call " +
                             std::to_string(call.index + 1) + ")";
    step(what);
    const auto started = std::chrono::steady_clock::now();
    auto outputs = module->execute(call.name, as_values(inputs));
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    if (!outputs.ok())
      return result.error(what,
                          "executing method '" + call.name + "' failed with error " + hex(outputs.error()));
    const std::string out = entry.id + "-call-" + std::to_string(call.index) + ".bin";
    if (!write_tensors(dir + "/results/" + out, *outputs, error))
      return result.error("writing the outputs", error);
    result.text << "output " << call.name << " 0 " << call.index << " " << out << "\n";
    result.text << "seconds " << call.index << " " << took.count() << "\n";
  }
  result.text << "status ok\n";
}

}  // namespace

bool run_entry(const std::string& dir, const Entry& entry, std::string& error) {
  Result result;
  const std::string base = dir + "/results/" + entry.id;
  if (entry.kind == "describe") {
    describe(result);
  } else if (entry.kind == "execute") {
    execute(dir, entry, false, result, base + ".bin");
  } else if (entry.kind == "try_load") {
    execute(dir, entry, true, result, base + ".bin");
  } else if (entry.kind == "repeat") {
    repeat(dir, entry, result);
  } else if (entry.kind == "concurrent") {
    concurrent(dir, entry, result);
  } else if (entry.kind == "methods") {
    methods(dir, entry, result);
  } else {
    result.error("bundle", "unknown entry kind '" + entry.kind + "'");
  }
  return result.write(base + ".txt", error);
}

int run_bundle(const std::string& dir, std::string& error) {
  std::vector<Entry> entries;
  if (!read_manifest(dir + "/manifest.txt", entries, error)) return kMalformedBundle;
  const std::string results = dir + "/results";
  if (::mkdir(results.c_str(), 0755) != 0 && errno != EEXIST) {
    error = "cannot create " + results + ": " + std::strerror(errno);
    return kCannotWrite;
  }
  if (!open_steps(results + "/steps.txt")) {
    error = "cannot create " + results + "/steps.txt: " + std::strerror(errno);
    return kCannotWrite;
  }
  for (const auto& entry : entries) {
    if (!run_entry(dir, entry, error)) return kCannotWrite;
  }
  return kOk;
}

}  // namespace conformance_runner
