// The bundle's manifest: a line-based text file (see docs/device-runner.md).
//
//   executorch-conformance-bundle 1
//   entry <id> <describe|execute|try_load|repeat|concurrent|methods>
//   what <free text naming the entry in step lines>
//   program <name> <file>        (repeat: several, each loaded `copies` times)
//   data <file>                  (a .ptd given with the program)
//   inputs <file>                (execute/try_load: the input tensors)
//   copies <n>                   (repeat)
//   round <index> <name> <file>  (repeat: the inputs of program <name> in round <index>;
//                                 concurrent: input set <index>, of program <name>;
//                                 methods: call <index> executes method <name> with <file>)
//   share_arenas                 (methods: the loaded methods share their memory-planned
//                                 arenas, as a program with shared mutable buffers needs)
//   threads <n>                  (concurrent: threads, thread t runs input set t mod sets)
//   iterations <n>               (concurrent: executes per thread)
//   end
//
// Files are named relative to the bundle directory and hold no spaces.
#pragma once

#include <string>
#include <vector>

namespace conformance_runner {

struct Program {
  std::string name;
  std::string file;
};

struct Round {
  int index = 0;
  std::string name;
  std::string file;
};

struct Entry {
  std::string id;
  std::string kind;
  std::string what;
  std::vector<Program> programs;
  std::string data;
  std::string inputs;
  int copies = 1;
  int threads = 1;
  int iterations = 1;
  bool share_arenas = false;
  std::vector<Round> rounds;
};

// Reads the manifest at `path`; on failure returns false with `error` naming
// the line and what is wrong with it.
bool read_manifest(const std::string& path, std::vector<Entry>& entries, std::string& error);

}  // namespace conformance_runner
