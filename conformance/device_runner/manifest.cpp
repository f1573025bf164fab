// Reading the line-based manifest (manifest.h). A line-based format, not
// JSON: the ExecuTorch SDK ships no JSON library and a runner for a device
// should need nothing beyond it and the vendor's library.
#include "manifest.h"

#include <fstream>
#include <sstream>

namespace conformance_runner {

namespace {

const char* const kMagic = "executorch-conformance-bundle";
const int kFormat = 1;

bool fail(std::string& error, int line, const std::string& why) {
  error = "manifest line " + std::to_string(line) + ": " + why;
  return false;
}

}  // namespace

bool read_manifest(const std::string& path, std::vector<Entry>& entries, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot open the manifest " + path;
    return false;
  }
  std::string line;
  int number = 0;
  bool open = false;
  Entry current;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (number == 1 || (entries.empty() && !open && key == kMagic)) {
      int format = 0;
      if (key != kMagic || !(words >> format))
        return fail(error, number, "not an executorch-conformance bundle");
      if (format != kFormat) {
        return fail(error, number,
                    "bundle format " + std::to_string(format) + ", this runner reads format " +
                        std::to_string(kFormat));
      }
      continue;
    }
    if (key == "entry") {
      if (open) return fail(error, number, "entry inside entry " + current.id + " (missing 'end')");
      current = Entry();
      if (!(words >> current.id >> current.kind)) return fail(error, number, "expected 'entry <id> <kind>'");
      open = true;
      continue;
    }
    if (!open) return fail(error, number, "'" + key + "' outside an entry");
    if (key == "end") {
      entries.push_back(current);
      open = false;
    } else if (key == "what") {
      std::getline(words >> std::ws, current.what);
    } else if (key == "program") {
      Program p;
      if (!(words >> p.name >> p.file)) return fail(error, number, "expected 'program <name> <file>'");
      current.programs.push_back(p);
    } else if (key == "data") {
      if (!(words >> current.data)) return fail(error, number, "expected 'data <file>'");
    } else if (key == "inputs") {
      if (!(words >> current.inputs)) return fail(error, number, "expected 'inputs <file>'");
    } else if (key == "copies") {
      if (!(words >> current.copies) || current.copies < 1)
        return fail(error, number, "expected 'copies <n>=1..>'");
    } else if (key == "threads") {
      if (!(words >> current.threads) || current.threads < 1 || current.threads > 256)
        return fail(error, number, "expected 'threads <n=1..256>'");
    } else if (key == "iterations") {
      if (!(words >> current.iterations) || current.iterations < 1)
        return fail(error, number, "expected 'iterations <n>=1..>'");
    } else if (key == "share_arenas") {
      current.share_arenas = true;
    } else if (key == "round") {
      Round r;
      if (!(words >> r.index >> r.name >> r.file))
        return fail(error, number, "expected 'round <i> <name> <file>'");
      current.rounds.push_back(r);
    } else {
      return fail(error, number, "unknown directive '" + key + "'");
    }
  }
  if (open) return fail(error, number, "entry " + current.id + " has no 'end'");
  if (number == 0) {
    error = "the manifest " + path + " is empty";
    return false;
  }
  return true;
}

}  // namespace conformance_runner
